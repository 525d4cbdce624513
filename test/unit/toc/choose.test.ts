// Choosing batch size and column order for the GPU kernels (src/toc/choose.ts).
import { describe, expect, it } from 'vitest';
import {
  chooseEncoding,
  compareEncodings,
  frequencyOrder,
  permuteColumns,
  sliceRows,
  sparseFromLogical,
  type EncodingCandidate,
} from '../../../src/toc/choose.js';
import { decode, encodeSparse, sparseFromPairs, toBatch, type ColumnValuePair } from '../../../src/toc/index.js';

const rows: ColumnValuePair[][] = [
  [
    [0, 1],
    [3, 2],
  ],
  [[3, 2]],
  [
    [1, 5],
    [3, 2],
  ],
  [],
];
const table = sparseFromPairs(rows, 4, 'f32');

describe('encoding choice', () => {
  it('frequencyOrder puts the column with most non-zeros first; permuteColumns keeps every value', () => {
    const order = frequencyOrder(table);
    expect(Array.from(order)).toEqual([1, 2, 3, 0]); // column 3 (3 non-zeros) becomes 0, then 0 and 1 (one each), then 2
    const p = permuteColumns(table, order);
    expect(Array.from(p.colIndex)).toEqual([0, 1, 0, 0, 2]);
    expect(Array.from(p.values)).toEqual([2, 1, 2, 2, 5]);
  });

  it('sparseFromLogical and sliceRows give back the rows', () => {
    const back = sparseFromLogical(encodeSparse(table));
    expect(Array.from(back.colIndex)).toEqual(Array.from(table.colIndex));
    expect(Array.from(back.values)).toEqual(Array.from(table.values));
    const slice = sliceRows(table, 1, 3);
    expect(Array.from(decode(toBatch(encodeSparse(slice))).data)).toEqual([0, 0, 0, 2, 0, 5, 0, 2]);
  });

  it('compareEncodings: repeated rows give less work in bigger batches', () => {
    const many = sparseFromPairs(
      Array.from({ length: 1200 }, (_, r) => rows[r % 3]!),
      4,
      'f32',
    );
    const c = compareEncodings(many, [100, 1200], ['source']);
    expect(c.map((x) => x.batches)).toEqual([12, 1]);
    expect(c.map((x) => x.nnz)).toEqual([2000, 2000]); // 400 rows each of 2, 1 and 2 pairs
    expect(c.map((x) => x.k)).toEqual([64, 64]);
    // At 100 rows a code saves too few terms to pay for the fill at k = 64; at 1200 rows it does.
    expect([c[0]!.cachedRow, c[0]!.cachedCol]).toEqual([0, 0]);
    expect([c[0]!.workRatio, c[0]!.costRatio]).toEqual([1, 1]);
    expect(c[1]!.batchesCaching).toBe(1);
    expect(c[1]!.workRatio).toBeLessThan(1);
    expect(c[1]!.costRatio).toBeLessThan(1);
    expect(chooseEncoding(c)).toBe(c[1]);
    // At k = 1 caching never pays back the fill's dispatch here: the chooser keeps the smaller batch.
    const one = compareEncodings(many, [100, 1200], ['source'], 1);
    expect(one.map((x) => x.costRatio)).toEqual([1, 1]);
    expect(chooseEncoding(one)).toBe(one[0]);
  });

  it('chooseEncoding: a bigger batch must cost 5% less; ties at one size go to the lesser predicted cost', () => {
    const cand = (batchRows: number, columnOrder: 'source' | 'frequency', costRatio: number): EncodingCandidate => ({
      batchRows,
      columnOrder,
      k: 64,
      batches: 1,
      nnz: 1,
      codes: 1,
      terms: 1,
      workRatio: 1,
      batchesCaching: 1,
      cachedRow: 1,
      cachedCol: 1,
      costRatio,
    });
    expect(chooseEncoding([cand(250, 'source', 0.9), cand(250, 'frequency', 0.85), cand(1000, 'source', 0.82)])).toMatchObject({
      batchRows: 250,
      columnOrder: 'frequency',
    });
    expect(chooseEncoding([cand(250, 'source', 0.9), cand(1000, 'source', 0.8)])).toMatchObject({ batchRows: 1000 });
    expect(chooseEncoding([])).toBeUndefined();
  });
});
