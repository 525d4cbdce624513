// The resolved-runs GPU layout: a CPU mirror of shaders/toc_runs.wgsl evaluated on
// it must give A*M and A^T*M of the dense matrix, and the work model must hold.
import { describe, expect, it } from 'vitest';
import { encodeDense, encodePairs, toBatch, type ColumnValuePair } from '../../../src/toc/index.js';
import { MIN_SAVED_SHARE, tocRunsLayout, worthCaching, type TocRunsLayout } from '../../../src/toc/gpu-runs.js';
import { mnistLike, randomMatrix, randomVector, rng, type RandomMatrixSpec } from './generators.js';
import { denseTimes, expectClose } from './helpers.js';

const index = (l: TocRunsLayout, list: Uint32Array, i: number): number => (l.indexBits === 16 ? (list[i >>> 1]! >>> ((i & 1) * 16)) & 0xffff : list[i]!);
const item = (l: TocRunsLayout, items: Uint32Array, i: number): [number, number] =>
  l.wideItems ? [items[2 * i]!, items[2 * i + 1]!] : [items[i]! >>> l.pairBits, items[i]! & ((1 << l.pairBits) - 1)];
const value = (l: TocRunsLayout, p: number): number => l.values[p]!;

/** What run_sums (or occurrence_sums) and gather compute, on X = [M; H or G] (row-major, k columns). */
function gatherX(l: TocRunsLayout, x: Float64Array, k: number, outRows: number, bounds: Uint32Array, items: Uint32Array): Float64Array {
  const out = new Float64Array(outRows * k);
  for (let i = 0; i < outRows; i++) {
    for (let j = 0; j < k; j++) {
      let sum = 0;
      for (let t = bounds[i]!; t < bounds[i + 1]!; t++) {
        const [hi, p] = item(l, items, t);
        sum += value(l, p) * x[hi * k + j]!;
      }
      out[i * k + j] = sum;
    }
  }
  return out;
}

/** What run_sums + gather compute: R = A * M (M cols x k, row-major). */
function mirrorTimes(l: TocRunsLayout, m: ArrayLike<number>, k: number): Float64Array {
  const x = new Float64Array((l.cols + l.cached) * k);
  x.set(Array.from(m));
  for (let q = 0; q < l.cached; q++) {
    for (let j = 0; j < k; j++) {
      let sum = 0;
      for (let t = l.runOffsets[q]!; t < l.runOffsets[q + 1]!; t++) {
        const [c, p] = item(l, l.runItems, t);
        expect(c).toBeLessThan(l.cols);
        sum += value(l, p) * x[c * k + j]!;
      }
      x[(l.cols + q) * k + j] = sum;
    }
  }
  // A row's items read M's rows (inline pairs) or H's (cached codes, with the unit pair).
  for (let t = 0; t < l.rowBounds[l.rows]!; t++) {
    const [hi, p] = item(l, l.rowItems, t);
    if (hi >= l.cols) expect(p).toBe(l.unitPair);
    else expect(p).toBeLessThan(l.pairCount);
  }
  return gatherX(l, x, k, l.rows, l.rowBounds, l.rowItems);
}

/** What occurrence_sums + gather compute: R = A^T * M (M rows x k, row-major). */
function mirrorTransposeTimes(l: TocRunsLayout, m: ArrayLike<number>, k: number): Float64Array {
  const x = new Float64Array((l.rows + l.cached) * k);
  x.set(Array.from(m));
  for (let q = 0; q < l.cached; q++) {
    for (let j = 0; j < k; j++) {
      let sum = 0;
      for (let t = l.occurrenceOffsets[q]!; t < l.occurrenceOffsets[q + 1]!; t++) sum += x[index(l, l.occurrenceRows, t) * k + j]!;
      x[(l.rows + q) * k + j] = sum;
    }
  }
  return gatherX(l, x, k, l.cols, l.colBounds, l.colItems);
}

function transpose(rows: number, cols: number, data: ArrayLike<number>): Float64Array {
  const t = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) t[c * rows + r] = data[r * cols + c]!;
  return t;
}

function checkProducts(l: TocRunsLayout, data: ArrayLike<number>, seed: number): void {
  const random = rng(seed);
  const k = 3;
  const dense = { rows: l.rows, cols: l.cols, data };
  const right = { rows: l.cols, cols: k, data: randomVector(random, l.cols * k) };
  expectClose(mirrorTimes(l, right.data, k), denseTimes(dense, right).data);
  const left = { rows: l.rows, cols: k, data: randomVector(random, l.rows * k) };
  const at = { rows: l.cols, cols: l.rows, data: transpose(l.rows, l.cols, data) };
  expectClose(mirrorTransposeTimes(l, left.data, k), denseTimes(at, left).data);
}

const CASES: Array<[string, RandomMatrixSpec]> = [
  ['sparse, repetitive', { rows: 250, cols: 120, density: 0.15, distinctValues: 4, repeatRows: 0.6 }],
  ['dense, few values', { rows: 100, cols: 30, density: 1, distinctValues: 3, repeatRows: 0.2 }],
  ['distinct values', { rows: 60, cols: 50, density: 0.5, distinctValues: 1e6 }],
  ['empty rows', { rows: 80, cols: 16, density: 0.3, distinctValues: 2, emptyRows: 0.4 }],
  ['all zero', { rows: 20, cols: 10, density: 0, distinctValues: 1 }],
  ['single row', { rows: 1, cols: 40, density: 0.7, distinctValues: 3 }],
  ['one column', { rows: 50, cols: 1, density: 0.5, distinctValues: 2 }],
];

describe('resolved-runs layout (tocRunsLayout)', () => {
  for (const [name, spec] of CASES) {
    it(`${name}: the kernels' arithmetic on the layout gives A*M and A^T*M`, () => {
      const data = randomMatrix(rng(spec.rows + spec.cols), spec, 'f32');
      const l = tocRunsLayout(toBatch(encodeDense(data, spec.rows, spec.cols)));
      checkProducts(l, data, spec.cols);
      expect(l.model.terms).toBeLessThanOrEqual(l.model.nnz);
      expect(l.model.inlinePairs + l.model.cachedUses + l.model.cachedRunPairs).toBe(l.model.terms);
    });
  }

  it('MNIST-like: repeated prefixes are cached and save terms; indexes are 16-bit', () => {
    const data = mnistLike(250, 4);
    const l = tocRunsLayout(toBatch(encodeDense(data, 250, 784)));
    checkProducts(l, data, 9);
    expect(l.indexBits).toBe(16);
    expect(l.cached).toBeGreaterThan(0);
    expect(l.model.terms).toBeLessThan(l.model.nnz);
  });

  it('identical rows: one cached code per row pattern, used by every row', () => {
    const row: ColumnValuePair[] = [
      [1, 2],
      [3, 1],
      [4, 5],
    ];
    // Row 0 is codes 1, 2, 3 (making nodes ab, bc), row 1 is ab, c (making abc), rows 2.. are abc.
    const logical = encodePairs(
      Array.from({ length: 10 }, () => row),
      6,
      'f32',
    );
    const l = tocRunsLayout(toBatch(logical));
    const full = Array.from(logical.codes).filter((_, i) => i >= 5);
    expect(new Set(full).size).toBe(1);
    expect(l.model.cachedRunPairs).toBe(3);
    expect(l.model.terms).toBeLessThan(l.model.nnz);
    const dense = new Float32Array(60);
    for (let r = 0; r < 10; r++) for (const [c, v] of row) dense[r * 6 + c] = v;
    checkProducts(l, dense, 3);
  });

  it('no reuse: every code inline, exactly the non-zeros as terms', () => {
    const rows = Array.from({ length: 30 }, (_, r): ColumnValuePair[] => [[r, r + 1]]);
    const l = tocRunsLayout(toBatch(encodePairs(rows, 30, 'f32')));
    expect(l.cached).toBe(0);
    expect(l.model.terms).toBe(l.model.nnz);
  });

  it('large batch: 32-bit indexes and two-word column items when (row, pair) needs more than 32 bits', () => {
    const n = 70_000;
    const rows = Array.from({ length: n }, (_, r): ColumnValuePair[] => [[r, (r % 7) + 1]]);
    const l = tocRunsLayout(toBatch(encodePairs(rows, n, 'f32')));
    expect(l.indexBits).toBe(32);
    expect(l.wideItems).toBe(true);
    const m = randomVector(rng(2), n);
    const got = mirrorTransposeTimes(l, m, 1);
    for (const r of [0, 1, 65_537, n - 1]) expect(got[r]).toBeCloseTo(((r % 7) + 1) * m[r]!, 12);
    expect(mirrorTimes(l, m, 1)[n - 1]).toBeCloseTo((((n - 1) % 7) + 1) * m[n - 1]!, 12);
  });

  it('unitValues: set only when every pair is 1 (the kernels then skip value loads)', () => {
    const oneHot = randomMatrix(rng(3), { rows: 50, cols: 20, density: 0.2, distinctValues: 3, repeatRows: 0.5 }, 'f32').map((x) => (x === 0 ? 0 : 1));
    const unit = tocRunsLayout(toBatch(encodeDense(oneHot, 50, 20)));
    expect(unit.unitValues).toBe(true);
    checkProducts(unit, oneHot, 4);
    const oneOther = Float32Array.from(oneHot);
    oneOther[oneOther.indexOf(1)] = 0.5;
    expect(tocRunsLayout(toBatch(encodeDense(oneOther, 50, 20))).unitValues).toBe(false);
  });

  it('a batch whose cached codes would save less than MIN_SAVED_SHARE of its non-zeros caches none', () => {
    // 100 rows: one shared 3-pair row (saves 3 * 20 - 3 - 20 = 37 terms once cached) among 80 rows of distinct pairs.
    const shared: ColumnValuePair[] = [
      [0, 1],
      [1, 2],
      [2, 3],
    ];
    const rows = Array.from({ length: 100 }, (_, r): ColumnValuePair[] =>
      r < 20 ? shared : Array.from({ length: 10 }, (_, i): ColumnValuePair => [3 + i, r * 10 + i + 1]),
    );
    const batch = toBatch(encodePairs(rows, 13, 'f32'));
    const any = tocRunsLayout(batch, { minSavedShare: 0 });
    const saved = any.model.nnz - any.model.terms;
    expect(saved).toBeGreaterThan(0);
    expect(saved).toBeLessThan(MIN_SAVED_SHARE * any.model.nnz);
    const chosen = tocRunsLayout(batch);
    expect(chosen.cached).toBe(0);
    expect(chosen.model.terms).toBe(chosen.model.nnz);
    expect(tocRunsLayout(batch, { minSavedShare: saved / any.model.nnz }).cached).toBe(any.cached);
  });

  it('worthCaching: only strict savings', () => {
    expect(worthCaching(1, 100)).toBe(false);
    expect(worthCaching(2, 2)).toBe(false);
    expect(worthCaching(2, 3)).toBe(true);
    expect(worthCaching(3, 2)).toBe(true);
    expect(worthCaching(50, 1)).toBe(false);
  });
});
