// Test helpers for TOC: dense reference arithmetic, tolerant comparison, byte surgery.
import { expect } from 'vitest';
import { bitsFor, packedBytes } from '../../../src/toc/bits.js';
import type { DenseMatrix } from '../../../src/toc/types.js';

/** Relative tolerance for compressed ops vs dense float64 arithmetic (only summation order differs). */
export const OP_TOLERANCE = 1e-9;

// Dense float64 reference arithmetic (row-major).
export function denseTimesVector(a: DenseMatrix<ArrayLike<number>>, v: ArrayLike<number>): Float64Array {
  const r = new Float64Array(a.rows);
  for (let i = 0; i < a.rows; i++) for (let j = 0; j < a.cols; j++) r[i] += a.data[i * a.cols + j]! * v[j]!;
  return r;
}

export function denseVectorTimes(v: ArrayLike<number>, a: DenseMatrix<ArrayLike<number>>): Float64Array {
  const r = new Float64Array(a.cols);
  for (let i = 0; i < a.rows; i++) for (let j = 0; j < a.cols; j++) r[j] += v[i]! * a.data[i * a.cols + j]!;
  return r;
}

export function denseTimes(a: DenseMatrix<ArrayLike<number>>, b: DenseMatrix<ArrayLike<number>>): DenseMatrix {
  const r = new Float64Array(a.rows * b.cols);
  for (let i = 0; i < a.rows; i++) {
    for (let k = 0; k < a.cols; k++) {
      const aik = a.data[i * a.cols + k]!;
      if (aik !== 0) for (let j = 0; j < b.cols; j++) r[i * b.cols + j] += aik * b.data[k * b.cols + j]!;
    }
  }
  return { rows: a.rows, cols: b.cols, data: r };
}

/** Element-wise |actual - expected| <= tol * max(1, |expected|). */
export function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, tol = OP_TOLERANCE): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i]!;
    if (Math.abs(actual[i]! - e) > tol * Math.max(1, Math.abs(e))) {
      expect.fail(`element ${i}: ${actual[i]} vs expected ${e} (tolerance ${tol})`);
    }
  }
}

/** Byte offsets of the sections of TOC1 bytes, read from the header (independent of src). */
export function sections(bytes: Uint8Array) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const valueBytes = view.getUint8(6);
  const rows = view.getUint32(8, true);
  const values = view.getUint32(16, true);
  const firstLayer = view.getUint32(20, true);
  const codeCount = view.getUint32(24, true);
  const colBits = view.getUint8(28);
  const valueIndexBits = view.getUint8(29);
  const codeBits = view.getUint8(30);
  const rowStartBits = view.getUint8(31);
  const columnsAt = 32 + values * valueBytes;
  const valueIndexesAt = columnsAt + packedBytes(firstLayer, colBits);
  const rowStartsAt = valueIndexesAt + packedBytes(firstLayer, valueIndexBits);
  const codesAt = rowStartsAt + packedBytes(rows, rowStartBits);
  return { rows, values, firstLayer, codeCount, colBits, valueIndexBits, codeBits, rowStartBits, columnsAt, valueIndexesAt, rowStartsAt, codesAt };
}

/** Overwrites element `index` of a bit-packed section in place (LSB-first). */
export function writePacked(bytes: Uint8Array, sectionAt: number, index: number, bits: number, value: number): void {
  for (let b = 0; b < bits; b++) {
    const bit = index * bits + b;
    const at = sectionAt + (bit >> 3);
    const mask = 1 << (bit & 7);
    bytes[at] = (value >>> b) & 1 ? bytes[at]! | mask : bytes[at]! & ~mask;
  }
}

export { bitsFor };
