// The "resolved runs" GPU layout of a TOC batch (docs/toc.md, "Kernel design").
// Built once per batch on the CPU, in time linear in the non-zeros:
//   - a code used by enough rows to pay for itself is *cached*: its expansion
//     into first-layer pairs (its run) is stored once, and the kernels compute
//     its partial sum H[q] = sum of val * M[col] over the run once per output column;
//   - every other code is written out inline as its pairs, so a row without
//     reuse costs what CSR costs.
// The kernels put H after the rows of M in one operand X = [M; H] (and G after
// the rows of the transposed product's M), so every row of A is one list of
// (row of X, pair) items and a product is one CSR-shaped gather over X: a cached
// code is just one more term, read like a non-zero. No atomics, no barriers.
import type { TocBatch } from './batch.js';

/** One product side's share of the work: its cached set S, and the items its gather and fill read. */
export interface RunsSideModel {
  /** Codes written out inline on this side, and the pairs they expand to. */
  inlineCodes: number;
  inlinePairs: number;
  /** Codes this side caches |S|, the pairs of their runs, and their uses in D. */
  cachedCodes: number;
  cachedRunPairs: number;
  cachedUses: number;
  /** Terms per output column of this side's product: inlinePairs + cachedRunPairs + cachedUses (<= nnz under the cost and terms rules). */
  terms: number;
  /**
   * Lane-padded items at the layout's k (laneSpan, with the side's prices' lanes): of the gather, of the fill (run_sums over
   * the cached runs, or occurrence_sums over their uses) and of CSR's product on this side. With lanes = 1, the plain counts.
   */
  gatherSpan: number;
  fillSpan: number;
  csrSpan: number;
}

/**
 * Pairs and indexes every kernel term reads, TOC against CSR (per output column). Each side has its own cached set (session 10):
 * `row` serves A·M and A·v (A's rows: rowItems, runItems, H), `col` serves Aᵀ·M and v·A (A's columns: colItems,
 * occurrenceRows, G).
 */
export interface RunsWorkModel {
  /** Non-zeros: the terms CSR sums per output column, in either product. */
  nnz: number;
  row: RunsSideModel;
  col: RunsSideModel;
  /** Mean terms per output column of the two products, (row.terms + col.terms) / 2: the layout's T against nnz. */
  terms: number;
}

export interface TocRunsLayout {
  rows: number;
  cols: number;
  /** |I|: first-layer pairs. */
  pairCount: number;
  /**
   * Float32 value of each pair, and one more, 1.0, at index pairCount (unitPair): the pair of every item
   * that reads a cached sum, so all items multiply alike.
   */
  values: Float32Array;
  unitPair: number;
  /**
   * Cached codes of each side: H takes rowCached rows after those of M in A·M (X = [M; H]), G colCached rows after those of
   * M in Aᵀ·M (X = [M; G]). The two sets are chosen apart (RunsLayoutOptions.sides).
   */
  rowCached: number;
  colCached: number;
  /** Width of the index list occurrenceRows: 16 (two per u32, low half first) or 32. */
  indexBits: 16 | 32;
  /** Every pair's value is exactly 1.0 (one-hot tables): the kernels skip value loads. */
  unitValues: boolean;
  /**
   * Row r of A is items rowItems[rowBounds[r] .. rowBounds[r+1]): (column c, pair) for each inline pair (X row c is M row c),
   * then (cols + q, unitPair) for each code q of the row side's cached set (X row cols + q is H[q]).
   */
  rowBounds: Uint32Array;
  rowItems: Uint32Array;
  /** Row-side cached code q expands to the (column, pair) items runItems[runOffsets[q] .. runOffsets[q+1]): H[q] = sum of val * M[column]. */
  runOffsets: Uint32Array;
  runItems: Uint32Array;
  /** Rows whose D holds column-side cached code q (a code occurs at most once per row): G[q] = sum of M[row]. */
  occurrenceOffsets: Uint32Array;
  occurrenceRows: Uint32Array;
  /**
   * Column c of A is items colItems[colBounds[c] .. colBounds[c+1]): (row r, pair) for each inline pair, then (rows + q, pair)
   * for each run of the column side's cached set holding c (X row rows + q is G[q]).
   */
  colBounds: Uint32Array;
  /**
   * Each item (here, in rowItems and runItems) is (hi << pairBits) | pair in one u32, or hi and pair in two when that needs
   * more than 32 bits (wideItems); but see rowPlain / colPlain.
   */
  colItems: Uint32Array;
  pairBits: number;
  wideItems: boolean;
  /**
   * The side caches nothing and its items are plain (RunsLayoutOptions.plainSides): rowItems (colItems) hold hi alone, one
   * u32 each, and item t's value is rowValues[t] (colValues[t]), empty when every value is 1. Session 11: the packed items'
   * unpacking and the value load that waits on it cost 3-8% over CSR where nothing is cached (docs/toc-kernels-log.md, "Session 11").
   */
  rowPlain: boolean;
  colPlain: boolean;
  rowValues: Float32Array;
  colValues: Float32Array;
  model: RunsWorkModel;
  /** The k the layout was made for, and what runsCost predicts of it there (whatever rule chose its cached codes). */
  k: number;
  cost: RunsCost;
}

/** Bits to index n things (at least 1). */
const bitsFor = (n: number): number => Math.max(1, Math.ceil(Math.log2(Math.max(n, 2))));

/**
 * Caching a code of `len` pairs used `uses` times costs len (its run) + uses (one read per use)
 * instead of len * uses terms: worth it only when that is strictly fewer.
 */
export const worthCaching = (len: number, uses: number): boolean => len * uses > len + uses;

/**
 * The session-4..6 rule (`cache: 'terms'`, kept for A/B runs): caching anything costs each product a fixed extra (M copied
 * into X = [M; H] and one more dispatch), so a batch whose cached codes would save less than this share of its non-zeros
 * caches none. It ignores k and the fill's invocations; the default rule is now the cost rule (runsCost).
 */
export const MIN_SAVED_SHARE = 0.05;

/**
 * Prices of the work units of one product, in µs of GPU time: per product (its own dispatch), per fill dispatch (the
 * gather waits for it), per invocation, per term (an item and its row of X; a quad term moves 4 output columns as a vec4)
 * and per float of M copied into X. Scalar: one output column per invocation (k not a multiple of 4, e.g. A·v, v·A, logistic regression on
 * 2 classes); quad: 4 per invocation (k a multiple of 4: the TOC MLP's k = 64).
 */
export interface RunsPrices {
  /** Every product's own dispatch (the gather's, or CSR's). */
  base: number;
  /** The fill's dispatch, when something is cached (with the gather waiting for it). */
  dispatch: number;
  invocation: number;
  /** Per lane-padded item (laneSpan): a lane group runs as long as its longest list. */
  term: number;
  copy: number;
  /**
   * Invocations that run in lockstep (SwiftShader: a SIMD group of lanes), so a group of them takes as long as its longest
   * list of items. Fitted as the rest; absent or 1: items priced one by one (session 8's model).
   */
  lanes?: number;
}

/** Prices of both sides of a layout: A's rows (A·M, A·v: CSR's row kernel, the runs gather over rowItems, run_sums) and columns (Aᵀ·M, v·A). */
export interface SidePrices {
  row: RunsPrices;
  col: RunsPrices;
}

/** The same prices on both sides (session 8's model, and tests). */
export const bothSides = (p: RunsPrices): SidePrices => ({ row: p, col: p });

/**
 * Session 8's prices, one set for both sides (kept for A/B runs of the one-set rule, RunsLayoutOptions.sides = 'one'):
 *   npx tsx bench/fit-runs-costs.ts --rev 5c98c27 --report bench/results/toc-kernels-s8-first-prices.md@4aa22c0
 */
export const RUNS_PRICES_S8: { scalar: SidePrices; quad: SidePrices } = {
  scalar: bothSides({ base: 19.4, dispatch: 23.4, invocation: 0.00895, term: 0.0107, copy: 0.00111 }),
  quad: bothSides({ base: 17.3, dispatch: 28.9, invocation: 0.0326, term: 0.0108, copy: 0.00111 }),
};

/**
 * FITTED, NOT DERIVED, and only for SwiftShader: weighted least squares (errors relative to the product, non-negative
 * prices) over the GPU-side medians of kernel bench runs on SwiftShader (shared 2-core machine), pooled (which: below).
 * Each side is fitted on its own products: A·v and A·M for `row`, v·A and Aᵀ·M for `col`; scalar (k = 1) and quad (k = 64)
 * apart. base, invocation and term come from CSR and "gather only", then dispatch (and, quad, copy) from the fills (runs −
 * gather only) of the batches that cached codes; the scalar fit takes the quad copy price of its side; lanes is the
 * lane-group width with the least error over all products. Fitted on sessions 6 and 8's four reports (all of one kernel
 * version; Fashion-MNIST left out, not on the machine), 184 CSR and gather-only points and 50 fills:
 *   npx tsx bench/fit-runs-costs.ts --rev 5c98c27 --rev a3aa0b6 --report bench/results/toc-kernels-s8-first-prices.md@4aa22c0 \
 *     --report bench/results/toc-kernels-rule-terms.md
 * weighted rms error of the products 13.0% (lanes 1, session 8's model refitted per side: 14.9%; one price set for both
 * sides at lanes 4: 13.5%), fills fit against measured −49% to +33%. A real GPU has other prices (and lanes) and needs its
 * own fit (run the bench there, then the script on its report).
 */
export const RUNS_PRICES: { scalar: SidePrices; quad: SidePrices } = {
  scalar: {
    row: { base: 15.1, dispatch: 22.0, invocation: 0.0104, term: 0.00926, copy: 0, lanes: 4 },
    col: { base: 24.1, dispatch: 20.1, invocation: 0, term: 0.00978, copy: 0.000531, lanes: 4 },
  },
  quad: {
    row: { base: 5.52, dispatch: 44.9, invocation: 0.0232, term: 0.0117, copy: 0, lanes: 4 },
    col: { base: 30.7, dispatch: 63.7, invocation: 0.0283, term: 0.011, copy: 0.000531, lanes: 4 },
  },
};

/** The prices of a product with k output columns: quad where k is a multiple of 4 (the kernels' quad entry points), else scalar. */
export const pricesFor = (k: number, table: { scalar: SidePrices; quad: SidePrices } = RUNS_PRICES): SidePrices =>
  k % 4 === 0 && k > 0 ? table.quad : table.scalar;

/** Output columns (scalar) or quads of them (quad) an invocation of a product with k columns computes for. */
export const invocationWidth = (k: number): number => (k % 4 === 0 && k > 0 ? k / 4 : k);

/**
 * Output rows (of the gather; cached codes of the fill) that share a group of `lanes` lockstep invocations at k: the scalar
 * forms put consecutive output rows on consecutive invocations (one output column per grid row), the quad forms put one
 * output row's k / 4 quads next to each other first.
 */
export const laneRows = (k: number, lanes = 1): number => Math.max(1, Math.floor(lanes / (k % 4 === 0 && k > 0 ? k / 4 : 1)));

/**
 * Σ over groups of g consecutive lists of g × the longest list's length: the items a product's lanes spend their time on
 * when g lists run in lockstep. lengths(i) for i < n; with g = 1, the plain sum.
 */
export function laneSpan(n: number, lengths: (i: number) => number, g: number): number {
  let span = 0;
  for (let start = 0; start < n; start += g) {
    let longest = 0;
    for (let i = start; i < Math.min(n, start + g); i++) longest = Math.max(longest, lengths(i));
    span += g * longest;
  }
  return span;
}

/** laneSpan of the lists of a bounds array (bounds[i] .. bounds[i + 1]). */
export const boundsSpan = (bounds: ArrayLike<number>, g: number): number => laneSpan(bounds.length - 1, (i) => bounds[i + 1]! - bounds[i]!, g);

/** The products whose costs a layout is chosen for: A·M (times) and Aᵀ·M (transposeTimes), as the first layer's forward and gradient. */
export interface RunsCost {
  k: number;
  /** Predicted µs of the runs kernels (fill, when something is cached, and gather) and of CSR, per product. */
  times: number;
  transposeTimes: number;
  csrTimes: number;
  csrTransposeTimes: number;
  /** (times + transposeTimes) / (csrTimes + csrTransposeTimes): predicted runs / CSR. */
  ratio: number;
}

/** One side's counts runsCost needs. */
export type RunsSideCounts = Pick<RunsSideModel, 'cachedCodes' | 'gatherSpan' | 'fillSpan' | 'csrSpan'>;
/** The counts runsCost needs: a layout's work model (or a candidate's) per side, and the batch's shape. */
export interface RunsCostInput {
  rows: number;
  cols: number;
  row: RunsSideCounts;
  col: RunsSideCounts;
}

/**
 * The cost model of the runs kernels (src/gpu/toc/runs.ts) at k output columns, against CSR's (csr.wgsl, the same kernel
 * choices), each side at its own prices. With w = invocationWidth(k), a product whose side caches |S| codes costs
 *   [S ≠ ∅] (dispatch + copy · mRows · k) + invocation · w · (outRows + |S|) + term · w · (gather span + fill span) + base,
 * where a span is the lane-padded count of items (laneSpan: lanes lockstep invocations take as long as the longest of
 * their lists). A·M gathers over rows (inline pairs + uses of its cached codes; fill: their runs' pairs, mRows = cols),
 * Aᵀ·M over columns (inline pairs + the runs' pairs of its cached codes; fill: their uses, mRows = rows). CSR, per side:
 * base + invocation · w · outRows + term · w · (its rows' or columns' non-zeros, lane-padded).
 */
export function runsCost(m: RunsCostInput, k: number, prices: SidePrices = pricesFor(k)): RunsCost {
  const w = invocationWidth(k);
  const gather = (p: RunsPrices, outRows: number, span: number) => p.base + p.invocation * w * outRows + p.term * w * span;
  const side = (s: RunsSideCounts, p: RunsPrices, outRows: number, mRows: number) =>
    (s.cachedCodes > 0 ? p.dispatch + p.copy * mRows * k + p.invocation * w * s.cachedCodes : 0) + gather(p, outRows, s.gatherSpan + s.fillSpan);
  const times = side(m.row, prices.row, m.rows, m.cols);
  const transposeTimes = side(m.col, prices.col, m.cols, m.rows);
  const csrTimes = gather(prices.row, m.rows, m.row.csrSpan);
  const csrTransposeTimes = gather(prices.col, m.cols, m.col.csrSpan);
  const csr = csrTimes + csrTransposeTimes;
  return { k, times, transposeTimes, csrTimes, csrTransposeTimes, ratio: csr > 0 ? (times + transposeTimes) / csr : 1 };
}

/** Which codes a layout caches. */
export type CacheRule =
  /** The cost rule (default): what runsCost predicts pays at the layout's k, per side (or over both products: sides 'one'). */
  | 'cost'
  /** The session-4..6 rule: every code with len·uses > len + uses, if they save at least minSavedShare of nnz (both sides alike). */
  | 'terms'
  /** Every code of D, on both sides (tests: the layout must stay correct however much is cached). */
  | 'all'
  /** None: one CSR-shaped gather over M. */
  | 'none';

/** k the layout is made for when none is given: the TOC MLP's hidden width (the lab passes its model's k, PipelineOptions.tocColumns). */
export const DEFAULT_RUNS_K = 64;

export interface RunsLayoutOptions {
  /** Output columns of the products the layout will serve (the first layer's units); the cost rule depends on it. Default DEFAULT_RUNS_K. */
  k?: number;
  /** Default 'cost'. */
  cache?: CacheRule;
  /**
   * 'cost' only. 'each' (default, session 10): each side caches what pays for its own product, so A·v can stay uncached
   * while v·A caches. 'one' (session 8, kept for A/B runs): one set for both sides, what pays over the two products together.
   */
  sides?: 'each' | 'one';
  /** Prices for the cost rule (default pricesFor(k)). */
  prices?: SidePrices;
  /** 'terms' only: cache nothing unless caching saves at least this share of the non-zeros (default MIN_SAVED_SHARE; 0: any saving). */
  minSavedShare?: number;
  /**
   * 'terms' only: cache a code only if it saves at least this many terms per output column, len·uses − len − uses
   * (default 1: any saving, worthCaching). A bench knob.
   */
  minSavedPerCode?: number;
  /**
   * Which sides that cache nothing lay their items out plain (session 11): each item its row of M alone (no pair bits to
   * unpack), its value beside it in rowValues / colValues, so the gather is CSR's loop load for load. 'unit' (default):
   * only in batches whose values are all 1, where no value is stored and the bytes stay those of packed items. 'all': every
   * batch; a batch with other values then uploads 4 more bytes per item of such a side (measured 3-5% faster products,
   * more bytes than the time they save when a batch is uploaded for one step). 'none': session 10's packed items.
   */
  plainSides?: PlainSides;
}

export type PlainSides = 'unit' | 'all' | 'none';

/** What the cost rule needs of a batch to price a cached set on either side, without building its layout. */
interface CostContext {
  rows: number;
  cols: number;
  k: number;
  codes: Uint32Array;
  rowOffsets: Uint32Array;
  depth: Uint32Array;
  uses: Uint32Array;
  /** Distinct codes of D in first-use order (the order of H's and G's rows). */
  firstUse: Uint32Array;
  /** Non-zeros per row and per column of A. */
  rowNnz: Uint32Array;
  colNnz: Uint32Array;
  /** The pairs' columns of a code's run (root to leaf). */
  runCols: (c: number) => number[];
}

/** runsCost of one side caching the codes marked in `set`, from counts alone (what tocRunsLayout would build). */
function sideCost(x: CostContext, set: Uint8Array, side: 'row' | 'col', p: RunsPrices): number {
  const { rows, cols, k, codes, rowOffsets, depth, uses } = x;
  const w = invocationWidth(k);
  const g = laneRows(k, p.lanes);
  const cachedOrder = Array.from(x.firstUse).filter((c) => set[c]);
  let gatherSpan: number;
  let fillSpan: number;
  if (side === 'row') {
    const len = new Uint32Array(rows);
    for (let r = 0; r < rows; r++) {
      let n = 0;
      for (let t = rowOffsets[r]!; t < rowOffsets[r + 1]!; t++) n += set[codes[t]!] ? 1 : depth[codes[t]!]!;
      len[r] = n;
    }
    gatherSpan = laneSpan(rows, (i) => len[i]!, g);
    fillSpan = laneSpan(cachedOrder.length, (q) => depth[cachedOrder[q]!]!, g);
  } else {
    const len = Uint32Array.from(x.colNnz);
    for (const c of cachedOrder) for (const col of x.runCols(c)) len[col]! -= uses[c]! - 1;
    gatherSpan = laneSpan(cols, (i) => len[i]!, g);
    fillSpan = laneSpan(cachedOrder.length, (q) => uses[cachedOrder[q]!]!, g);
  }
  const outRows = side === 'row' ? rows : cols;
  const mRows = side === 'row' ? cols : rows;
  const fill = cachedOrder.length > 0 ? p.dispatch + p.copy * mRows * k + p.invocation * w * cachedOrder.length : 0;
  return fill + p.base + p.invocation * w * outRows + p.term * w * (gatherSpan + fillSpan);
}

/**
 * The cost rule's choice, for one side or (sides 'one') for both together. The lane padding makes runsCost non-linear in
 * the cached set, so the rule prices a family of nested sets and keeps the cheapest: the codes that save terms
 * (len·uses > len + uses), in decreasing order of what they save, cut after all of them, half, a quarter, ... one, or none,
 * or after the last whose saving pays its fill invocation (the exact optimum when lanes = 1).
 * Each side's pick is the cheapest member of the family for its own product, so it never costs more (by the model) than
 * caching nothing or than the one set chosen for both.
 */
function chooseByCost(x: CostContext, sides: Array<['row' | 'col', RunsPrices]>): Uint8Array {
  const { depth, uses } = x;
  const saving = (c: number) => depth[c]! * uses[c]! - depth[c]! - uses[c]!;
  const ranked = Array.from(x.firstUse)
    .filter((c) => saving(c) > 0)
    .sort((a, b) => saving(b) - saving(a) || a - b);
  // With lanes = 1 runsCost is linear in the set and its optimum is the codes whose saving beats their fill invocation
  // (session 8's rule): a prefix of the ranking, and a member of the family.
  const linear = ranked.filter((c) => sides.reduce((sum, [, p]) => sum + p.term * saving(c) - p.invocation, 0) > 0).length;
  const sizes = [0, linear];
  for (let n = ranked.length; n >= 1; n = n === 1 ? 0 : Math.ceil(n / 2)) sizes.push(n);
  let best = new Uint8Array(depth.length);
  let bestCost = Infinity;
  for (const n of [...new Set(sizes)].sort((a, b) => a - b)) {
    const set = new Uint8Array(depth.length);
    for (let i = 0; i < n; i++) set[ranked[i]!] = 1;
    const cost = sides.reduce((sum, [side, p]) => sum + sideCost(x, set, side, p), 0);
    if (cost < bestCost - 1e-9) [best, bestCost] = [set, cost];
  }
  return best;
}

/** Stores indexes below 2^16 two per u32 (low half first), else one per u32. */
function packIndexes(values: ArrayLike<number>, bits: 16 | 32): Uint32Array {
  if (bits === 32) return Uint32Array.from(values);
  const halves = new Uint16Array(values.length + (values.length & 1));
  halves.set(values);
  return new Uint32Array(halves.buffer);
}

/** A side's cached set: slot[c] = q (its row in H or G, in first-use order) for a cached code, else -1; and its counts. */
interface SideSet {
  slot: Int32Array;
  cached: number;
  runPairs: number;
  uses: number;
  inlinePairs: number;
}

function sideSet(wanted: Uint8Array, codes: Uint32Array, depth: Uint32Array, nnz: number): SideSet {
  const slot = new Int32Array(depth.length).fill(-1);
  let cached = 0;
  let runPairs = 0;
  let uses = 0;
  let cachedPairs = 0;
  for (const c of codes) {
    if (!wanted[c]) continue;
    if (slot[c] === -1) {
      slot[c] = cached++;
      runPairs += depth[c]!;
    }
    uses++;
    cachedPairs += depth[c]!;
  }
  return { slot, cached, runPairs, uses, inlinePairs: nnz - cachedPairs };
}

const sideModel = (s: SideSet, codes: number, spans: Pick<RunsSideModel, 'gatherSpan' | 'fillSpan' | 'csrSpan'>): RunsSideModel => ({
  inlineCodes: codes - s.uses,
  inlinePairs: s.inlinePairs,
  cachedCodes: s.cached,
  cachedRunPairs: s.runPairs,
  cachedUses: s.uses,
  terms: s.inlinePairs + s.runPairs + s.uses,
  ...spans,
});

export function tocRunsLayout(batch: TocBatch, options: RunsLayoutOptions = {}): TocRunsLayout {
  const { rows, cols, nodeCount, nodeParent, codes, rowOffsets } = batch;
  const pairCount = batch.firstLayerSize;
  // Depth = run length; uses = occurrences in D. parent < child, so one forward pass.
  const depth = new Uint32Array(nodeCount);
  for (let n = 1; n < nodeCount; n++) depth[n] = depth[nodeParent[n]!]! + 1;
  const uses = new Uint32Array(nodeCount);
  for (const c of codes) uses[c]!++;
  // Node -> pair index of its key: node p + 1 is pair p; later nodes replay Algorithm 2
  // (the node made at code k, k not first in its row, is keyed on the first pair of code k).
  const keyPair = new Uint32Array(nodeCount);
  for (let n = 1; n <= pairCount; n++) keyPair[n] = n - 1;
  let made = pairCount + 1;
  for (let r = 0; r < rows; r++) {
    for (let k = rowOffsets[r]! + 1; k < rowOffsets[r + 1]!; k++) keyPair[made++] = batch.nodeFirstPair[codes[k]!]!;
  }

  // Which codes each side caches, by the rule asked for.
  const nnz = codes.reduce((s, c) => s + depth[c]!, 0);
  const k = options.k ?? DEFAULT_RUNS_K;
  const rule = options.cache ?? 'cost';
  const prices = options.prices ?? pricesFor(k);
  let wantedRow: Uint8Array;
  let wantedCol: Uint8Array;
  // Non-zeros per row and column (CSR's lists), and the columns of each code's run, for the cost rule and the spans.
  const rowNnz = new Uint32Array(rows);
  for (let r = 0; r < rows; r++) for (let t = rowOffsets[r]!; t < rowOffsets[r + 1]!; t++) rowNnz[r]! += depth[codes[t]!]!;
  // Codes whose path passes through each node (children have higher indexes than their parents): one backward pass.
  const through = Uint32Array.from(uses);
  for (let n = nodeCount - 1; n > 0; n--) through[nodeParent[n]!]! += through[n]!;
  const colNnz = new Uint32Array(cols);
  for (let n = 1; n < nodeCount; n++) colNnz[batch.firstLayerCol[keyPair[n]!]!]! += through[n]!;
  const runCols = (c: number) => {
    const out: number[] = [];
    for (let x = c; x !== 0; x = nodeParent[x]!) out.push(batch.firstLayerCol[keyPair[x]!]!);
    return out;
  };
  if (rule === 'cost') {
    const seen = new Uint8Array(nodeCount);
    const firstUse: number[] = [];
    for (const c of codes) {
      if (seen[c]) continue;
      seen[c] = 1;
      firstUse.push(c);
    }
    const x: CostContext = { rows, cols, k, codes, rowOffsets, depth, uses, firstUse: Uint32Array.from(firstUse), rowNnz, colNnz, runCols };
    if (options.sides === 'one')
      wantedRow = wantedCol = chooseByCost(x, [
        ['row', prices.row],
        ['col', prices.col],
      ]);
    else {
      wantedRow = chooseByCost(x, [['row', prices.row]]);
      wantedCol = chooseByCost(x, [['col', prices.col]]);
    }
  } else {
    const wanted = new Uint8Array(nodeCount);
    if (rule === 'all') for (let n = 1; n < nodeCount; n++) wanted[n] = uses[n]! > 0 ? 1 : 0;
    else if (rule === 'terms') {
      let saved = 0;
      for (let n = 1; n < nodeCount; n++) {
        const save = depth[n]! * uses[n]! - depth[n]! - uses[n]!;
        if (worthCaching(depth[n]!, uses[n]!) && save >= (options.minSavedPerCode ?? 1)) {
          wanted[n] = 1;
          saved += save;
        }
      }
      if (saved < (options.minSavedShare ?? MIN_SAVED_SHARE) * nnz) wanted.fill(0);
    }
    wantedRow = wantedCol = wanted;
  }
  const rowSet = sideSet(wantedRow, codes, depth, nnz);
  const colSet = sideSet(wantedCol, codes, depth, nnz);
  const pairCol = (p: number) => batch.firstLayerCol[p]!;
  const unitPair = pairCount;
  /** Writes code c's pairs (root to leaf: increasing columns) into out[end - depth .. end). */
  const expand = (c: number, out: Uint32Array, end: number) => {
    let at = end;
    for (let x = c; x !== 0; x = nodeParent[x]!) out[--at] = keyPair[x]!;
  };

  // Row side: each row's inline pairs (code order, each code root to leaf), then its codes cached on this side; the runs of
  // those codes (H's fill).
  const rowCodeOf = new Uint32Array(rowSet.cached);
  for (let n = 1; n < nodeCount; n++) if (rowSet.slot[n]! >= 0) rowCodeOf[rowSet.slot[n]!] = n;
  const runOffsets = new Uint32Array(rowSet.cached + 1);
  const runList = new Uint32Array(rowSet.runPairs);
  for (let q = 0; q < rowSet.cached; q++) {
    runOffsets[q + 1] = runOffsets[q]! + depth[rowCodeOf[q]!]!;
    expand(rowCodeOf[q]!, runList, runOffsets[q + 1]!);
  }
  const rowBounds = new Uint32Array(rows + 1);
  const rowHi = new Uint32Array(rowSet.inlinePairs + rowSet.uses);
  const rowPair = new Uint32Array(rowHi.length);
  let item = 0;
  for (let r = 0; r < rows; r++) {
    rowBounds[r] = item;
    for (let t = rowOffsets[r]!; t < rowOffsets[r + 1]!; t++) {
      const c = codes[t]!;
      if (rowSet.slot[c]! >= 0) continue;
      expand(c, rowPair, (item += depth[c]!));
    }
    for (let t = rowBounds[r]!; t < item; t++) rowHi[t] = pairCol(rowPair[t]!);
    for (let t = rowOffsets[r]!; t < rowOffsets[r + 1]!; t++) {
      const q = rowSet.slot[codes[t]!]!;
      if (q < 0) continue;
      rowHi[item] = cols + q;
      rowPair[item++] = unitPair;
    }
  }
  rowBounds[rows] = item;

  // Column side: the rows holding each code it caches (G's fill), then per column its inline pairs in row order and the
  // pairs of its cached runs in cached-code order.
  const occurrenceOffsets = new Uint32Array(colSet.cached + 1);
  for (const c of codes) if (colSet.slot[c]! >= 0) occurrenceOffsets[colSet.slot[c]! + 1]!++;
  for (let q = 0; q < colSet.cached; q++) occurrenceOffsets[q + 1]! += occurrenceOffsets[q]!;
  const occurrenceFill = occurrenceOffsets.slice(0, colSet.cached);
  const occurrenceList = new Uint32Array(colSet.uses);
  const colCodeOf = new Uint32Array(colSet.cached);
  for (let n = 1; n < nodeCount; n++) if (colSet.slot[n]! >= 0) colCodeOf[colSet.slot[n]!] = n;
  const scratch = new Uint32Array(depth.reduce((m, d) => Math.max(m, d), 1));
  const colCount = new Uint32Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let t = rowOffsets[r]!; t < rowOffsets[r + 1]!; t++) {
      const c = codes[t]!;
      const q = colSet.slot[c]!;
      if (q >= 0) occurrenceList[occurrenceFill[q]!++] = r;
      else for (let x = c; x !== 0; x = nodeParent[x]!) colCount[pairCol(keyPair[x]!)]!++;
    }
  }
  for (let q = 0; q < colSet.cached; q++) for (let x = colCodeOf[q]!; x !== 0; x = nodeParent[x]!) colCount[pairCol(keyPair[x]!)]!++;

  const pairBits = bitsFor(pairCount + 1);
  const wideItems = pairBits + bitsFor(Math.max(rows, cols) + Math.max(rowSet.cached, colSet.cached)) > 32;
  const unitValues = batch.firstLayerVal.subarray(0, pairCount).every((v) => v === 1);
  const plainSides = options.plainSides ?? 'unit';
  const plainOn = plainSides === 'all' || (plainSides === 'unit' && unitValues);
  const rowPlain = plainOn && rowSet.cached === 0;
  const colPlain = plainOn && colSet.cached === 0;
  const packed = (out: Uint32Array, at: number, hi: number, p: number) => {
    if (wideItems) {
      out[2 * at] = hi;
      out[2 * at + 1] = p;
    } else out[at] = ((hi << pairBits) | p) >>> 0;
  };
  /** A plain side's item: hi alone, and its pair's value beside it (unless every value is 1). */
  const plain = (vals: Float32Array) => (out: Uint32Array, at: number, hi: number, p: number) => {
    out[at] = hi;
    if (!unitValues) vals[at] = batch.firstLayerVal[p]!;
  };
  const rowValues = new Float32Array(rowPlain && !unitValues ? rowHi.length : 0);
  const colValues = new Float32Array(colPlain && !unitValues ? colSet.inlinePairs : 0);
  const rowPack = rowPlain ? plain(rowValues) : packed;
  const colPack = colPlain ? plain(colValues) : packed;
  const rowItems = new Uint32Array((wideItems && !rowPlain ? 2 : 1) * rowHi.length);
  for (let t = 0; t < rowHi.length; t++) rowPack(rowItems, t, rowHi[t]!, rowPair[t]!);
  const runItems = new Uint32Array((wideItems ? 2 : 1) * runList.length);
  for (let t = 0; t < runList.length; t++) packed(runItems, t, pairCol(runList[t]!), runList[t]!);
  const colBounds = new Uint32Array(cols + 1);
  for (let c = 0; c < cols; c++) colBounds[c + 1] = colBounds[c]! + colCount[c]!;
  const colFill = colBounds.slice(0, cols);
  const colItems = new Uint32Array((wideItems && !colPlain ? 2 : 1) * (colSet.inlinePairs + colSet.runPairs));
  for (let r = 0; r < rows; r++) {
    for (let t = rowOffsets[r]!; t < rowOffsets[r + 1]!; t++) {
      const c = codes[t]!;
      if (colSet.slot[c]! >= 0) continue;
      expand(c, scratch, depth[c]!);
      for (let i = 0; i < depth[c]!; i++) colPack(colItems, colFill[pairCol(scratch[i]!)]!++, r, scratch[i]!);
    }
  }
  for (let q = 0; q < colSet.cached; q++) {
    const c = colCodeOf[q]!;
    expand(c, scratch, depth[c]!);
    for (let i = 0; i < depth[c]!; i++) packed(colItems, colFill[pairCol(scratch[i]!)]!++, rows + q, scratch[i]!);
  }

  const values = new Float32Array(pairCount + 1);
  values.set(batch.firstLayerVal.subarray(0, pairCount));
  values[unitPair] = 1;
  const indexBits = Math.max(pairCount + 1, colSet.cached, rows) <= 0x10000 ? 16 : 32;
  const gRow = laneRows(k, prices.row.lanes);
  const gCol = laneRows(k, prices.col.lanes);
  const row = sideModel(rowSet, codes.length, {
    gatherSpan: boundsSpan(rowBounds, gRow),
    fillSpan: boundsSpan(runOffsets, gRow),
    csrSpan: laneSpan(rows, (i) => rowNnz[i]!, gRow),
  });
  const col = sideModel(colSet, codes.length, {
    gatherSpan: boundsSpan(colBounds, gCol),
    fillSpan: boundsSpan(occurrenceOffsets, gCol),
    csrSpan: laneSpan(cols, (i) => colNnz[i]!, gCol),
  });
  const model: RunsWorkModel = { nnz, row, col, terms: (row.terms + col.terms) / 2 };
  return {
    rows,
    cols,
    pairCount,
    values,
    unitPair,
    rowCached: rowSet.cached,
    colCached: colSet.cached,
    indexBits,
    unitValues,
    rowBounds,
    rowItems,
    runOffsets,
    runItems,
    occurrenceOffsets,
    occurrenceRows: packIndexes(occurrenceList, indexBits),
    colBounds,
    colItems,
    pairBits,
    wideItems,
    rowPlain,
    colPlain,
    rowValues,
    colValues,
    model,
    k,
    cost: runsCost({ rows, cols, row, col }, k, prices),
  };
}

/** Bytes the layout uploads (what TocRunsGpuBatch puts in storage buffers). */
export function runsLayoutBytes(l: TocRunsLayout): number {
  const arrays = [l.values, l.rowBounds, l.rowItems, l.rowValues, l.runOffsets, l.runItems, l.occurrenceOffsets, l.occurrenceRows, l.colBounds, l.colItems];
  return [...arrays, l.colValues].reduce((n, a) => n + a.byteLength, 0);
}
