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
}

/** Bits to index n things (at least 1). */
const bitsFor = (n: number): number => Math.max(1, Math.ceil(Math.log2(Math.max(n, 2))));

/**
 * Caching a code of `len` pairs used `uses` times costs len (its run) + uses (one read per use)
 * instead of len * uses terms: worth it only when that is strictly fewer.
 */
export const worthCaching = (len: number, uses: number): boolean => len * uses > len + uses;

/**
 * Caching anything costs each product a fixed extra: M copied into X = [M; H] and one more dispatch. Measured on
 * SwiftShader (bench/results/toc-kernels.md), that is about the time of 5-10% of a 250-row batch's terms at k = 64, so a
 * batch whose cached codes would save less than this share of its non-zeros caches none and runs as one CSR-shaped
 * gather over M itself.
 */
export const MIN_SAVED_SHARE = 0.05;

export interface RunsLayoutOptions {
  /** Cache nothing unless caching saves at least this share of the non-zeros (default MIN_SAVED_SHARE; 0: any saving). */
  minSavedShare?: number;
  /**
   * Cache a code only if it saves at least this many terms per output column, len·uses − len − uses (default 1: any
   * saving, worthCaching). A bench knob: each cached code also costs one more invocation per output column (or quad).
   */
  minSavedPerCode?: number;
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

  // Cached codes in first-use order, each with its run (root to leaf: increasing columns).
  const slot = new Int32Array(nodeCount).fill(-1);
  let cached = 0;
  let cachedRunPairs = 0;
  let saved = 0;
  for (const c of codes) {
    if (slot[c] === -1 && worthCaching(depth[c]!, uses[c]!) && depth[c]! * uses[c]! - depth[c]! - uses[c]! >= (options.minSavedPerCode ?? 1)) {
      slot[c] = cached++;
      cachedRunPairs += depth[c]!;
      saved += depth[c]! * uses[c]! - depth[c]! - uses[c]!;
    }
  }
  const nnz = codes.reduce((s, c) => s + depth[c]!, 0);
  if (saved < (options.minSavedShare ?? MIN_SAVED_SHARE) * nnz) {
    slot.fill(-1);
    cached = 0;
    cachedRunPairs = 0;
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
    model: { nnz, inlineCodes, inlinePairs, cachedCodes: cached, cachedRunPairs, cachedUses, terms: inlinePairs + cachedRunPairs + cachedUses },
  };
}

/** Bytes the layout uploads (what TocRunsGpuBatch puts in storage buffers). */
export function runsLayoutBytes(l: TocRunsLayout): number {
  return [l.values, l.rowBounds, l.rowItems, l.runOffsets, l.runItems, l.occurrenceOffsets, l.occurrenceRows, l.colBounds, l.colItems].reduce(
    (n, a) => n + a.byteLength,
    0,
  );
}
