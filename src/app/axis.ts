// Axis ranges for the charts where uPlot's automatic one misleads.

/**
 * An accuracy axis: the data's range with a little room, never beyond [0, 1]. (uPlot pads a flat or nearly flat
 * series to round numbers, so one run at 89% drew an axis from 0 to 1.5: accuracies no run can have.)
 */
export function accuracyRange(min: number | null, max: number | null): [number, number] {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  const pad = Math.max(0.01, 0.1 * (max - min));
  return [Math.max(0, min - pad), Math.min(1, max + pad)];
}
