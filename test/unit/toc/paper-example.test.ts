// The running example of the paper: table A of Figure 3, Table 2 (encoding) and Table 4 (C').
// The paper numbers columns from 1, so column 0 is left empty here to keep its indexes.
import { describe, expect, it } from 'vitest';
import { buildPrefixTree, decodeToc, encodeSparseWithTree, encodeToc, sparseFromDense, timesVector, toBatch, vectorTimes } from '../../../src/toc/index.js';
import { denseTimesVector, denseVectorTimes, expectClose, sections } from './helpers.js';

const A = Float64Array.from(
  [
    [0, 1.1, 2, 3, 1.4], // R1
    [0, 1.1, 2, 3, 0], // R2
    [0, 0, 1.1, 3, 1.4], // R3
    [0, 1.1, 2, 0, 0], // R4
  ].flat(),
);

const pairsOf = (keys: ArrayLike<number>, cols: ArrayLike<number>, vals: ArrayLike<number>) => Array.from(keys, (p) => `${cols[p]}:${vals[p]}`);

describe('TOC paper running example', () => {
  const sparse = sparseFromDense(A, 4, 5);
  const { logical, tree } = encodeSparseWithTree(sparse);

  it('sparse encoding gives table B', () => {
    expect(Array.from(sparse.rowPtr)).toEqual([0, 4, 7, 10, 12]);
    expect(Array.from(sparse.colIndex.subarray(4, 7))).toEqual([1, 2, 3]); // R2 = [1:1.1, 2:2, 3:3]
  });

  it('first layer I holds the unique pairs in first-appearance order (Table 2, phase I)', () => {
    expect(pairsOf([0, 1, 2, 3, 4], logical.firstLayerCol, logical.firstLayerVal)).toEqual(['1:1.1', '2:2', '3:3', '4:1.4', '2:1.1']);
  });

  it('encoded table D matches Table 2', () => {
    const rows = [0, 1, 2, 3].map((r) => Array.from(logical.codes.subarray(logical.rowOffsets[r], logical.rowOffsets[r + 1])));
    expect(rows).toEqual([[1, 2, 3, 4], [6, 3], [5, 8], [6]]);
  });

  it('the encoder tree C has the nodes added in Table 2', () => {
    expect(tree.nodeCount).toBe(11);
    expect(Array.from(tree.parent)).toEqual([0, 0, 0, 0, 0, 0, 1, 2, 3, 6, 5]);
    const keys = pairsOf(tree.keyPair.subarray(6), logical.firstLayerCol, logical.firstLayerVal);
    expect(keys).toEqual(['2:2', '3:3', '4:1.4', '3:3', '3:3']);
  });

  it("Algorithm 2 rebuilds C' as in Table 4 (same indexes as C)", () => {
    const rebuilt = buildPrefixTree(logical);
    expect(Array.from(rebuilt.parent)).toEqual(Array.from(tree.parent));
    expect(Array.from(rebuilt.keyPair)).toEqual(Array.from(tree.keyPair));
    // F: node 9 = [1:1.1, 2:2, 3:3] starts with pair 0, node 10 = [2:1.1, 3:3] with pair 4.
    expect(Array.from(rebuilt.firstPair)).toEqual([0, 0, 1, 2, 3, 4, 0, 1, 2, 0, 4]);
  });

  it('physical encoding stores 4 unique values for 5 pairs, with minimal bit widths', () => {
    const bytes = encodeToc(logical);
    const s = sections(bytes);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('TOC1');
    expect(s).toMatchObject({ rows: 4, values: 4, firstLayer: 5, codeCount: 9 });
    expect(s).toMatchObject({ colBits: 3, valueIndexBits: 2, codeBits: 4, rowStartBits: 4 });
    expect(decodeToc(bytes)).toEqual(logical);
  });

  it('A*v and v*A on the example match dense arithmetic', () => {
    const batch = toBatch(logical);
    const dense = { rows: 4, cols: 5, data: Float64Array.from(A, Math.fround) };
    const v = [0.5, 1, -2, 3, 0.25];
    const u = [1, -1, 2, 0.5];
    expectClose(timesVector(batch, v), denseTimesVector(dense, v));
    expectClose(vectorTimes(u, batch), denseVectorTimes(u, dense));
  });
});
