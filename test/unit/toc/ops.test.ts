// Every compressed operation against dense float64 arithmetic on the same (float32) values.
import { describe, expect, it } from 'vitest';
import {
  decode,
  encodeDense,
  mapNonZeros,
  matrixTimes,
  plusScalar,
  timesMatrix,
  timesScalar,
  timesVector,
  toBatch,
  vectorTimes,
} from '../../../src/toc/index.js';
import { mnistLike, randomMatrix, randomVector, rng, type RandomMatrixSpec } from './generators.js';
import { OP_TOLERANCE, denseTimes, denseTimesVector, denseVectorTimes, expectClose } from './helpers.js';

const CASES: Array<[string, RandomMatrixSpec]> = [
  ['sparse, repetitive', { rows: 250, cols: 120, density: 0.15, distinctValues: 4, repeatRows: 0.4 }],
  ['dense, few values', { rows: 100, cols: 30, density: 1, distinctValues: 3, repeatRows: 0.2 }],
  ['distinct values', { rows: 60, cols: 50, density: 0.5, distinctValues: 1e6 }],
  ['empty rows', { rows: 80, cols: 16, density: 0.3, distinctValues: 2, emptyRows: 0.4 }],
  ['all zero', { rows: 20, cols: 10, density: 0, distinctValues: 1 }],
  ['single row', { rows: 1, cols: 40, density: 0.7, distinctValues: 3 }],
  ['one column', { rows: 50, cols: 1, density: 0.5, distinctValues: 2 }],
];

/** The paper sets p = 20 for A*M and M*A in §5.2. */
const P = 20;

describe('TOC operations vs dense arithmetic', () => {
  for (const [name, spec] of CASES) {
    describe(name, () => {
      const random = rng(spec.rows * 7 + spec.cols);
      const data = randomMatrix(random, spec, 'f32');
      const dense = { rows: spec.rows, cols: spec.cols, data };
      const a = toBatch(encodeDense(data, spec.rows, spec.cols));

      it('decode gives the float32 input exactly', () => {
        expect(Array.from(decode(a).data)).toEqual(Array.from(data));
      });

      it('A .* c (Alg 3) and A .^ 2 change only values, exactly as float32 arithmetic', () => {
        expect(Array.from(decode(timesScalar(a, -2.5)).data)).toEqual(Array.from(data, (x) => Math.fround(x * -2.5) + 0));
        expect(Array.from(decode(mapNonZeros(a, (x) => x * x)).data)).toEqual(Array.from(data, (x) => Math.fround(x * x)));
        expect(timesScalar(a, 3).codes).toBe(a.codes); // structure is shared, not copied
      });

      it('A * v (Alg 4)', () => {
        const v = randomVector(random, spec.cols);
        expectClose(timesVector(a, v), denseTimesVector(dense, v));
      });

      it('v * A (Alg 5)', () => {
        const v = randomVector(random, spec.rows);
        expectClose(vectorTimes(v, a), denseVectorTimes(v, dense));
      });

      it('A + c (Alg 6)', () => {
        expectClose(
          plusScalar(a, 0.75).data,
          Array.from(data, (x) => x + 0.75),
        );
      });

      it('A * M (Alg 7)', () => {
        const m = { rows: spec.cols, cols: P, data: randomVector(random, spec.cols * P) };
        const r = timesMatrix(a, m);
        expect([r.rows, r.cols]).toEqual([spec.rows, P]);
        expectClose(r.data, denseTimes(dense, m).data);
      });

      it('M * A (Alg 8)', () => {
        const m = { rows: P, cols: spec.rows, data: randomVector(random, P * spec.rows) };
        const r = matrixTimes(m, a);
        expect([r.rows, r.cols]).toEqual([P, spec.cols]);
        expectClose(r.data, denseTimes(m, dense).data);
      });
    });
  }

  it('MNIST-like batch: all products within tolerance', () => {
    const random = rng(1);
    const data = mnistLike(250, 4);
    const dense = { rows: 250, cols: 784, data };
    const a = toBatch(encodeDense(data, 250, 784));
    const v = randomVector(random, 784);
    const u = randomVector(random, 250);
    expectClose(timesVector(a, v), denseTimesVector(dense, v), OP_TOLERANCE);
    expectClose(vectorTimes(u, a), denseVectorTimes(u, dense), OP_TOLERANCE);
    const m = { rows: 784, cols: P, data: randomVector(random, 784 * P) };
    expectClose(timesMatrix(a, m).data, denseTimes(dense, m).data, OP_TOLERANCE);
    const left = { rows: P, cols: 250, data: randomVector(random, P * 250) };
    expectClose(matrixTimes(left, a).data, denseTimes(left, dense).data, OP_TOLERANCE);
  });

  it('shape mismatches throw RangeError', () => {
    const a = toBatch(encodeDense(new Float32Array([1, 0, 2, 3, 0, 0]), 2, 3));
    expect(() => timesVector(a, [1, 2])).toThrow(RangeError);
    expect(() => vectorTimes([1, 2, 3], a)).toThrow(RangeError);
    expect(() => timesMatrix(a, { rows: 2, cols: 1, data: [1, 2] })).toThrow(RangeError);
    expect(() => matrixTimes({ rows: 1, cols: 3, data: [1, 2, 3] }, a)).toThrow(RangeError);
    expect(() => matrixTimes({ rows: 1, cols: 2, data: [1] }, a)).toThrow(RangeError);
  });
});
