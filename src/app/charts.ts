// Live line charts (uPlot): append points, redraw at most once per frame, and
// keep at most MAX_POINTS by thinning old points so long runs stay cheap to draw.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const MAX_POINTS = 2000;

export class LiveChart {
  private readonly plot: uPlot;
  private readonly xs: number[] = [];
  private readonly ys: number[] = [];
  private pending = false;

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

  clear(): void {
    this.xs.length = 0;
    this.ys.length = 0;
    this.plot.setData([this.xs, this.ys]);
  }
}
