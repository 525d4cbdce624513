// The resolved-runs GPU layout: a CPU mirror of shaders/toc_runs.wgsl evaluated on
// it must give A*M and A^T*M of the dense matrix, and the work model must hold.
import { describe, expect, it } from 'vitest';
import { encodeDense, encodePairs, toBatch, type ColumnValuePair } from '../../../src/toc/index.js';
import {
  MIN_SAVED_SHARE,
  pricesFor,
  runsCost,
  tocRunsLayout,
  worthCaching,
  type CacheRule,
  type RunsLayoutOptions,
  type TocRunsLayout,
} from '../../../src/toc/gpu-runs.js';
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
  // Every rule, the cost rule at both kernel forms' k, and 'all' (every code cached, savings or not): the layout must hold.
  const RULES: Array<[string, RunsLayoutOptions]> = [
    ['cost rule, k = 64', { k: 64 }],
    ['cost rule, k = 1', { k: 1 }],
    ['terms rule, any saving', { cache: 'terms', minSavedShare: 0 }],
    ['every code cached', { cache: 'all' }],
    ['nothing cached', { cache: 'none' }],
  ];
  for (const [name, spec] of CASES) {
    for (const [rule, options] of RULES) {
      it(`${name}, ${rule}: the kernels' arithmetic on the layout gives A*M and A^T*M`, () => {
        const data = randomMatrix(rng(spec.rows + spec.cols), spec, 'f32');
        const l = tocRunsLayout(toBatch(encodeDense(data, spec.rows, spec.cols)), options);
        checkProducts(l, data, spec.cols);
        if (options.cache !== 'all') expect(l.model.terms).toBeLessThanOrEqual(l.model.nnz);
        expect(l.model.inlinePairs + l.model.cachedUses + l.model.cachedRunPairs).toBe(l.model.terms);
        if (options.cache === 'none') expect(l.cached).toBe(0);
      });
    }
  }

  it("'all' caches every distinct code of D, even those that cost terms", () => {
    const data = randomMatrix(rng(11), { rows: 60, cols: 50, density: 0.5, distinctValues: 1e6 }, 'f32');
    const batch = toBatch(encodeDense(data, 60, 50));
    const l = tocRunsLayout(batch, { cache: 'all' });
    expect(l.cached).toBe(new Set(batch.codes).size);
    expect(l.model.cachedUses).toBe(batch.codes.length);
    expect(l.model.inlinePairs).toBe(0);
    expect(l.model.terms).toBeGreaterThan(l.model.nnz);
  });

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
    const l = tocRunsLayout(toBatch(logical), { cache: 'terms' });
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

  it('terms rule: a batch whose cached codes would save less than MIN_SAVED_SHARE of its non-zeros caches none', () => {
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
    const any = tocRunsLayout(batch, { cache: 'terms', minSavedShare: 0 });
    const saved = any.model.nnz - any.model.terms;
    expect(saved).toBeGreaterThan(0);
    expect(saved).toBeLessThan(MIN_SAVED_SHARE * any.model.nnz);
    const chosen = tocRunsLayout(batch, { cache: 'terms' });
    expect(chosen.cached).toBe(0);
    expect(chosen.model.terms).toBe(chosen.model.nnz);
    expect(tocRunsLayout(batch, { cache: 'terms', minSavedShare: saved / any.model.nnz }).cached).toBe(any.cached);
  });

  it('worthCaching: only strict savings', () => {
    expect(worthCaching(1, 100)).toBe(false);
    expect(worthCaching(2, 2)).toBe(false);
    expect(worthCaching(2, 3)).toBe(true);
    expect(worthCaching(3, 2)).toBe(true);
    expect(worthCaching(50, 1)).toBe(false);
  });
});

describe('the cost rule (runsCost, RunsLayoutOptions.k)', () => {
  /** 800 rows: 20 patterns of 3 pairs, each used by 40 rows, then one of 100 pairs. */
  function reuseBatch() {
    const rows = Array.from({ length: 800 }, (_, r): ColumnValuePair[] => [
      [0, 1 + (r % 20)],
      [1, 2],
      [2, 1 + (r % 20)],
      [3 + (r % 100), 1],
    ]);
    return toBatch(encodePairs(rows, 103, 'f32'));
  }
  const costOf = (l: TocRunsLayout) => l.cost.times + l.cost.transposeTimes;

  it('k = 1 caches nothing on a batch where k = 64 caches; the quad k pays the fixed price, one column does not', () => {
    const batch = reuseBatch();
    const wide = tocRunsLayout(batch, { k: 64 });
    const narrow = tocRunsLayout(batch, { k: 1 });
    expect(wide.cached).toBeGreaterThan(0);
    expect(wide.cost.ratio).toBeLessThan(1);
    expect(narrow.cached).toBe(0);
    expect(narrow.model.terms).toBe(narrow.model.nnz);
    expect(narrow.cost.ratio).toBe(1);
    expect([wide.k, narrow.k]).toEqual([64, 1]);
  });

  it('a batch with no reuse caches nothing at any k', () => {
    const rows = Array.from({ length: 300 }, (_, r): ColumnValuePair[] => [
      [r % 100, r + 1],
      [100 + (r % 50), r + 2],
    ]);
    const batch = toBatch(encodePairs(rows, 150, 'f32'));
    for (const k of [1, 2, 8, 64, 256]) {
      const l = tocRunsLayout(batch, { k });
      expect(l.cached).toBe(0);
      expect(l.cost.ratio).toBe(1);
    }
  });

  it('the cost rule picks the cheapest of the rules by its own model, at every k', () => {
    const spec = { rows: 500, cols: 60, density: 0.2, distinctValues: 3, repeatRows: 0.5 };
    const batch = toBatch(encodeDense(randomMatrix(rng(8), spec, 'f32'), spec.rows, spec.cols));
    for (const k of [1, 2, 4, 16, 64]) {
      const chosen = costOf(tocRunsLayout(batch, { k }));
      for (const cache of ['terms', 'all', 'none'] as CacheRule[]) {
        for (const minSavedShare of [0, MIN_SAVED_SHARE]) expect(chosen).toBeLessThanOrEqual(costOf(tocRunsLayout(batch, { k, cache, minSavedShare })) + 1e-9);
      }
    }
  });

  it('runsCost: nothing cached costs what CSR costs; the fill adds its dispatch, invocations and terms', () => {
    const model = { rows: 100, cols: 40, nnz: 1000, inlinePairs: 1000, cachedCodes: 0, cachedRunPairs: 0, cachedUses: 0 };
    for (const k of [1, 64]) {
      const c = runsCost(model, k);
      expect(c.times).toBe(c.csrTimes);
      expect(c.transposeTimes).toBe(c.csrTransposeTimes);
      expect(c.ratio).toBe(1);
    }
    // One code of 4 pairs used 50 times, cached: the gather sums 800 + 50 terms, its run's fill 4, one invocation more.
    const p = { base: 1, dispatch: 10, invocation: 0.5, term: 0.25, copy: 0.001 };
    const cached = runsCost({ ...model, inlinePairs: 800, cachedCodes: 1, cachedRunPairs: 4, cachedUses: 50 }, 1, p);
    expect(cached.times).toBeCloseTo(p.dispatch + p.copy * 40 + p.invocation * (100 + 1) + p.term * (800 + 50 + 4) + p.base, 9);
    expect(cached.transposeTimes).toBeCloseTo(p.dispatch + p.copy * 100 + p.invocation * (40 + 1) + p.term * (800 + 4 + 50) + p.base, 9);
    expect(cached.csrTimes).toBeCloseTo(p.base + p.invocation * 100 + p.term * 1000, 9);
    // k = 64 takes the quad prices and 16 invocations per output row (4 columns each).
    expect(runsCost(model, 64).csrTimes).toBeCloseTo(pricesFor(64).base + 16 * (pricesFor(64).invocation * 100 + pricesFor(64).term * 1000), 9);
  });
});
