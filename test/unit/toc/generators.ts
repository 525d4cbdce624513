// Seeded test data: random matrices with repeated values/rows, and MNIST-like digits.
// No vitest import, so scripts and benchmarks can use it too.
import { seededRandom } from '../../../src/shared/random.js';

/** Seeded PRNG (the pipeline's mulberry32) so failures reproduce. */
export const rng = seededRandom;

export interface RandomMatrixSpec {
  rows: number;
  cols: number;
  density: number;
  /** Values are drawn from this many distinct numbers, so sequences repeat. */
  distinctValues: number;
  /** Probability that a row copies (a prefix of) an earlier row, as in real tables. */
  repeatRows?: number;
  emptyRows?: number;
}

/** Random matrix with repeated values and repeated row prefixes (what TOC exploits). */
export function randomMatrix(random: () => number, spec: RandomMatrixSpec, type: 'f32' | 'f64'): Float32Array | Float64Array {
  const { rows, cols, density, distinctValues } = spec;
  const pool = Array.from({ length: distinctValues }, () => Math.round((random() * 20 - 10) * 1000) / 1000 || 1);
  const data = type === 'f32' ? new Float32Array(rows * cols) : new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    if (random() < (spec.emptyRows ?? 0)) continue;
    if (r > 0 && random() < (spec.repeatRows ?? 0)) {
      const src = Math.floor(random() * r);
      const upto = Math.floor(random() * (cols + 1));
      data.copyWithin(r * cols, src * cols, src * cols + upto);
      continue;
    }
    for (let c = 0; c < cols; c++) {
      if (random() < density) data[r * cols + c] = pool[Math.floor(random() * distinctValues)]!;
    }
  }
  return data;
}

/** 250 MNIST-like 28x28 digits: pen strokes, anti-aliased edges, saturated cores, values q / 255. */
export function mnistLike(count: number, seed: number): Float32Array {
  const random = rng(seed);
  const size = 28;
  const out = new Float32Array(count * size * size);
  for (let n = 0; n < count; n++) {
    const strokes = DIGITS[Math.floor(random() * DIGITS.length)]!;
    const scale = 17 + random() * 4;
    const dx = 4 + random() * 3 + (20 - scale) / 2;
    const dy = 4 + random() * 2;
    const slant = (random() - 0.5) * 0.4;
    const width = 1.1 + random() * 0.9;
    const segments = strokes.map(
      ([x0, y0, x1, y1]) => [dx + (x0 + slant * (1 - y0)) * scale, dy + y0 * scale, dx + (x1 + slant * (1 - y1)) * scale, dy + y1 * scale] as const,
    );
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        let d = Infinity;
        for (const [ax, ay, bx, by] of segments) d = Math.min(d, segmentDistance(x + 0.5, y + 0.5, ax, ay, bx, by));
        const ink = Math.min(1, Math.max(0, width + 0.6 - d));
        out[n * size * size + y * size + x] = Math.round(ink * 255) / 255;
      }
    }
  }
  return out;
}

function segmentDistance(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const vx = bx - ax;
  const vy = by - ay;
  const len2 = vx * vx + vy * vy;
  const t = len2 === 0 ? 0 : Math.min(1, Math.max(0, ((px - ax) * vx + (py - ay) * vy) / len2));
  return Math.hypot(px - ax - t * vx, py - ay - t * vy);
}

type Segment = readonly [number, number, number, number];

function polyline(points: ReadonlyArray<readonly [number, number]>): Segment[] {
  return points.slice(1).map((p, i) => [points[i]![0], points[i]![1], p[0], p[1]] as const);
}

function arc(cx: number, cy: number, rx: number, ry: number, from: number, to: number, steps = 10): Segment[] {
  const points = Array.from({ length: steps + 1 }, (_, i) => {
    const a = from + ((to - from) * i) / steps;
    return [cx + rx * Math.cos(a), cy + ry * Math.sin(a)] as const;
  });
  return polyline(points);
}

const PI = Math.PI;
/** Stroke sketches of the ten digits in a unit box (y grows downwards). */
const DIGITS: Segment[][] = [
  arc(0.5, 0.5, 0.3, 0.45, 0, 2 * PI, 14),
  polyline([
    [0.35, 0.2],
    [0.55, 0.05],
    [0.55, 0.95],
  ]),
  [
    ...arc(0.5, 0.3, 0.3, 0.25, PI, 2.2 * PI),
    ...polyline([
      [0.75, 0.45],
      [0.2, 0.95],
      [0.85, 0.95],
    ]),
  ],
  [...arc(0.5, 0.27, 0.28, 0.22, 1.1 * PI, 2.5 * PI), ...arc(0.5, 0.72, 0.3, 0.23, 1.5 * PI, 2.9 * PI)],
  polyline([
    [0.7, 0.95],
    [0.7, 0.05],
    [0.15, 0.65],
    [0.9, 0.65],
  ]),
  [
    ...polyline([
      [0.8, 0.05],
      [0.3, 0.05],
      [0.25, 0.45],
    ]),
    ...arc(0.5, 0.68, 0.3, 0.27, 1.2 * PI, 2.85 * PI),
  ],
  [
    ...arc(0.5, 0.7, 0.28, 0.25, 0, 2 * PI),
    ...polyline([
      [0.22, 0.7],
      [0.45, 0.25],
      [0.7, 0.05],
    ]),
  ],
  polyline([
    [0.15, 0.05],
    [0.85, 0.05],
    [0.4, 0.95],
  ]),
  [...arc(0.5, 0.27, 0.25, 0.22, 0, 2 * PI), ...arc(0.5, 0.72, 0.3, 0.23, 0, 2 * PI)],
  [
    ...arc(0.5, 0.3, 0.27, 0.25, 0, 2 * PI),
    ...polyline([
      [0.77, 0.3],
      [0.7, 0.95],
    ]),
  ],
];

export function randomVector(random: () => number, n: number): Float64Array {
  return Float64Array.from({ length: n }, () => random() * 2 - 1);
}
