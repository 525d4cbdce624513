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

/** Pairs and indexes every kernel term reads, TOC against CSR (per output column). */
export interface RunsWorkModel {
  /** Non-zeros: the terms CSR sums per output column, in either product. */
  nnz: number;
  /** Codes written out inline, and the pairs they expand to. */
  inlineCodes: number;
  inlinePairs: number;
  /** Cached codes |S|, the pairs of their runs, and their uses in D. */
  cachedCodes: number;
  cachedRunPairs: number;
  cachedUses: number;
  /** Terms per output column: inlinePairs + cachedRunPairs + cachedUses (<= nnz by construction). */
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
  /** |S|: cached codes; H and G take |S| rows after those of M (X = [M; H]). */
  cached: number;
  /** Width of the index list occurrenceRows: 16 (two per u32, low half first) or 32. */
  indexBits: 16 | 32;
  /** Every pair's value is exactly 1.0 (one-hot tables): the kernels skip value loads. */
  unitValues: boolean;
  /**
   * Row r of A is items rowItems[rowBounds[r] .. rowBounds[r+1]): (column c, pair) for each inline pair (X row c is M row c),
   * then (cols + q, unitPair) for each cached code q (X row cols + q is H[q]).
   */
  rowBounds: Uint32Array;
  rowItems: Uint32Array;
  /** Cached code q expands to the (column, pair) items runItems[runOffsets[q] .. runOffsets[q+1]): H[q] = sum of val * M[column]. */
  runOffsets: Uint32Array;
  runItems: Uint32Array;
  /** Rows whose D holds cached code q (a code occurs at most once per row): G[q] = sum of M[row]. */
  occurrenceOffsets: Uint32Array;
  occurrenceRows: Uint32Array;
  /**
   * Column c of A is items colItems[colBounds[c] .. colBounds[c+1]): (row r, pair) for each inline pair, then (rows + q, pair)
   * for each cached run holding c (X row rows + q is G[q]).
   */
  colBounds: Uint32Array;
  /** Each item (here, in rowItems and runItems) is (hi << pairBits) | pair in one u32, or hi and pair in two when that needs more than 32 bits (wideItems). */
  colItems: Uint32Array;
  pairBits: number;
  wideItems: boolean;
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
  term: number;
  copy: number;
}

/**
 * FITTED, NOT DERIVED, and only for SwiftShader: weighted least squares (errors relative to the product, non-negative
 * prices) over the GPU-side medians of two kernel bench runs on SwiftShader (shared 2-core machine), pooled: session 6's
 * (bench/results/toc-kernels.md at 5c98c27) and session 8's first (bench/results/toc-kernels-s8-first-prices.md, layouts
 * chosen by the first fit, 4aa22c0), each 6-7 batches × A·v, v·A (scalar, k = 1) and A·M, Aᵀ·M (quad, k = 64). Made by
 *   npx tsx bench/fit-runs-costs.ts --rev 5c98c27 --report bench/results/toc-kernels-s8-first-prices.md@4aa22c0
 * which prints every point's fit: base, invocation and term from CSR and "gather only" (rms error 13-21% of a product),
 * then dispatch and copy from the fills (runs − gather only) of the batches that cached codes (fit against measured:
 * −43% to +49% of a fill). The first fit, on session 6 alone (3 cached batches), had copy 0 and a quad dispatch of 9 µs: too cheap a fill
 * (in the session-8 run birdstrikes 250 cached 14 codes at k = 64 and its fill took 14% of A·M, while the gather saved
 * 7% against CSR). A real GPU has other prices and needs its own fit (run the bench there, then the script on its report).
 */
export const RUNS_PRICES: { scalar: RunsPrices; quad: RunsPrices } = {
  scalar: { base: 19.4, dispatch: 23.4, invocation: 0.00895, term: 0.0107, copy: 0.00111 },
  quad: { base: 17.3, dispatch: 28.9, invocation: 0.0326, term: 0.0108, copy: 0.00111 },
};

/** The prices of a product with k output columns: quad where k is a multiple of 4 (the kernels' quad entry points), else scalar. */
export const pricesFor = (k: number): RunsPrices => (k % 4 === 0 && k > 0 ? RUNS_PRICES.quad : RUNS_PRICES.scalar);

/** Output columns (scalar) or quads of them (quad) an invocation of a product with k columns computes for. */
export const invocationWidth = (k: number): number => (k % 4 === 0 && k > 0 ? k / 4 : k);

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

/** The counts runsCost needs: a layout's work model (or a candidate's), and the batch's shape. */
export type RunsCostInput = Pick<RunsWorkModel, 'nnz' | 'inlinePairs' | 'cachedCodes' | 'cachedRunPairs' | 'cachedUses'> & { rows: number; cols: number };

/**
 * The cost model of the runs kernels (src/gpu/toc/runs.ts) at k output columns, against CSR's (csr.wgsl, the same kernel
 * choices). With w = invocationWidth(k), a product that caches |S| codes costs
 *   [S ≠ ∅] (dispatch + copy · mRows · k) + invocation · w · (outRows + |S|) + term · w · (gather items + fill items),
 * where A·M gathers over rows (inline pairs + uses of cached codes; fill: the runs' pairs, mRows = cols) and Aᵀ·M over
 * columns (inline pairs + the runs' pairs; fill: the uses, mRows = rows), plus base for the gather's own dispatch. CSR:
 * base + invocation · w · outRows + term · w · nnz.
 */
export function runsCost(m: RunsCostInput, k: number, prices: RunsPrices = pricesFor(k)): RunsCost {
  const w = invocationWidth(k);
  const fill = (mRows: number) => (m.cachedCodes > 0 ? prices.dispatch + prices.copy * mRows * k + prices.invocation * w * m.cachedCodes : 0);
  const gather = (outRows: number, items: number) => prices.base + prices.invocation * w * outRows + prices.term * w * items;
  const terms = m.inlinePairs + m.cachedRunPairs + m.cachedUses;
  const times = fill(m.cols) + gather(m.rows, terms);
  const transposeTimes = fill(m.rows) + gather(m.cols, terms);
  const csrTimes = gather(m.rows, m.nnz);
  const csrTransposeTimes = gather(m.cols, m.nnz);
  const csr = csrTimes + csrTransposeTimes;
  return { k, times, transposeTimes, csrTimes, csrTransposeTimes, ratio: csr > 0 ? (times + transposeTimes) / csr : 1 };
}

/** Which codes a layout caches. */
export type CacheRule =
  /** The cost rule (default): what runsCost predicts pays at the layout's k, over both products. */
  | 'cost'
  /** The session-4..6 rule: every code with len·uses > len + uses, if they save at least minSavedShare of nnz. */
  | 'terms'
  /** Every code of D (tests: the layout must stay correct however much is cached). */
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
  /** Prices for the cost rule (default pricesFor(k)). */
  prices?: RunsPrices;
  /** 'terms' only: cache nothing unless caching saves at least this share of the non-zeros (default MIN_SAVED_SHARE; 0: any saving). */
  minSavedShare?: number;
  /**
   * 'terms' only: cache a code only if it saves at least this many terms per output column, len·uses − len − uses
   * (default 1: any saving, worthCaching). A bench knob.
   */
  minSavedPerCode?: number;
}

/**
 * The cost rule's choice, code by code: caching code c (run length len, used `uses` times) saves, over A·M and Aᵀ·M
 * together, 2 · w · (term · (len·uses − len − uses) − invocation) µs (fewer terms, one more fill invocation per product);
 * caching anything costs 2 · dispatch + copy · (rows + cols) · k once. runsCost is linear in the cached set, so the cheapest
 * set is every code with a positive saving if those savings together beat the fixed cost, else none.
 */
function chooseByCost(depth: Uint32Array, uses: Uint32Array, rows: number, cols: number, k: number, prices: RunsPrices): Uint8Array {
  const w = invocationWidth(k);
  const chosen = new Uint8Array(depth.length);
  let saved = 0;
  for (let n = 1; n < depth.length; n++) {
    if (uses[n] === 0) continue;
    const net = 2 * w * (prices.term * (depth[n]! * uses[n]! - depth[n]! - uses[n]!) - prices.invocation);
    if (net > 0) {
      chosen[n] = 1;
      saved += net;
    }
  }
  return saved > 2 * prices.dispatch + prices.copy * (rows + cols) * k ? chosen : chosen.fill(0);
}

/** Stores indexes below 2^16 two per u32 (low half first), else one per u32. */
function packIndexes(values: ArrayLike<number>, bits: 16 | 32): Uint32Array {
  if (bits === 32) return Uint32Array.from(values);
  const halves = new Uint16Array(values.length + (values.length & 1));
  halves.set(values);
  return new Uint32Array(halves.buffer);
}

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

  // Which codes to cache, by the rule asked for.
  const nnz = codes.reduce((s, c) => s + depth[c]!, 0);
  const k = options.k ?? DEFAULT_RUNS_K;
  const rule = options.cache ?? 'cost';
  let wanted: Uint8Array;
  if (rule === 'cost') wanted = chooseByCost(depth, uses, rows, cols, k, options.prices ?? pricesFor(k));
  else {
    wanted = new Uint8Array(nodeCount);
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
  }
  // Cached codes in first-use order, each with its run (root to leaf: increasing columns).
  const slot = new Int32Array(nodeCount).fill(-1);
  let cached = 0;
  let cachedRunPairs = 0;
  for (const c of codes) {
    if (slot[c] === -1 && wanted[c]) {
      slot[c] = cached++;
      cachedRunPairs += depth[c]!;
    }
  }
  const cachedNode = new Uint32Array(cached);
  for (let n = 1; n < nodeCount; n++) if (slot[n]! >= 0) cachedNode[slot[n]!] = n;
  const runOffsets = new Uint32Array(cached + 1);
  const runList = new Uint32Array(cachedRunPairs);
  for (let q = 0; q < cached; q++) {
    const n = cachedNode[q]!;
    const start = runOffsets[q]!;
    runOffsets[q + 1] = start + depth[n]!;
    let at = start + depth[n]!;
    for (let x = n; x !== 0; x = nodeParent[x]!) runList[--at] = keyPair[x]!;
  }

  // Rows: inline pairs (code order, each code root to leaf), then cached codes.
  let cachedUses = 0;
  for (const c of codes) if (slot[c]! >= 0) cachedUses++;
  const inlinePairs = nnz - codes.reduce((s, c) => s + (slot[c]! >= 0 ? depth[c]! : 0), 0);
  const unitPair = pairCount;
  const pairCol = (p: number) => batch.firstLayerCol[p]!;
  // Row items as (row of X, pair) before packing.
  const rowBounds = new Uint32Array(rows + 1);
  const rowHi = new Uint32Array(inlinePairs + cachedUses);
  const rowPair = new Uint32Array(inlinePairs + cachedUses);
  const occurrenceOffsets = new Uint32Array(cached + 1);
  for (const c of codes) if (slot[c]! >= 0) occurrenceOffsets[slot[c]! + 1]!++;
  for (let q = 0; q < cached; q++) occurrenceOffsets[q + 1]! += occurrenceOffsets[q]!;
  const occurrenceFill = occurrenceOffsets.slice(0, cached);
  const occurrenceList = new Uint32Array(cachedUses);
  const colCount = new Uint32Array(cols);
  let item = 0;
  for (let r = 0; r < rows; r++) {
    rowBounds[r] = item;
    for (let k = rowOffsets[r]!; k < rowOffsets[r + 1]!; k++) {
      const c = codes[k]!;
      if (slot[c]! >= 0) continue;
      const end = item + depth[c]!;
      let at = end;
      for (let x = c; x !== 0; x = nodeParent[x]!) {
        at--;
        rowPair[at] = keyPair[x]!;
        rowHi[at] = pairCol(keyPair[x]!);
        colCount[rowHi[at]!]!++;
      }
      item = end;
    }
    for (let k = rowOffsets[r]!; k < rowOffsets[r + 1]!; k++) {
      const q = slot[codes[k]!]!;
      if (q < 0) continue;
      rowHi[item] = cols + q;
      rowPair[item++] = unitPair;
      occurrenceList[occurrenceFill[q]!++] = r;
    }
  }
  rowBounds[rows] = item;
  for (let t = 0; t < cachedRunPairs; t++) colCount[pairCol(runList[t]!)]!++;

  const pairBits = bitsFor(pairCount + 1);
  const wideItems = pairBits + bitsFor(Math.max(rows, cols) + cached) > 32;
  const pack = (out: Uint32Array, at: number, hi: number, p: number) => {
    if (wideItems) {
      out[2 * at] = hi;
      out[2 * at + 1] = p;
    } else out[at] = ((hi << pairBits) | p) >>> 0;
  };
  const rowItems = new Uint32Array((wideItems ? 2 : 1) * rowHi.length);
  for (let t = 0; t < rowHi.length; t++) pack(rowItems, t, rowHi[t]!, rowPair[t]!);
  const runItems = new Uint32Array((wideItems ? 2 : 1) * runList.length);
  for (let t = 0; t < runList.length; t++) pack(runItems, t, pairCol(runList[t]!), runList[t]!);
  // Column items: counted above, filled in row order (inline pairs), then in cached-code order (their runs).
  const colBounds = new Uint32Array(cols + 1);
  for (let c = 0; c < cols; c++) colBounds[c + 1] = colBounds[c]! + colCount[c]!;
  const colFill = colBounds.slice(0, cols);
  const colItems = new Uint32Array((wideItems ? 2 : 1) * (inlinePairs + cachedRunPairs));
  for (let r = 0; r < rows; r++) {
    for (let t = rowBounds[r]!; t < rowBounds[r + 1]!; t++) if (rowPair[t] !== unitPair) pack(colItems, colFill[rowHi[t]!]!++, r, rowPair[t]!);
  }
  for (let q = 0; q < cached; q++) {
    for (let t = runOffsets[q]!; t < runOffsets[q + 1]!; t++) pack(colItems, colFill[pairCol(runList[t]!)]!++, rows + q, runList[t]!);
  }

  const values = new Float32Array(pairCount + 1);
  values.set(batch.firstLayerVal.subarray(0, pairCount));
  values[unitPair] = 1;
  const indexBits = Math.max(pairCount + 1, cached, rows) <= 0x10000 ? 16 : 32;
  const inlineCodes = codes.length - cachedUses;
  const model = { nnz, inlineCodes, inlinePairs, cachedCodes: cached, cachedRunPairs, cachedUses, terms: inlinePairs + cachedRunPairs + cachedUses };
  return {
    rows,
    cols,
    pairCount,
    values,
    unitPair,
    cached,
    indexBits,
    unitValues: values.every((v) => v === 1),
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
    model,
    k,
    cost: runsCost({ ...model, rows, cols }, k, options.prices ?? pricesFor(k)),
  };
}

/** Bytes the layout uploads (what TocRunsGpuBatch puts in storage buffers). */
export function runsLayoutBytes(l: TocRunsLayout): number {
  return [l.values, l.rowBounds, l.rowItems, l.runOffsets, l.runItems, l.occurrenceOffsets, l.occurrenceRows, l.colBounds, l.colItems].reduce(
    (n, a) => n + a.byteLength,
    0,
  );
}
