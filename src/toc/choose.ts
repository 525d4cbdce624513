// Choosing how to encode a table for the GPU kernels: the mini-batch size and the
// column order. Both change how much the prefix tree can reuse (Li et al. use
// larger batches and reorder columns); the measure is the cost model of the
// resolved-runs kernels at the model's k (gpu-runs.ts, runsCost): predicted runs
// time over CSR's, with each batch caching what the cost rule picks at that k.
// No DOM, no Node APIs.
import { toBatch } from './batch.js';
import { encodeSparse } from './encode.js';
import { DEFAULT_RUNS_K, tocRunsLayout } from './gpu-runs.js';
import { buildPrefixTree } from './tree.js';
import type { SparseRows, TocLogical } from './types.js';

export type ColumnOrder = 'source' | 'frequency';

/** The sparse rows of a logical batch (values as stored). */
export function sparseFromLogical(logical: TocLogical): SparseRows {
  const { parent, keyPair } = buildPrefixTree(logical);
  const colList: number[] = [];
  const valList: number[] = [];
  const rowPtr = new Uint32Array(logical.rows + 1);
  const run: number[] = [];
  for (let r = 0; r < logical.rows; r++) {
    for (let k = logical.rowOffsets[r]!; k < logical.rowOffsets[r + 1]!; k++) {
      run.length = 0;
      for (let n = logical.codes[k]!; n !== 0; n = parent[n]!) run.push(keyPair[n]!);
      for (let i = run.length - 1; i >= 0; i--) {
        colList.push(logical.firstLayerCol[run[i]!]!);
        valList.push(logical.firstLayerVal[run[i]!]!);
      }
    }
    rowPtr[r + 1] = colList.length;
  }
  return {
    rows: logical.rows,
    cols: logical.cols,
    valueType: logical.valueType,
    rowPtr,
    colIndex: Uint32Array.from(colList),
    values: Float64Array.from(valList),
  };
}

/** Rows [start, end) of a sparse matrix. */
export function sliceRows(s: SparseRows, start: number, end: number): SparseRows {
  const a = s.rowPtr[start]!;
  const b = s.rowPtr[end]!;
  return {
    rows: end - start,
    cols: s.cols,
    valueType: s.valueType,
    rowPtr: s.rowPtr.slice(start, end + 1).map((x) => x - a),
    colIndex: s.colIndex.slice(a, b),
    values: s.values.slice(a, b),
  };
}

/** Concatenates sparse matrices with the same columns. */
export function concatRows(parts: SparseRows[]): SparseRows {
  const rows = parts.reduce((n, p) => n + p.rows, 0);
  const nnz = parts.reduce((n, p) => n + p.colIndex.length, 0);
  const rowPtr = new Uint32Array(rows + 1);
  const colIndex = new Uint32Array(nnz);
  const values = new Float64Array(nnz);
  let r = 0;
  let at = 0;
  for (const p of parts) {
    for (let i = 0; i < p.rows; i++) rowPtr[r + i + 1] = at + p.rowPtr[i + 1]!;
    colIndex.set(p.colIndex, at);
    values.set(p.values, at);
    r += p.rows;
    at += p.colIndex.length;
  }
  return { rows, cols: parts[0]?.cols ?? 0, valueType: parts[0]?.valueType ?? 'f32', rowPtr, colIndex, values };
}

/**
 * New index of each column: most non-zeros first (ties by source index). Frequent
 * columns early make the tree's shared prefixes the pairs most rows have.
 */
export function frequencyOrder(s: SparseRows): Uint32Array {
  const count = new Uint32Array(s.cols);
  for (const c of s.colIndex) count[c]!++;
  return orderByCount(count);
}

/** newIndex[c] for columns by descending count, ties in source order. */
export function orderByCount(count: ArrayLike<number>): Uint32Array {
  const byCount = Array.from({ length: count.length }, (_, c) => c).sort((a, b) => count[b]! - count[a]! || a - b);
  const newIndex = new Uint32Array(count.length);
  byCount.forEach((c, i) => (newIndex[c] = i));
  return newIndex;
}

/**
 * Renames the columns of one sparse row in place, cols[i] becoming newIndex[cols[i]], and re-sorts its n pairs so the
 * columns increase again (insertion sort: rows are short, and nearly sorted when the order is close to the source's).
 */
export function renameRow(newIndex: Uint32Array, cols: { [i: number]: number }, vals: { [i: number]: number }, n: number): void {
  for (let i = 0; i < n; i++) {
    const c = newIndex[cols[i]!]!;
    const v = vals[i]!;
    let at = i;
    for (; at > 0 && cols[at - 1]! > c; at--) {
      cols[at] = cols[at - 1]!;
      vals[at] = vals[at - 1]!;
    }
    cols[at] = c;
    vals[at] = v;
  }
}

/** The same matrix with column c renamed newIndex[c] (rows re-sorted so columns increase). */
export function permuteColumns(s: SparseRows, newIndex: Uint32Array): SparseRows {
  const colIndex = new Uint32Array(s.colIndex.length);
  const values = new Float64Array(s.values.length);
  const order: number[] = [];
  for (let r = 0; r < s.rows; r++) {
    const a = s.rowPtr[r]!;
    order.length = 0;
    for (let p = a; p < s.rowPtr[r + 1]!; p++) order.push(p);
    order.sort((x, y) => newIndex[s.colIndex[x]!]! - newIndex[s.colIndex[y]!]!);
    order.forEach((p, i) => {
      colIndex[a + i] = newIndex[s.colIndex[p]!]!;
      values[a + i] = s.values[p]!;
    });
  }
  return { ...s, rowPtr: s.rowPtr.slice(), colIndex, values };
}

export interface EncodingCandidate {
  batchRows: number;
  columnOrder: ColumnOrder;
  /** Output columns of the products the cost rule and the costs are for. */
  k: number;
  batches: number;
  nnz: number;
  /** Sum over batches of |D| and of the resolved-runs terms per output column (with the cost rule's cached codes). */
  codes: number;
  terms: number;
  /** terms / nnz: modelled TOC work over CSR work (1 = no saving). */
  workRatio: number;
  /** Batches that cache any code at k (on either side), and the codes they cache in all for A·M (row side) and for Aᵀ·M (column side). */
  batchesCaching: number;
  cachedRow: number;
  cachedCol: number;
  /** Predicted runs time over CSR's at k (runsCost, A·M + Aᵀ·M, summed over the batches): what the chooser minimises. */
  costRatio: number;
}

/**
 * Encodes `s` (rows in dataset order) with each batch size and column order and sums the kernel cost model at k over the
 * whole batches (a partial last batch is left out, so every candidate covers whole batches of its size).
 */
export function compareEncodings(
  s: SparseRows,
  batchSizes: number[],
  orders: ColumnOrder[] = ['source', 'frequency'],
  k = DEFAULT_RUNS_K,
): EncodingCandidate[] {
  const out: EncodingCandidate[] = [];
  for (const columnOrder of orders) {
    const table = columnOrder === 'source' ? s : permuteColumns(s, frequencyOrder(s));
    for (const batchRows of batchSizes) {
      const batches = Math.floor(table.rows / batchRows);
      let nnz = 0;
      let codes = 0;
      let terms = 0;
      let batchesCaching = 0;
      let cachedRow = 0;
      let cachedCol = 0;
      let runs = 0;
      let csr = 0;
      for (let b = 0; b < batches; b++) {
        const logical = encodeSparse(sliceRows(table, b * batchRows, (b + 1) * batchRows));
        const layout = tocRunsLayout(toBatch(logical), { k });
        nnz += layout.model.nnz;
        codes += logical.codes.length;
        terms += layout.model.terms;
        if (layout.rowCached + layout.colCached > 0) batchesCaching++;
        cachedRow += layout.rowCached;
        cachedCol += layout.colCached;
        runs += layout.cost.times + layout.cost.transposeTimes;
        csr += layout.cost.csrTimes + layout.cost.csrTransposeTimes;
      }
      out.push({
        batchRows,
        columnOrder,
        k,
        batches,
        nnz,
        codes,
        terms,
        workRatio: nnz ? terms / nnz : 1,
        batchesCaching,
        cachedRow,
        cachedCol,
        costRatio: csr > 0 ? runs / csr : 1,
      });
    }
  }
  return out;
}

/**
 * The candidate with the least predicted runs / CSR time (costRatio); a larger batch must save at least `minGain`
 * (relative) over the best smaller one to be chosen, since larger batches also mean fewer, coarser SGD steps.
 */
export function chooseEncoding(candidates: EncodingCandidate[], minGain = 0.05): EncodingCandidate | undefined {
  const usable = candidates.filter((c) => c.batches > 0).sort((a, b) => a.batchRows - b.batchRows || a.costRatio - b.costRatio);
  let best: EncodingCandidate | undefined;
  for (const c of usable) {
    if (!best) best = c;
    else if (c.batchRows === best.batchRows ? c.costRatio < best.costRatio : c.costRatio < best.costRatio * (1 - minGain)) best = c;
  }
  return best;
}
