// Live line charts (uPlot): append points, redraw at most once per frame, and
// keep at most MAX_POINTS by thinning old points so long runs stay cheap to draw.
// Marks (a dashed line and a label at an x) show where a control changed.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const MAX_POINTS = 2000;

export class LiveChart {
  private readonly plot: uPlot;
  private readonly xs: number[] = [];
  private readonly ys: number[] = [];
  private pending = false;
  private readonly marks: { x: number; label: string }[] = [];

  constructor(parent: HTMLElement, title: string, xLabel: string, color: string) {
    const opts: uPlot.Options = {
      title,
      width: parent.clientWidth || 320,
      height: 170,
      scales: { x: { time: false } },
      // The y axis gets room for labels like 10,000 at any chart width.
      axes: [{ label: xLabel }, { size: 56 }],
      legend: { show: false },
      series: [{}, { stroke: color, width: 1.5 }],
      hooks: { draw: [(u) => this.drawMarks(u)] },
    };
    this.plot = new uPlot(opts, [this.xs, this.ys], parent);
    // Follow the container's width, so the page works from a phone to a wide screen.
    new ResizeObserver(() => {
      const width = Math.floor(parent.clientWidth);
      if (width > 0 && width !== this.plot.width) this.plot.setSize({ width, height: opts.height });
    }).observe(parent);
  }

  push(x: number, y: number): void {
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
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.plot.setData([this.xs, this.ys]);
    });
  }

  /** The marks drawn, as "x: label" (for the tests). */
  get markLabels(): string[] {
    return this.marks.map((m) => `${m.x}: ${m.label}`);
  }

  /** A dashed vertical line at x, labelled (e.g. "group 2" where the fidelity changed). */
  mark(x: number, label: string): void {
    this.marks.push({ x, label });
    this.plot.redraw(false);
  }

  clear(): void {
    this.xs.length = 0;
    this.ys.length = 0;
    this.marks.length = 0;
    this.plot.setData([this.xs, this.ys]);
  }

  private drawMarks(u: uPlot): void {
    const { ctx, bbox } = u;
    ctx.save();
    ctx.strokeStyle = ctx.fillStyle = '#8a8f98';
    ctx.setLineDash([4, 3]);
    ctx.font = `${Math.round(10 * devicePixelRatio)}px sans-serif`;
    for (const m of this.marks) {
      const x = Math.round(u.valToPos(m.x, 'x', true));
      if (x < bbox.left || x > bbox.left + bbox.width) continue;
      ctx.beginPath();
      ctx.moveTo(x, bbox.top);
      ctx.lineTo(x, bbox.top + bbox.height);
      ctx.stroke();
      ctx.fillText(m.label, x + 3, bbox.top + 10 * devicePixelRatio);
    }
    ctx.restore();
  }
}
