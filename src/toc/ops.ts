// CPU reference operations on a compressed batch (§4, Appendix B). They define
// the results GPU kernels must match. Batch values are float32; every product
// and sum here is accumulated in float64, so results differ from float32 dense
// arithmetic only by the float32 rounding of the inputs.
//
// Cost (|I| first-layer pairs, |D| codes, N = |I| + |D| - nonEmptyRows + 1 nodes):
//   timesScalar O(|I| + N), timesVector / vectorTimes O(N + |D|),
//   timesMatrix / matrixTimes O(p (N + |D|)), decode / plusScalar O(rows x cols).

import type { TocBatch } from './batch.js';
import type { DenseMatrix } from './types.js';

/**
 * Sparse-safe element-wise map (§4.2): f must map 0 to 0. Only I (and the key
 * copies in C') change; codes and tree structure are shared with `a`.
 */
export function mapNonZeros(a: TocBatch, f: (value: number) => number): TocBatch {
  return {
    ...a,
    firstLayerVal: a.firstLayerVal.map(f),
    nodeKeyVal: a.nodeKeyVal.map((v, i) => (i === 0 ? 0 : f(v))),
  };
}

/** A .* c, Algorithm 3: scales the unique pairs only. */
export function timesScalar(a: TocBatch, c: number): TocBatch {
  return mapNonZeros(a, (v) => v * c);
}

/** A * v, Algorithm 4: H[i] = key(i) . v + H[parent(i)], then R[r] = sum of H over row r's codes. */
export function timesVector(a: TocBatch, v: ArrayLike<number>): Float64Array {
  expectLength('v', v.length, a.cols);
  const { nodeCount, nodeParent, nodeKeyCol, nodeKeyVal, codes, rowOffsets } = a;
  const h = new Float64Array(nodeCount);
  for (let i = 1; i < nodeCount; i++) {
    h[i] = nodeKeyVal[i] * v[nodeKeyCol[i]] + h[nodeParent[i]];
  }
  const r = new Float64Array(a.rows);
  for (let row = 0; row < a.rows; row++) {
    let sum = 0;
    for (let k = rowOffsets[row]; k < rowOffsets[row + 1]; k++) sum += h[codes[k]];
    r[row] = sum;
  }
  return r;
}

/** v * A, Algorithm 5: H[code] += v[row] over D, then push H down C' from the leaves. */
export function vectorTimes(v: ArrayLike<number>, a: TocBatch): Float64Array {
  expectLength('v', v.length, a.rows);
  const { nodeCount, nodeParent, nodeKeyCol, nodeKeyVal, codes, rowOffsets } = a;
  const h = new Float64Array(nodeCount);
  for (let row = 0; row < a.rows; row++) {
    for (let k = rowOffsets[row]; k < rowOffsets[row + 1]; k++) h[codes[k]] += v[row];
  }
  const r = new Float64Array(a.cols);
  // Backwards, because parent < child: a node's H is complete before it is read.
  for (let i = nodeCount - 1; i >= 1; i--) {
    r[nodeKeyCol[i]] += nodeKeyVal[i] * h[i];
    h[nodeParent[i]] += h[i];
  }
  return r;
}

/** A * M, Algorithm 7; M is cols x p row-major. H is node-major so each code reads p contiguous entries. */
export function timesMatrix(a: TocBatch, m: DenseMatrix<ArrayLike<number>>): DenseMatrix {
  expectLength('M rows', m.rows, a.cols);
  expectLength('M data', m.data.length, m.rows * m.cols);
  const p = m.cols;
  const { nodeCount, nodeParent, nodeKeyCol, nodeKeyVal, codes, rowOffsets } = a;
  const h = new Float64Array(nodeCount * p);
  for (let i = 1; i < nodeCount; i++) {
    const key = nodeKeyVal[i];
    const mRow = nodeKeyCol[i] * p;
    const parentRow = nodeParent[i] * p;
    for (let j = 0; j < p; j++) h[i * p + j] = key * m.data[mRow + j] + h[parentRow + j];
  }
  const r = new Float64Array(a.rows * p);
  for (let row = 0; row < a.rows; row++) {
    for (let k = rowOffsets[row]; k < rowOffsets[row + 1]; k++) {
      const hRow = codes[k] * p;
      for (let j = 0; j < p; j++) r[row * p + j] += h[hRow + j];
    }
  }
  return { rows: a.rows, cols: p, data: r };
}

/** M * A, Algorithm 8; M is p x rows row-major. H[node][k] is stored node-major (transposed). */
export function matrixTimes(m: DenseMatrix<ArrayLike<number>>, a: TocBatch): DenseMatrix {
  expectLength('M cols', m.cols, a.rows);
  expectLength('M data', m.data.length, m.rows * m.cols);
  const p = m.rows;
  const n = a.rows;
  const { nodeCount, nodeParent, nodeKeyCol, nodeKeyVal, codes, rowOffsets } = a;
  const h = new Float64Array(nodeCount * p);
  for (let row = 0; row < n; row++) {
    for (let k = rowOffsets[row]; k < rowOffsets[row + 1]; k++) {
      const hRow = codes[k] * p;
      for (let j = 0; j < p; j++) h[hRow + j] += m.data[j * n + row];
    }
  }
  const cols = a.cols;
  const r = new Float64Array(p * cols);
  for (let i = nodeCount - 1; i >= 1; i--) {
    const key = nodeKeyVal[i];
    const col = nodeKeyCol[i];
    const parentRow = nodeParent[i] * p;
    for (let j = 0; j < p; j++) {
      const hij = h[i * p + j];
      r[j * cols + col] += key * hij;
      h[parentRow + j] += hij;
    }
  }
  return { rows: p, cols, data: r };
}

/** Full decode to dense (Algorithm 6, lines 5-15): walk each code's sequence up to the root. */
export function decode(a: TocBatch): DenseMatrix {
  const { rows, cols, nodeParent, nodeKeyCol, nodeKeyVal, codes, rowOffsets } = a;
  const data = new Float64Array(rows * cols);
  for (let row = 0; row < rows; row++) {
    const base = row * cols;
    for (let k = rowOffsets[row]; k < rowOffsets[row + 1]; k++) {
      for (let node = codes[k]; node !== 0; node = nodeParent[node]) {
        data[base + nodeKeyCol[node]] = nodeKeyVal[node];
      }
    }
  }
  return { rows, cols, data };
}

/** A + c, Algorithm 6: sparse-unsafe, so it decodes first. */
export function plusScalar(a: TocBatch, c: number): DenseMatrix {
  const dense = decode(a);
  for (let i = 0; i < dense.data.length; i++) dense.data[i] += c;
  return dense;
}

function expectLength(what: string, actual: number, expected: number): void {
  if (actual !== expected) throw new RangeError(`${what} has size ${actual}, expected ${expected}`);
}
