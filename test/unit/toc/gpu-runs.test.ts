// The resolved-runs GPU layout: a CPU mirror of shaders/toc_runs.wgsl evaluated on
// it must give A*M and A^T*M of the dense matrix, and the work model must hold.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { concatRows, frequencyOrder, permuteColumns, sliceRows, sparseFromLogical } from '../../../src/toc/choose.js';
import { readTocRecord, validateTocManifest } from '../../../src/toc/dataset.js';
import { encodeDense, encodePairs, encodeSparse, toBatch, type ColumnValuePair } from '../../../src/toc/index.js';
import {
  MIN_SAVED_SHARE,
  boundsSpan,
  laneRows,
  laneSpan,
  pricesFor,
  RUNS_PRICES_S8,
  runsCost,
  runsLayoutBytes,
  tocRunsLayout,
  worthCaching,
  type CacheRule,
  type RunsLayoutOptions,
  type RunsSideModel,
  type TocRunsLayout,
} from '../../../src/toc/gpu-runs.js';
import { mnistLike, randomMatrix, randomVector, rng, type RandomMatrixSpec } from './generators.js';
import { denseTimes, expectClose } from './helpers.js';

const index = (l: TocRunsLayout, list: Uint32Array, i: number): number => (l.indexBits === 16 ? (list[i >>> 1]! >>> ((i & 1) * 16)) & 0xffff : list[i]!);
/** Whether `items` are a plain side's (hi alone, the value in rowValues / colValues). */
const plainOf = (l: TocRunsLayout, items: Uint32Array): boolean => (items === l.rowItems ? l.rowPlain : items === l.colItems && l.colPlain);
const item = (l: TocRunsLayout, items: Uint32Array, i: number): [number, number] =>
  plainOf(l, items) ? [items[i]!, -1] : l.wideItems ? [items[2 * i]!, items[2 * i + 1]!] : [items[i]! >>> l.pairBits, items[i]! & ((1 << l.pairBits) - 1)];
/** Item t's value: by its pair, or beside it on a plain side (1 when every value is 1, as the kernels skip the load). */
const itemValue = (l: TocRunsLayout, items: Uint32Array, t: number, p: number): number => {
  if (!plainOf(l, items)) return l.values[p]!;
  if (l.unitValues) return 1;
  return (items === l.rowItems ? l.rowValues : l.colValues)[t]!;
};
const value = (l: TocRunsLayout, p: number): number => l.values[p]!;
/** A side's cached set, by its counts (the spans differ between sides even for the same set). */
const setOf = (s: RunsSideModel) => [s.inlineCodes, s.inlinePairs, s.cachedCodes, s.cachedRunPairs, s.cachedUses, s.terms];

/** What run_sums (or occurrence_sums) and gather compute, on X = [M; H or G] (row-major, k columns). */
function gatherX(l: TocRunsLayout, x: Float64Array, k: number, outRows: number, bounds: Uint32Array, items: Uint32Array): Float64Array {
  const out = new Float64Array(outRows * k);
  for (let i = 0; i < outRows; i++) {
    for (let j = 0; j < k; j++) {
      let sum = 0;
      for (let t = bounds[i]!; t < bounds[i + 1]!; t++) {
        const [hi, p] = item(l, items, t);
        sum += itemValue(l, items, t, p) * x[hi * k + j]!;
      }
      out[i * k + j] = sum;
    }
  }
  return out;
}

/** What run_sums + gather compute: R = A * M (M cols x k, row-major). */
function mirrorTimes(l: TocRunsLayout, m: ArrayLike<number>, k: number): Float64Array {
  const x = new Float64Array((l.cols + l.rowCached) * k);
  x.set(Array.from(m));
  for (let q = 0; q < l.rowCached; q++) {
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
    if (hi >= l.cols) {
      expect(p).toBe(l.unitPair);
      expect(hi).toBeLessThan(l.cols + l.rowCached);
    } else if (!l.rowPlain) expect(p).toBeLessThan(l.pairCount);
  }
  return gatherX(l, x, k, l.rows, l.rowBounds, l.rowItems);
}

/** What occurrence_sums + gather compute: R = A^T * M (M rows x k, row-major). */
function mirrorTransposeTimes(l: TocRunsLayout, m: ArrayLike<number>, k: number): Float64Array {
  const x = new Float64Array((l.rows + l.colCached) * k);
  x.set(Array.from(m));
  for (let q = 0; q < l.colCached; q++) {
    for (let j = 0; j < k; j++) {
      let sum = 0;
      for (let t = l.occurrenceOffsets[q]!; t < l.occurrenceOffsets[q + 1]!; t++) sum += x[index(l, l.occurrenceRows, t) * k + j]!;
      x[(l.rows + q) * k + j] = sum;
    }
  }
  for (let t = 0; t < l.colBounds[l.cols]!; t++) expect(item(l, l.colItems, t)[0]).toBeLessThan(l.rows + l.colCached);
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
        for (const side of [l.model.row, l.model.col]) {
          if (options.cache !== 'all') expect(side.terms).toBeLessThanOrEqual(l.model.nnz);
          expect(side.inlinePairs + side.cachedUses + side.cachedRunPairs).toBe(side.terms);
        }
        expect(l.model.terms).toBe((l.model.row.terms + l.model.col.terms) / 2);
        expect([l.model.row.cachedCodes, l.model.col.cachedCodes]).toEqual([l.rowCached, l.colCached]);
        if (options.cache === 'none') expect([l.rowCached, l.colCached]).toEqual([0, 0]);
        // Rules other than the cost rule cache one set for both sides.
        if (options.cache) expect(setOf(l.model.row)).toEqual(setOf(l.model.col));
      });
    }
  }

  it("'all' caches every distinct code of D, even those that cost terms", () => {
    const data = randomMatrix(rng(11), { rows: 60, cols: 50, density: 0.5, distinctValues: 1e6 }, 'f32');
    const batch = toBatch(encodeDense(data, 60, 50));
    const l = tocRunsLayout(batch, { cache: 'all' });
    expect([l.rowCached, l.colCached]).toEqual([new Set(batch.codes).size, new Set(batch.codes).size]);
    expect(l.model.row.cachedUses).toBe(batch.codes.length);
    expect(l.model.col.inlinePairs).toBe(0);
    expect(l.model.terms).toBeGreaterThan(l.model.nnz);
  });

  it('MNIST-like: repeated prefixes are cached and save terms; indexes are 16-bit', () => {
    const data = mnistLike(250, 4);
    const l = tocRunsLayout(toBatch(encodeDense(data, 250, 784)));
    checkProducts(l, data, 9);
    expect(l.indexBits).toBe(16);
    expect(l.rowCached + l.colCached).toBeGreaterThan(0);
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
    expect(l.model.row.cachedRunPairs).toBe(3);
    expect(l.model.col.cachedRunPairs).toBe(3);
    expect(l.model.terms).toBeLessThan(l.model.nnz);
    const dense = new Float32Array(60);
    for (let r = 0; r < 10; r++) for (const [c, v] of row) dense[r * 6 + c] = v;
    checkProducts(l, dense, 3);
  });

  it('no reuse: every code inline, exactly the non-zeros as terms', () => {
    const rows = Array.from({ length: 30 }, (_, r): ColumnValuePair[] => [[r, r + 1]]);
    const l = tocRunsLayout(toBatch(encodePairs(rows, 30, 'f32')));
    expect([l.rowCached, l.colCached]).toEqual([0, 0]);
    expect(l.model.terms).toBe(l.model.nnz);
  });

  it('large batch: 32-bit indexes and two-word column items when (row, pair) needs more than 32 bits', () => {
    const n = 70_000;
    const rows = Array.from({ length: n }, (_, r): ColumnValuePair[] => [[r, (r % 7) + 1]]);
    const batch = toBatch(encodePairs(rows, n, 'f32'));
    // Packed items take two words (the default: the values are not all 1); plain sides ('all': nothing is cached here) one word and a value.
    for (const l of [tocRunsLayout(batch), tocRunsLayout(batch, { plainSides: 'all' })]) {
      expect(l.indexBits).toBe(32);
      expect(l.wideItems).toBe(true);
      expect(l.colItems.length).toBe(n * (l.colPlain ? 1 : 2));
      const m = randomVector(rng(2), n);
      const got = mirrorTransposeTimes(l, m, 1);
      for (const r of [0, 1, 65_537, n - 1]) expect(got[r]).toBeCloseTo(((r % 7) + 1) * m[r]!, 12);
      expect(mirrorTimes(l, m, 1)[n - 1]).toBeCloseTo((((n - 1) % 7) + 1) * m[n - 1]!, 12);
    }
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
    expect(chosen.rowCached).toBe(0);
    expect(chosen.model.terms).toBe(chosen.model.nnz);
    expect(tocRunsLayout(batch, { cache: 'terms', minSavedShare: saved / any.model.nnz }).rowCached).toBe(any.rowCached);
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

  it('k = 1 caches nothing for A·v on a batch where k = 64 caches; the quad k pays the fixed price, one column does not', () => {
    const batch = reuseBatch();
    const wide = tocRunsLayout(batch, { k: 64 });
    const narrow = tocRunsLayout(batch, { k: 1 });
    expect(wide.rowCached).toBeGreaterThan(0);
    expect(wide.colCached).toBeGreaterThan(0);
    expect(wide.cost.ratio).toBeLessThan(1);
    // At k = 1 the row side's fill costs more than the terms it saves; the column side's long columns (lanes wait for the
    // longest) may still pay, by its own prices.
    expect(narrow.rowCached).toBe(0);
    expect(narrow.model.row.terms).toBe(narrow.model.nnz);
    expect(narrow.cost.times).toBe(narrow.cost.csrTimes);
    expect(narrow.cost.ratio).toBeLessThanOrEqual(1);
    expect([wide.k, narrow.k]).toEqual([64, 1]);
    // Session 8's one-set rule and prices (no lanes): nothing at k = 1 on either side.
    const s8 = tocRunsLayout(batch, { k: 1, sides: 'one', prices: pricesFor(1, RUNS_PRICES_S8) });
    expect([s8.rowCached, s8.colCached]).toEqual([0, 0]);
    expect(s8.cost.ratio).toBe(1);
  });

  it('a batch with no reuse caches nothing at any k', () => {
    const rows = Array.from({ length: 300 }, (_, r): ColumnValuePair[] => [
      [r % 100, r + 1],
      [100 + (r % 50), r + 2],
    ]);
    const batch = toBatch(encodePairs(rows, 150, 'f32'));
    for (const k of [1, 2, 8, 64, 256]) {
      const l = tocRunsLayout(batch, { k });
      expect([l.rowCached, l.colCached]).toEqual([0, 0]);
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

  it('runsCost: nothing cached costs what CSR costs; the fill adds its dispatch, invocations and terms, each side at its prices', () => {
    const none = { cachedCodes: 0, gatherSpan: 1000, fillSpan: 0, csrSpan: 1000 };
    const model = { rows: 100, cols: 40, row: none, col: none };
    for (const k of [1, 64]) {
      const c = runsCost(model, k);
      expect(c.times).toBe(c.csrTimes);
      expect(c.transposeTimes).toBe(c.csrTransposeTimes);
      expect(c.ratio).toBe(1);
    }
    // One code of 4 pairs used 50 times, cached: A·M gathers 800 + 50 items and fills 4, Aᵀ·M gathers 800 + 4 and fills 50.
    const p = { base: 1, dispatch: 10, invocation: 0.5, term: 0.25, copy: 0.001 };
    const q = { base: 2, dispatch: 20, invocation: 0.1, term: 0.75, copy: 0.002 };
    const row = { cachedCodes: 1, gatherSpan: 850, fillSpan: 4, csrSpan: 1000 };
    const col = { cachedCodes: 1, gatherSpan: 804, fillSpan: 50, csrSpan: 1000 };
    const cached = runsCost({ ...model, row, col }, 1, { row: p, col: q });
    expect(cached.times).toBeCloseTo(p.dispatch + p.copy * 40 + p.invocation * (100 + 1) + p.term * (800 + 50 + 4) + p.base, 9);
    expect(cached.transposeTimes).toBeCloseTo(q.dispatch + q.copy * 100 + q.invocation * (40 + 1) + q.term * (800 + 4 + 50) + q.base, 9);
    expect(cached.csrTimes).toBeCloseTo(p.base + p.invocation * 100 + p.term * 1000, 9);
    expect(cached.csrTransposeTimes).toBeCloseTo(q.base + q.invocation * 40 + q.term * 1000, 9);
    // Each side is priced on its own counts: the column side caching alone leaves A·M at CSR's price.
    const colOnly = runsCost({ ...model, col }, 1, { row: p, col: q });
    expect(colOnly.times).toBe(colOnly.csrTimes);
    expect(colOnly.transposeTimes).toBe(cached.transposeTimes);
    // k = 64 takes the quad prices and 16 invocations per output row (4 columns each).
    const quad = pricesFor(64);
    expect(runsCost(model, 64).csrTimes).toBeCloseTo(quad.row.base + 16 * (quad.row.invocation * 100 + quad.row.term * 1000), 9);
    expect(runsCost(model, 64).csrTransposeTimes).toBeCloseTo(quad.col.base + 16 * (quad.col.invocation * 40 + quad.col.term * 1000), 9);
  });

  it("lane spans: a group of lockstep lists costs its longest; scalar forms group output rows, quad forms a row's quads", () => {
    const bounds = [0, 1, 9, 10, 11, 12];
    expect(boundsSpan(bounds, 1)).toBe(12);
    expect(boundsSpan(bounds, 2)).toBe(2 * 8 + 2 * 1 + 2 * 1);
    expect(boundsSpan(bounds, 4)).toBe(4 * 8 + 4 * 1);
    expect(laneSpan(3, (i) => [5, 0, 2][i]!, 8)).toBe(40);
    expect([laneRows(1, 8), laneRows(2, 8), laneRows(4, 8), laneRows(8, 8), laneRows(64, 8), laneRows(1)]).toEqual([8, 8, 8, 4, 1, 1]);
    // The layout's spans are those of its own lists: at lanes 1 the plain counts.
    const spec = { rows: 300, cols: 40, density: 0.2, distinctValues: 3, repeatRows: 0.5 };
    const batch = toBatch(encodeDense(randomMatrix(rng(4), spec, 'f32'), spec.rows, spec.cols));
    const plain = tocRunsLayout(batch, { k: 1, prices: RUNS_PRICES_S8.scalar });
    expect(plain.model.row.gatherSpan).toBe(plain.model.row.inlinePairs + plain.model.row.cachedUses);
    expect(plain.model.col.fillSpan).toBe(plain.model.col.cachedUses);
    expect([plain.model.row.csrSpan, plain.model.col.csrSpan]).toEqual([plain.model.nnz, plain.model.nnz]);
    const lanes = { ...RUNS_PRICES_S8.scalar.row, lanes: 8 };
    const padded = tocRunsLayout(batch, { k: 1, prices: { row: lanes, col: lanes } });
    expect(padded.model.row.gatherSpan).toBe(boundsSpan(padded.rowBounds, 8));
    expect(padded.model.col.gatherSpan).toBe(boundsSpan(padded.colBounds, 8));
    expect(padded.model.row.csrSpan).toBe(boundsSpan(tocRunsLayout(batch, { cache: 'none' }).rowBounds, 8));
    expect(padded.model.col.csrSpan).toBe(boundsSpan(tocRunsLayout(batch, { cache: 'none' }).colBounds, 8));
  });
});

describe('plain sides (RunsLayoutOptions.plainSides, session 11)', () => {
  /** Every case and rule above, the default layout against session 10's packed one, side by side. */
  const pairsOf = (l: TocRunsLayout, items: Uint32Array, n: number) => Array.from({ length: n }, (_, t) => item(l, items, t));
  for (const [name, spec] of CASES) {
    for (const options of [{ k: 1 }, { k: 64 }, { cache: 'terms' as const, minSavedShare: 0 }, { cache: 'none' as const }]) {
      it(`${name}, ${JSON.stringify(options)}: a side with nothing cached is plain (hi alone, its value beside it), a cached side packed`, () => {
        const data = randomMatrix(rng(spec.rows + spec.cols), spec, 'f32');
        const batch = toBatch(encodeDense(data, spec.rows, spec.cols));
        const plain = tocRunsLayout(batch, { ...options, plainSides: 'all' });
        const packed = tocRunsLayout(batch, { ...options, plainSides: 'none' });
        // The default ('unit') is one of the two: plain sides only when every value is 1.
        const byDefault = tocRunsLayout(batch, options);
        expect([byDefault.rowItems, byDefault.colItems]).toEqual(plain.unitValues ? [plain.rowItems, plain.colItems] : [packed.rowItems, packed.colItems]);
        expect([plain.rowCached, plain.colCached]).toEqual([packed.rowCached, packed.colCached]);
        expect([packed.rowPlain, packed.colPlain]).toEqual([false, false]);
        expect([packed.rowValues.length, packed.colValues.length]).toEqual([0, 0]);
        expect([plain.rowPlain, plain.colPlain]).toEqual([plain.rowCached === 0, plain.colCached === 0]);
        const sides = [
          [plain.rowPlain, plain.rowItems, packed.rowItems, plain.rowValues, plain.rowBounds[plain.rows]!],
          [plain.colPlain, plain.colItems, packed.colItems, plain.colValues, plain.colBounds[plain.cols]!],
        ] as const;
        for (const [isPlain, items, packedItems, values, n] of sides) {
          if (!isPlain) {
            expect(items).toEqual(packedItems);
            continue;
          }
          // One word per item, the packed item's hi; the value is the packed item's pair's (none stored for unit values).
          expect(items.length).toBe(n);
          const want = pairsOf(packed, packedItems, n);
          expect(Array.from(items)).toEqual(want.map(([hi]) => hi));
          expect(Array.from(values)).toEqual(plain.unitValues ? [] : want.map(([, p]) => packed.values[p]!));
        }
        // The bytes differ by the values stored beside plain items and by the words of wide packed items.
        const wideWords = (p: boolean, n: number) => (p && plain.wideItems ? -4 * n : 0);
        const rowN = plain.rowBounds[plain.rows]!;
        const colN = plain.colBounds[plain.cols]!;
        expect(runsLayoutBytes(plain) - runsLayoutBytes(packed)).toBe(
          4 * (plain.rowValues.length + plain.colValues.length) + wideWords(plain.rowPlain, rowN) + wideWords(plain.colPlain, colN),
        );
        checkProducts(plain, data, spec.cols);
      });
    }
  }

  it('by default unit batches are plain where nothing is cached, with no values stored and the bytes of packed items', () => {
    const oneHot = randomMatrix(rng(3), { rows: 50, cols: 20, density: 0.2, distinctValues: 3 }, 'f32').map((x) => (x === 0 ? 0 : 1));
    const batch = toBatch(encodeDense(oneHot, 50, 20));
    const l = tocRunsLayout(batch, { cache: 'none' });
    expect([l.unitValues, l.rowPlain, l.colPlain]).toEqual([true, true, true]);
    expect([l.rowValues.length, l.colValues.length]).toEqual([0, 0]);
    expect(runsLayoutBytes(l)).toBe(runsLayoutBytes(tocRunsLayout(batch, { cache: 'none', plainSides: 'none' })));
    checkProducts(l, oneHot, 4);
    // One value other than 1: packed by default, plain only when asked ('all').
    const other = Float32Array.from(oneHot);
    other[other.indexOf(1)] = 0.5;
    const b2 = toBatch(encodeDense(other, 50, 20));
    expect([tocRunsLayout(b2, { cache: 'none' }).rowPlain, tocRunsLayout(b2, { cache: 'none', plainSides: 'all' }).rowPlain]).toEqual([false, true]);
  });
});

describe('a cached set per side (RunsLayoutOptions.sides, session 10)', () => {
  /** 600 rows of 6 pairs with small integer values: 12 patterns of the first 4 pairs, each used by 50 rows, then 2 pairs of their own. */
  function reuse() {
    const rows = Array.from({ length: 600 }, (_, r): ColumnValuePair[] => [
      [0, 1 + (r % 12)],
      [1, 2],
      [2, 1 + (r % 3)],
      [3, 3],
      [4 + (r % 50), 1 + (r % 5)],
      [60 + (r % 40), 2],
    ]);
    const dense = new Float32Array(600 * 100);
    rows.forEach((pairs, r) => {
      for (const [c, v] of pairs) dense[r * 100 + c] = v;
    });
    return { batch: toBatch(encodePairs(rows, 100, 'f32')), dense, rows: 600, cols: 100 };
  }
  const base = { base: 20, dispatch: 25, invocation: 0.01, copy: 0.001 };
  // Terms cheap on A's rows, dear on its columns (as fitted on SwiftShader at k = 1, in kind): only the column side pays for its fill.
  const asymmetric = { row: { ...base, term: 0.001 }, col: { ...base, term: 0.05 } };
  const costOf = (l: TocRunsLayout) => l.cost.times + l.cost.transposeTimes;

  /** Integer M (values below 8): every sum is exact in float64 and in any order, so products must equal the dense ones exactly. */
  function exactProducts(l: TocRunsLayout, dense: Float32Array, k: number): void {
    const random = rng(k);
    const int = (n: number) => Float64Array.from({ length: n }, () => Math.floor(random() * 8) - 3);
    const right = { rows: l.cols, cols: k, data: int(l.cols * k) };
    expect(Array.from(mirrorTimes(l, right.data, k))).toEqual(Array.from(denseTimes({ rows: l.rows, cols: l.cols, data: dense }, right).data));
    const left = { rows: l.rows, cols: k, data: int(l.rows * k) };
    const at = { rows: l.cols, cols: l.rows, data: transpose(l.rows, l.cols, dense) };
    expect(Array.from(mirrorTransposeTimes(l, left.data, k))).toEqual(Array.from(denseTimes(at, left).data));
  }

  it('sides pay apart: the row side caches nothing while the column side caches, and both products equal the dense ones exactly', () => {
    const { batch, dense } = reuse();
    for (const k of [1, 3]) {
      const l = tocRunsLayout(batch, { k, prices: asymmetric });
      expect(l.rowCached).toBe(0);
      expect(l.colCached).toBeGreaterThan(0);
      expect(l.model.row.terms).toBe(l.model.nnz);
      expect(l.model.col.terms).toBeLessThan(l.model.nnz);
      // The row side is plain CSR work: no unit-pair items, no runs; the column side reads G's rows after M's.
      expect(l.runOffsets).toEqual(new Uint32Array([0]));
      expect(l.runItems.length).toBe(0);
      expect(l.rowItems.length).toBe(l.model.nnz * (l.wideItems ? 2 : 1));
      expect(l.occurrenceOffsets[l.colCached]).toBe(l.model.col.cachedUses);
      exactProducts(l, dense, k);
      expect(l.cost.times).toBe(l.cost.csrTimes);
      expect(l.cost.transposeTimes).toBeLessThan(l.cost.csrTransposeTimes);
      // One set for both sides caches the same codes on both, and is predicted dearer.
      const one = tocRunsLayout(batch, { k, prices: asymmetric, sides: 'one' });
      expect(one.rowCached).toBe(one.colCached);
      expect(setOf(one.model.row)).toEqual(setOf(one.model.col));
      exactProducts(one, dense, k);
      expect(costOf(l)).toBeLessThan(costOf(one));
    }
    // Mirrored prices: the row side caches, the column side does not.
    const mirrored = tocRunsLayout(batch, { k: 1, prices: { row: asymmetric.col, col: asymmetric.row } });
    expect(mirrored.rowCached).toBeGreaterThan(0);
    expect(mirrored.colCached).toBe(0);
    expect(mirrored.occurrenceOffsets).toEqual(new Uint32Array([0]));
    expect(mirrored.colItems.length).toBe(mirrored.model.nnz * (mirrored.wideItems ? 2 : 1));
    exactProducts(mirrored, dense, 1);
  });

  it("each side's set costs no more (by the model) than one set for both, every code, the terms rule's or none, at every k", () => {
    const { batch } = reuse();
    const spec = { rows: 500, cols: 60, density: 0.2, distinctValues: 3, repeatRows: 0.5 };
    const random = toBatch(encodeDense(randomMatrix(rng(8), spec, 'f32'), spec.rows, spec.cols));
    for (const b of [batch, random]) {
      for (const k of [1, 2, 4, 16, 64]) {
        for (const prices of [pricesFor(k), asymmetric, { row: asymmetric.col, col: asymmetric.row }]) {
          const each = tocRunsLayout(b, { k, prices });
          for (const other of [
            tocRunsLayout(b, { k, prices, sides: 'one' }),
            ...(['terms', 'all', 'none'] as CacheRule[]).map((cache) => tocRunsLayout(b, { k, prices, cache, minSavedShare: 0 })),
          ]) {
            expect(each.cost.times).toBeLessThanOrEqual(other.cost.times + 1e-9);
            expect(each.cost.transposeTimes).toBeLessThanOrEqual(other.cost.transposeTimes + 1e-9);
          }
        }
      }
    }
  });

  it('birdstrikes 2000 (bundled, frequency order) at k = 1, fitted prices: A·v stays uncached, v·A caches; products exact', () => {
    const base = join(dirname(fileURLToPath(import.meta.url)), '../../../public/datasets/birdstrikes-toc');
    const manifest = validateTocManifest(JSON.parse(readFileSync(join(base, 'manifest.json'), 'utf8')), 'birdstrikes-toc');
    const entry = manifest.splits.train.records[0]!;
    const frames = readTocRecord(new Uint8Array(readFileSync(join(base, entry.file))), entry, { classes: manifest.classes.length, columns: manifest.columns });
    const table = concatRows(frames.map((f) => sparseFromLogical(f.logical)));
    const rows = sliceRows(permuteColumns(table, frequencyOrder(table)), 0, 2000);
    const batch = toBatch(encodeSparse(rows));
    const l = tocRunsLayout(batch, { k: 1 });
    expect(l.rowCached).toBe(0);
    expect(l.colCached).toBeGreaterThan(500);
    expect(l.cost.times).toBe(l.cost.csrTimes);
    expect(l.cost.transposeTimes).toBeLessThan(l.cost.csrTransposeTimes);
    // Session 8's rule (one set, its prices) caches the same codes on both sides: 888 of them (913 before session 15 rebuilt
    // the bundled table in the row order the build makes now).
    const one = tocRunsLayout(batch, { k: 1, sides: 'one', prices: pricesFor(1, RUNS_PRICES_S8) });
    expect([one.rowCached, one.colCached]).toEqual([888, 888]);
    const dense = new Float32Array(rows.rows * rows.cols);
    for (let r = 0; r < rows.rows; r++) for (let t = rows.rowPtr[r]!; t < rows.rowPtr[r + 1]!; t++) dense[r * rows.cols + rows.colIndex[t]!] = rows.values[t]!;
    exactProducts(l, dense, 1);
    exactProducts(one, dense, 1);
  });
});
