// Axis ranges and ticks for the charts where uPlot's automatic ones mislead.

/**
 * An accuracy axis: the data's range with a little room, never beyond [0, 1]. (uPlot pads a flat or nearly flat
 * series to round numbers, so one run at 89% drew an axis from 0 to 1.5: accuracies no run can have.)
 */
export function accuracyRange(min: number | null, max: number | null): [number, number] {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  const pad = Math.max(0.01, 0.1 * (max - min));
  return [Math.max(0, min - pad), Math.min(1, max + pad)];
}

/**
 * Tick steps for an axis of whole numbers (steps, examples): uPlot's own 1, 2, 2.5, 5, 10, 20, 25, … without 2.5, and
 * nothing under 1 (a few steps were labelled 2.5, 7.5, 12.5).
 */
export const WHOLE_INCREMENTS: number[] = Array.from({ length: 16 }, (_, e) => [1, 2, 2.5, 5].map((m) => m * 10 ** e))
  .flat()
  .filter(Number.isInteger);

const compact = (digits: number) => new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: digits, minimumFractionDigits: digits });

/**
 * A value axis's tick labels: short enough for the axis's room at phone width (200K, not 200,000, which was cut to
 * "00,000"), with as many decimals as the step between ticks needs to tell neighbours apart (two ticks of a flat
 * accuracy curve read 0.784 and 0.784).
 */
export function tickLabels(splits: number[]): string[] {
  const step = splits.length > 1 ? Math.abs(splits[1]! - splits[0]!) : 0;
  // One tick (a narrow range): three significant digits, not a step's decimals (0.785 read "1").
  if (step === 0)
    return splits.map((v) => (Math.abs(v) >= 10_000 ? compact(1).format(v) : Number(v.toPrecision(3)).toLocaleString('en-US', { maximumFractionDigits: 6 })));
  const decimals = (scale: number) => (step > 0 && step / scale < 1 ? Math.min(6, Math.ceil(-Math.log10(step / scale) - 1e-9)) : 0);
  const big = splits.some((v) => Math.abs(v) >= 10_000);
  const d = decimals(1);
  const format = big
    ? compact(Math.min(2, decimals(1000))).format
    : (v: number) => v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  return splits.map((v) => format(v));
}
