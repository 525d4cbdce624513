// Live line charts (uPlot): append points, redraw at most every SHOW_EVERY_MS, and
// keep at most MAX_POINTS by thinning old points so long runs stay cheap to draw.
// Marks (a dashed line and a label at an x) show where a control changed.
// Axis and grid colours come from the page's CSS variables (style.css), so the
// charts follow the system's dark mode; each chart is an image to a screen
// reader, named by a short summary of what it shows.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { chartSummary, summaryDelay } from './a11y.js';
import { tickLabels, WHOLE_INCREMENTS } from './axis.js';
import { addMark } from '../train/run-record.js';
import { drawThrottled } from './throttle.js';

const MAX_POINTS = 2000;

/** A y axis's range from its data's (the accuracy chart's stays within [0, 1]). */
export type YRange = (min: number, max: number) => [number, number];

// uPlot spans a series that stays at 0 (nothing fetched: all from the cache) from 0 to 100; 0 to 1 says nothing more came.
const defaultRange: YRange = (min, max) => (min === 0 && max === 0 ? [0, 1] : (uPlot.rangeNum(min, max, 0.1, true) as [number, number]));

const scheme = matchMedia('(prefers-color-scheme: dark)');
const colours = { axis: '', grid: '', panel: '' };
function readColours(): void {
  const css = getComputedStyle(document.documentElement);
  colours.axis = css.getPropertyValue('--chart-axis').trim() || '#3a4050';
  colours.grid = css.getPropertyValue('--chart-grid').trim() || '#0000001a';
  colours.panel = css.getPropertyValue('--panel').trim() || '#fff';
}
readColours();
const charts = new Set<uPlot>();
scheme.addEventListener('change', () => {
  readColours();
  for (const c of charts) c.redraw(false);
});

/** A series colour (#rrggbb) on a dark background: mixed 40% toward white, so a thin line keeps its contrast. */
export function onDark(hex: string): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return hex;
  return `#${m
    .slice(1)
    .map((c) =>
      Math.round(0.6 * Number.parseInt(c, 16) + 0.4 * 255)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/** Rows of mark labels a chart stacks before it leaves a label out. */
const MARK_LABEL_ROWS = 3;

export class LiveChart {
  private plot: uPlot;
  private readonly opts: uPlot.Options;
  private readonly xs: number[] = [];
  private readonly ys: number[] = [];
  private readonly marks: [number, string][] = [];
  private summaryTimer: ReturnType<typeof setTimeout> | undefined;
  private summarisedAt = -Infinity;
  private summarisedEmpty = true;
  private readonly redrawSoon: () => void;
  /** What the chart waits for while it has no points (deferred evaluation's), shown over it; empty: nothing shown. */
  private readonly emptyNote: HTMLParagraphElement;

  constructor(
    private readonly parent: HTMLElement,
    private title: string,
    private readonly xLabel: string,
    color: string,
    yRange: YRange = defaultRange,
  ) {
    const axis = { stroke: () => colours.axis, grid: { stroke: () => colours.grid }, ticks: { stroke: () => colours.grid } };
    this.opts = {
      title,
      width: parent.clientWidth || 320,
      height: 170,
      scales: {
        x: { time: false },
        y: { range: (_u, min, max) => (min == null || max == null ? [null, null] : yRange(min, max)) }, // null: no points yet
      },
      // The y axis has room for labels like 10,000 or 131.6K at any chart width.
      axes: [
        // The x axis is a step count: whole ticks only.
        { label: xLabel, incrs: WHOLE_INCREMENTS, ...axis },
        // Ticks 20 px apart at least (uPlot's 30 left a flat accuracy curve one label, a scale no one can read).
        { size: 56, space: 20, values: (_u, splits) => tickLabels(splits), ...axis },
      ],
      legend: { show: false },
      // Points are hollow: filled with the panel's colour, not uPlot's white.
      series: [{}, { stroke: () => (scheme.matches ? onDark(color) : color), width: 1.5, points: { fill: () => colours.panel } }],
      hooks: { draw: [(u) => this.drawMarks(u)] },
    };
    this.plot = this.newPlot();
    this.emptyNote = parent.appendChild(document.createElement('p'));
    this.emptyNote.className = 'chart-note';
    this.emptyNote.hidden = true;
    this.redrawSoon = drawThrottled(() => this.plot.setData([this.xs, this.ys]));
    parent.setAttribute('role', 'img');
    this.summarise();
    // Follow the container's width, so the page works from a phone to a wide screen.
    new ResizeObserver(() => {
      const width = Math.floor(parent.clientWidth);
      if (width > 0 && width !== this.plot.width) this.plot.setSize({ width, height: this.opts.height });
    }).observe(parent);
  }

  push(x: number, y: number): void {
    // NaN or ±Infinity (a diverged run's last loss) would leave uPlot no scale, and every point of the chart went.
    if (!Number.isFinite(y)) return;
    this.emptyNote.hidden = true;
    this.xs.push(x);
    this.ys.push(y);
    if (this.xs.length > MAX_POINTS) {
      // Keep every other point: the curve's shape survives, the cost stays bounded.
      for (const series of [this.xs, this.ys]) {
        let w = 0;
        for (let r = 0; r < series.length; r += 2) series[w++] = series[r]!;
        series.length = w;
      }
    }
    this.redrawSoon();
    this.summariseSoon();
  }

  /** The chart's text alternative now. */
  private summarise(): void {
    clearTimeout(this.summaryTimer);
    this.summaryTimer = undefined;
    this.summarisedAt = performance.now();
    this.summarisedEmpty = this.xs.length === 0;
    const waiting = this.xs.length === 0 && !this.emptyNote.hidden;
    this.parent.setAttribute(
      'aria-label',
      waiting ? `${this.title} chart: ${this.emptyNote.textContent}` : chartSummary(this.title, this.xLabel, this.xs, this.ys),
    );
  }

  /** Says over the empty chart why it has no points yet (a deferred evaluation's accuracy comes when the run stops); undefined: nothing. */
  waitingFor(text: string | undefined): void {
    if (this.xs.length > 0) return;
    this.emptyNote.textContent = text ?? '';
    this.emptyNote.hidden = text === undefined;
    this.summarise();
  }

  /** Whether a note stands over the empty chart. */
  get waiting(): boolean {
    return !this.emptyNote.hidden;
  }

  /**
   * At most once per SUMMARY_MS, and always the latest point in the end. A chart whose text still says "no data yet" is named
   * once the current burst of points is in (a continued run's history arrives all at once), not SUMMARY_MS later.
   */
  private summariseSoon(): void {
    if (this.summaryTimer !== undefined) return;
    const wait = summaryDelay(this.summarisedAt, this.summarisedEmpty, performance.now());
    this.summaryTimer = setTimeout(() => this.summarise(), wait);
  }

  /** Names the chart anew (images or rows per second, as the dataset is). */
  rename(title: string): void {
    this.title = title;
    const heading = this.plot.root.querySelector('.u-title');
    if (heading) heading.textContent = title;
    this.summarise();
  }

  /** The marks drawn, as "x: label" (for the tests). */
  get markLabels(): string[] {
    return this.marks.map(([x, label]) => `${x}: ${label}`);
  }

  /** A dashed vertical line at x, labelled (e.g. "group 2" where the fidelity changed). */
  mark(x: number, label: string): void {
    addMark(this.marks, x, label);
    this.plot.redraw(false);
  }

  /** Empty, as on a page just opened: a new plot, since uPlot keeps its last scales when its data is emptied. */
  clear(): void {
    this.xs.length = 0;
    this.ys.length = 0;
    this.marks.length = 0;
    this.emptyNote.hidden = true;
    charts.delete(this.plot);
    this.plot.destroy();
    this.plot = this.newPlot();
    this.summarise();
  }

  private newPlot(): uPlot {
    const width = Math.floor(this.parent.clientWidth) || this.opts.width;
    const plot = new uPlot({ ...this.opts, title: this.title, width }, [this.xs, this.ys], this.parent);
    charts.add(plot);
    return plot;
  }

  private drawMarks(u: uPlot): void {
    const { ctx, bbox } = u;
    ctx.save();
    ctx.strokeStyle = ctx.fillStyle = '#8a8f98';
    ctx.setLineDash([4, 3]);
    ctx.font = `${Math.round(10 * devicePixelRatio)}px sans-serif`;
    // uPlot leaves its axes' alignment on the context (right-aligned): a label then ended at its start, over its own line and
    // the labels before it, which the placement below had counted as free.
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    // Labels that would overlap go a row lower; past the last row, a mark keeps its line and loses its label.
    const rowEnds: number[] = [];
    const pad = 3 * devicePixelRatio;
    const right = bbox.left + bbox.width;
    for (const [at, label] of [...this.marks].sort((a, b) => a[0] - b[0])) {
      const x = Math.round(u.valToPos(at, 'x', true));
      if (x < bbox.left || x > right) continue;
      ctx.beginPath();
      ctx.moveTo(x, bbox.top);
      ctx.lineTo(x, bbox.top + bbox.height);
      ctx.stroke();
      // A label that would run past the plot's right edge (over the axis or out of the canvas) goes left of its line.
      const width = ctx.measureText(label).width;
      const start = x + pad + width + pad > right ? Math.max(bbox.left, x - pad - width) : x + pad;
      let row = rowEnds.findIndex((end) => end <= start);
      if (row < 0 && rowEnds.length < MARK_LABEL_ROWS) row = rowEnds.push(0) - 1;
      if (row < 0) continue;
      rowEnds[row] = start + width + 2 * pad;
      ctx.fillText(label, start, bbox.top + (10 + 12 * row) * devicePixelRatio);
    }
    ctx.restore();
  }
}
