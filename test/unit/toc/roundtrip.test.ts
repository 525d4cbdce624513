// Logical encoding round trips (Algorithm 1 then Algorithm 2) on random and edge-case matrices.
import { describe, expect, it } from 'vitest';
import {
  buildPrefixTree,
  decodeLogical,
  encodeDense,
  encodeMiniBatches,
  encodePairs,
  encodeSparse,
  encodeSparseWithTree,
  sparseFromDense,
  type ColumnValuePair,
} from '../../../src/toc/index.js';
import { randomMatrix, rng, type RandomMatrixSpec } from './generators.js';

const SHAPES: Array<[string, RandomMatrixSpec]> = [
  ['sparse 250x100', { rows: 250, cols: 100, density: 0.1, distinctValues: 5, repeatRows: 0.3 }],
  ['dense 250x40', { rows: 250, cols: 40, density: 1, distinctValues: 3, repeatRows: 0.5 }],
  ['dense, all distinct', { rows: 50, cols: 30, density: 1, distinctValues: 100000 }],
  ['with empty rows', { rows: 100, cols: 20, density: 0.4, distinctValues: 4, emptyRows: 0.3 }],
  ['single row', { rows: 1, cols: 64, density: 0.5, distinctValues: 3 }],
  ['one column', { rows: 200, cols: 1, density: 0.6, distinctValues: 3 }],
  ['all zero', { rows: 250, cols: 30, density: 0, distinctValues: 1 }],
  ['no rows', { rows: 0, cols: 8, density: 0.5, distinctValues: 2 }],
  ['no columns', { rows: 5, cols: 0, density: 0.5, distinctValues: 2 }],
];

describe('TOC logical encoding round trip', () => {
  for (const [name, spec] of SHAPES) {
    for (const type of ['f32', 'f64'] as const) {
      it(`${name} (${type}) decodes to the exact input`, () => {
        const data = randomMatrix(rng(name.length * 31 + spec.rows), spec, type);
        const logical = encodeDense(data, spec.rows, spec.cols);
        expect(logical.valueType).toBe(type);
        expect(Array.from(decodeLogical(logical).data)).toEqual(Array.from(data));
      });
    }
  }

  it('Algorithm 2 rebuilds exactly the tree the encoder built, with parent < child', () => {
    const random = rng(5);
    for (let trial = 0; trial < 20; trial++) {
      const spec = {
        rows: 1 + Math.floor(random() * 250),
        cols: 1 + Math.floor(random() * 60),
        density: random(),
        distinctValues: 1 + Math.floor(random() * 6),
        repeatRows: random(),
      };
      const { logical, tree } = encodeSparseWithTree(sparseFromDense(randomMatrix(random, spec, 'f64'), spec.rows, spec.cols));
      const rebuilt = buildPrefixTree(logical);
      expect(rebuilt.nodeCount).toBe(tree.nodeCount);
      expect(rebuilt.parent).toEqual(tree.parent);
      expect(rebuilt.keyPair).toEqual(tree.keyPair);
      expect(rebuilt.parent.every((parent, i) => i === 0 || parent < i)).toBe(true);
    }
  });

  it('repeated rows compress to a single code', () => {
    const row = [0, 3, 0, 3, 1, 0, 2, 2];
    const logical = encodeDense(
      Float64Array.from({ length: 8 * 6 }, (_, i) => row[i % 8]!),
      6,
      8,
    );
    const lengths = Array.from({ length: 6 }, (_, r) => logical.rowOffsets[r + 1]! - logical.rowOffsets[r]!);
    expect(lengths[5]).toBe(1); // by the 6th copy the whole row is one tree node
    expect(logical.firstLayerCol.length).toBe(5);
  });

  it('rows of column:value pairs: sorted, zeros dropped, same result as dense', () => {
    const pairs: ColumnValuePair[][] = [
      [
        [3, 2],
        [0, 1.5],
        [2, 0],
      ],
      [],
      [
        [0, 1.5],
        [3, 2],
      ],
    ];
    const dense = Float64Array.from([1.5, 0, 0, 2, 0, 0, 0, 0, 1.5, 0, 0, 2]);
    expect(encodePairs(pairs, 4)).toEqual(encodeDense(dense, 3, 4));
  });

  it('rejects bad pair input', () => {
    expect(() => encodePairs([[[4, 1]]], 4)).toThrow(/column 4 is outside/);
    expect(() =>
      encodePairs(
        [
          [
            [1, 1],
            [1, 2],
          ],
        ],
        4,
      ),
    ).toThrow(/appears twice/);
    expect(() => encodePairs([[[1, 0.1]]], 4, 'f32')).toThrow(/not a float32/);
    expect(() => encodeDense(new Float64Array(5), 2, 3)).toThrow(RangeError);
    const unsorted = {
      rows: 1,
      cols: 4,
      valueType: 'f64' as const,
      rowPtr: Uint32Array.of(0, 2),
      colIndex: Uint32Array.of(2, 1),
      values: Float64Array.of(1, 2),
    };
    expect(() => encodeSparse(unsorted)).toThrow(/out of order/);
  });

  it('splits a dataset into 250-row mini-batches, each decodable on its own', () => {
    const spec = { rows: 600, cols: 12, density: 0.5, distinctValues: 3 };
    const data = randomMatrix(rng(9), spec, 'f32');
    const batches = encodeMiniBatches(data, 600, 12);
    expect(batches.map((b) => b.rows)).toEqual([250, 250, 100]);
    const decoded = batches.flatMap((b) => Array.from(decodeLogical(b).data));
    expect(decoded).toEqual(Array.from(data));
  });
});
