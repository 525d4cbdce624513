// The "resolved runs" GPU layout of a TOC batch (docs/toc.md, "Kernel design").
// Built once per batch on the CPU, in time linear in the non-zeros:
//   - a code used by enough rows to pay for itself is *cached*: its expansion
//     into first-layer pairs (its run) is stored once, and the kernels compute
//     its partial sum H[q] = sum of val * M[col] over the run once per output column;
//   - every other code is written out inline as its pair indexes, so a row
//     without reuse costs what CSR costs.
// Each row is then a list of inline pairs followed by a list of cached codes,
// each column a list of inline (row, pair) items followed by (cached code, pair)
// items. All kernels are gathers over these lists: no atomics, no barriers.
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
  /** |I|, and the pair table: pairs[2p] = column, pairs[2p + 1] = float32 bits of the value. */
  pairCount: number;
  pairs: Uint32Array;
  /** |S|: cached codes (scratch is |S| x k floats). */
  cached: number;
  /** Width of the index list occurrenceRows: 16 (two per u32, low half first) or 32. */
  indexBits: 16 | 32;
  /** Every pair's value is exactly 1.0 (one-hot tables): the kernels skip value loads. */
  unitValues: boolean;
  /**
   * Row r: inline items [rowBounds[2r], rowBounds[2r+1]) are (column, pair), so the read of M does not wait
   * for the pair table; cached-code items up to rowBounds[2r+2] are (code, 0). Packed like colItems.
   */
  rowBounds: Uint32Array;
  rowItems: Uint32Array;
  /**
   * Cached code q expands to the (column, pair) items runItems[runOffsets[q] .. runOffsets[q+1]), packed like rowItems: the
   * column is in the item, so the read of M waits on one load (as CSR's), not on the pair table too.
   */
  runOffsets: Uint32Array;
  runItems: Uint32Array;
  /** Rows whose D holds cached code q (a code occurs at most once per row). */
  occurrenceOffsets: Uint32Array;
  occurrenceRows: Uint32Array;
  /** Column c: inline (row, pair) items [colBounds[2c], colBounds[2c+1]), (cached code, pair) items up to colBounds[2c+2]. */
  colBounds: Uint32Array;
  /** Each item (here and in rowItems) is (hi << pairBits) | pair in one u32, or, when that needs more than 32 bits (wideItems), hi and pair in two. */
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

/** Stores indexes below 2^16 two per u32 (low half first), else one per u32. */
function packIndexes(values: ArrayLike<number>, bits: 16 | 32): Uint32Array {
  if (bits === 32) return Uint32Array.from(values);
  const halves = new Uint16Array(values.length + (values.length & 1));
  halves.set(values);
  return new Uint32Array(halves.buffer);
}

export function tocRunsLayout(batch: TocBatch): TocRunsLayout {
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
  for (const c of codes) {
    if (slot[c] === -1 && worthCaching(depth[c]!, uses[c]!)) {
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
  const nnz = codes.reduce((s, c) => s + depth[c]!, 0);
  let cachedUses = 0;
  for (const c of codes) if (slot[c]! >= 0) cachedUses++;
  const inlinePairs = nnz - codes.reduce((s, c) => s + (slot[c]! >= 0 ? depth[c]! : 0), 0);
  const rowBounds = new Uint32Array(2 * rows + 1);
  const rowList = new Uint32Array(inlinePairs + cachedUses);
  const occurrenceOffsets = new Uint32Array(cached + 1);
  for (const c of codes) if (slot[c]! >= 0) occurrenceOffsets[slot[c]! + 1]!++;
  for (let q = 0; q < cached; q++) occurrenceOffsets[q + 1]! += occurrenceOffsets[q]!;
  const occurrenceFill = occurrenceOffsets.slice(0, cached);
  const occurrenceList = new Uint32Array(cachedUses);
  // Column items: counted first, then filled in row order (inline) and cached-code order.
  const colCount = new Uint32Array(2 * cols);
  const pairCol = (p: number) => batch.firstLayerCol[p]!;
  let item = 0;
  for (let r = 0; r < rows; r++) {
    rowBounds[2 * r] = item;
    for (let k = rowOffsets[r]!; k < rowOffsets[r + 1]!; k++) {
      const c = codes[k]!;
      if (slot[c]! >= 0) continue;
      const end = item + depth[c]!;
      let at = end;
      for (let x = c; x !== 0; x = nodeParent[x]!) {
        rowList[--at] = keyPair[x]!;
        colCount[2 * pairCol(keyPair[x]!)]!++;
      }
      item = end;
    }
    rowBounds[2 * r + 1] = item;
    for (let k = rowOffsets[r]!; k < rowOffsets[r + 1]!; k++) {
      const q = slot[codes[k]!]!;
      if (q < 0) continue;
      rowList[item++] = q;
      occurrenceList[occurrenceFill[q]!++] = r;
    }
  }
  rowBounds[2 * rows] = item;
  for (let t = 0; t < cachedRunPairs; t++) colCount[2 * pairCol(runList[t]!) + 1]!++;

  const pairBits = bitsFor(pairCount);
  const wideItems = pairBits + bitsFor(Math.max(rows, cached, cols)) > 32;
  const pack = (out: Uint32Array, at: number, hi: number, p: number) => {
    if (wideItems) {
      out[2 * at] = hi;
      out[2 * at + 1] = p;
    } else out[at] = ((hi << pairBits) | p) >>> 0;
  };
  const rowItems = new Uint32Array((wideItems ? 2 : 1) * rowList.length);
  const runItems = new Uint32Array((wideItems ? 2 : 1) * runList.length);
  for (let t = 0; t < runList.length; t++) pack(runItems, t, pairCol(runList[t]!), runList[t]!);
  for (let r = 0; r < rows; r++) {
    for (let t = rowBounds[2 * r]!; t < rowBounds[2 * r + 1]!; t++) pack(rowItems, t, pairCol(rowList[t]!), rowList[t]!);
    for (let t = rowBounds[2 * r + 1]!; t < rowBounds[2 * r + 2]!; t++) pack(rowItems, t, rowList[t]!, 0);
  }
  const colBounds = new Uint32Array(2 * cols + 1);
  for (let b = 0; b < 2 * cols; b++) colBounds[b + 1] = colBounds[b]! + colCount[b]!;
  const colFill = colBounds.slice(0, 2 * cols);
  const colItems = new Uint32Array((wideItems ? 2 : 1) * (inlinePairs + cachedRunPairs));
  const put = (bucket: number, hi: number, p: number) => pack(colItems, colFill[bucket]!++, hi, p);
  for (let r = 0; r < rows; r++) for (let t = rowBounds[2 * r]!; t < rowBounds[2 * r + 1]!; t++) put(2 * pairCol(rowList[t]!), r, rowList[t]!);
  for (let q = 0; q < cached; q++) for (let t = runOffsets[q]!; t < runOffsets[q + 1]!; t++) put(2 * pairCol(runList[t]!) + 1, q, runList[t]!);

  const pairs = new Uint32Array(2 * pairCount);
  const valueBits = new Uint32Array(batch.firstLayerVal.buffer, batch.firstLayerVal.byteOffset, pairCount);
  for (let p = 0; p < pairCount; p++) {
    pairs[2 * p] = pairCol(p);
    pairs[2 * p + 1] = valueBits[p]!;
  }
  const indexBits = Math.max(pairCount, cached, rows) <= 0x10000 ? 16 : 32;
  const inlineCodes = codes.length - cachedUses;
  return {
    rows,
    cols,
    pairCount,
    pairs,
    cached,
    indexBits,
    unitValues: batch.firstLayerVal.subarray(0, pairCount).every((v) => v === 1),
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
  return [l.pairs, l.rowBounds, l.rowItems, l.runOffsets, l.runItems, l.occurrenceOffsets, l.occurrenceRows, l.colBounds, l.colItems].reduce(
    (n, a) => n + a.byteLength,
    0,
  );
}
