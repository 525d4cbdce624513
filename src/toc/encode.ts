// Sparse encoding and the prefix-tree logical encoding of TOC (§3.1, Algorithm 1).

import { U32KeyMap } from './hash.js';
import type { SparseRows, TocLogical, ValueType } from './types.js';

/** Rows per mini-batch, as in the paper's experiments and the reference code. */
export const MINI_BATCH_ROWS = 250;

/** A column_index:value pair of the sparse encoding. */
export type ColumnValuePair = readonly [column: number, value: number];

/** Tree C as the encoder built it: node i has parent[i] and key I[keyPair[i]]. */
export interface EncoderTree {
  nodeCount: number;
  parent: Uint32Array;
  keyPair: Uint32Array;
}

/**
 * Sparse encoding of a dense row-major matrix: drop zeros, prefix each value with
 * its column. -0 counts as zero; NaN is kept as a value.
 */
export function sparseFromDense(data: Float32Array | Float64Array, rows: number, cols: number): SparseRows {
  checkShape(rows, cols);
  if (data.length !== rows * cols) {
    throw new RangeError(`dense data has ${data.length} entries, expected ${rows} x ${cols}`);
  }
  let nnz = 0;
  for (let i = 0; i < data.length; i++) if (data[i] !== 0) nnz++;
  const rowPtr = new Uint32Array(rows + 1);
  const colIndex = new Uint32Array(nnz);
  const values = new Float64Array(nnz);
  let k = 0;
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) {
      const v = data[base + c];
      if (v !== 0) {
        colIndex[k] = c;
        values[k] = v;
        k++;
      }
    }
    rowPtr[r + 1] = k;
  }
  const valueType: ValueType = data instanceof Float32Array ? 'f32' : 'f64';
  return { rows, cols, valueType, rowPtr, colIndex, values };
}

/**
 * Sparse encoding from rows of column:value pairs (any order; zeros dropped).
 * Columns are sorted because Algorithm 2 relies on strictly increasing columns
 * within a row (it rules out LZW's "code not yet defined" case).
 */
export function sparseFromPairs(pairRows: ReadonlyArray<ReadonlyArray<ColumnValuePair>>, cols: number, valueType: ValueType = 'f64'): SparseRows {
  checkShape(pairRows.length, cols);
  const rowPtr = new Uint32Array(pairRows.length + 1);
  const colList: number[] = [];
  const valList: number[] = [];
  pairRows.forEach((pairs, r) => {
    const sorted = pairs.filter(([, v]) => v !== 0).sort((a, b) => a[0] - b[0]);
    sorted.forEach(([c, v], i) => {
      if (!Number.isInteger(c) || c < 0 || c >= cols) {
        throw new RangeError(`row ${r}: column ${c} is outside [0, ${cols})`);
      }
      if (i > 0 && sorted[i - 1][0] === c) throw new RangeError(`row ${r}: column ${c} appears twice`);
      if (valueType === 'f32' && Math.fround(v) !== v && !Number.isNaN(v)) {
        throw new RangeError(`row ${r}: value ${v} is not a float32`);
      }
      colList.push(c);
      valList.push(v);
    });
    rowPtr[r + 1] = colList.length;
  });
  return {
    rows: pairRows.length,
    cols,
    valueType,
    rowPtr,
    colIndex: Uint32Array.from(colList),
    values: Float64Array.from(valList),
  };
}

/** Algorithm 1 on a sparse-encoded mini-batch; also returns the tree C it built. */
export function encodeSparseWithTree(sparse: SparseRows): { logical: TocLogical; tree: EncoderTree } {
  const { rows, cols, valueType, rowPtr, colIndex, values } = sparse;
  const nnz = colIndex.length;
  checkSparse(sparse);

  // Phase I (lines 5-8): each unique pair becomes a root child; pair id p is node p + 1.
  // Pairs are keyed by (column, exact value bits).
  const pairIds = new U32KeyMap(nnz >>> 1);
  const pairOf = new Uint32Array(nnz);
  const firstCol = new Uint32Array(nnz);
  const firstVal = new Float64Array(nnz);
  let firstLayerSize = 0;
  for (let k = 0; k < nnz; k++) {
    const id = pairIds.getOrInsertF64(colIndex[k], values[k], firstLayerSize);
    if (id === firstLayerSize) {
      firstCol[id] = colIndex[k];
      firstVal[id] = values[k];
      firstLayerSize++;
    }
    pairOf[k] = id;
  }

  // Phase II (lines 9-17): greedy longest match, then extend the match by one pair.
  const maxNodes = 1 + firstLayerSize + nnz;
  const parent = new Uint32Array(maxNodes);
  const keyPair = new Uint32Array(maxNodes);
  for (let p = 0; p < firstLayerSize; p++) keyPair[p + 1] = p;
  const children = new U32KeyMap(nnz >>> 1); // (parent node, pair id, 0) -> child node
  const codes = new Uint32Array(nnz); // a row never needs more codes than pairs
  const rowOffsets = new Uint32Array(rows + 1);
  let nextNode = firstLayerSize + 1;
  let codeCount = 0;
  for (let r = 0; r < rows; r++) {
    const end = rowPtr[r + 1];
    let i = rowPtr[r];
    while (i < end) {
      // LONGESTMATCHFROMTREE (lines 21-34): the first pair always matches a root child.
      // A failed GetIndex(node, t[j]) is followed by AddNode(node, t[j]) (lines 15-16),
      // so one getOrInsert does both with a single probe sequence.
      let node = pairOf[i] + 1;
      let j = i + 1;
      for (; j < end; j++) {
        const child = children.getOrInsert(node, pairOf[j], 0, nextNode);
        if (child === nextNode) {
          parent[nextNode] = node;
          keyPair[nextNode] = pairOf[j];
          nextNode++;
          break;
        }
        node = child;
      }
      codes[codeCount++] = node;
      i = j;
    }
    rowOffsets[r + 1] = codeCount;
  }

  const logical: TocLogical = {
    rows,
    cols,
    valueType,
    firstLayerCol: firstCol.slice(0, firstLayerSize),
    firstLayerVal: firstVal.slice(0, firstLayerSize),
    codes: codes.slice(0, codeCount),
    rowOffsets,
  };
  const tree = { nodeCount: nextNode, parent: parent.slice(0, nextNode), keyPair: keyPair.slice(0, nextNode) };
  return { logical, tree };
}

/** Algorithm 1: the logical encoding (I, D) of one mini-batch. */
export function encodeSparse(sparse: SparseRows): TocLogical {
  return encodeSparseWithTree(sparse).logical;
}

/** Sparse + logical encoding of a dense row-major mini-batch. */
export function encodeDense(data: Float32Array | Float64Array, rows: number, cols: number): TocLogical {
  return encodeSparse(sparseFromDense(data, rows, cols));
}

/** Sparse + logical encoding of rows of column:value pairs. */
export function encodePairs(pairRows: ReadonlyArray<ReadonlyArray<ColumnValuePair>>, cols: number, valueType: ValueType = 'f64'): TocLogical {
  return encodeSparse(sparseFromPairs(pairRows, cols, valueType));
}

/** Splits a dense matrix into mini-batches, each with its own dictionary. */
export function encodeMiniBatches(data: Float32Array | Float64Array, rows: number, cols: number, batchRows: number = MINI_BATCH_ROWS): TocLogical[] {
  checkShape(rows, cols);
  if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`bad batch size ${batchRows}`);
  const batches: TocLogical[] = [];
  for (let start = 0; start < rows; start += batchRows) {
    const n = Math.min(batchRows, rows - start);
    batches.push(encodeDense(data.subarray(start * cols, (start + n) * cols), n, cols));
  }
  return batches;
}

/** Algorithm 2 needs strictly increasing columns within each row (see sparseFromPairs). */
function checkSparse({ rows, cols, rowPtr, colIndex, values }: SparseRows): void {
  checkShape(rows, cols);
  if (rowPtr.length !== rows + 1 || rowPtr[0] !== 0 || rowPtr[rows] !== colIndex.length || values.length !== colIndex.length) {
    throw new RangeError('sparse rows: rowPtr / colIndex / values sizes disagree');
  }
  for (let r = 0; r < rows; r++) {
    if (rowPtr[r + 1] < rowPtr[r]) throw new RangeError(`sparse rows: rowPtr decreases at row ${r}`);
    for (let k = rowPtr[r]; k < rowPtr[r + 1]; k++) {
      const increasing = k === rowPtr[r] || colIndex[k] > colIndex[k - 1];
      if (!increasing || colIndex[k] >= cols) {
        throw new RangeError(`sparse rows: row ${r} column ${colIndex[k]} out of order or >= ${cols}`);
      }
    }
  }
}

function checkShape(rows: number, cols: number): void {
  const ok = (n: number) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff;
  if (!ok(rows) || !ok(cols)) throw new RangeError(`bad matrix shape ${rows} x ${cols}`);
}
