import { expect, it } from 'vitest';
import { accuracyRange } from '../../../src/app/axis.js';

it('an accuracy axis keeps within [0, 1], with room around flat and spread data', () => {
  expect(accuracyRange(0.89, 0.89)).toEqual([0.88, 0.9]);
  const [lo, hi] = accuracyRange(0.5, 0.9);
  expect(lo).toBeCloseTo(0.46);
  expect(hi).toBeCloseTo(0.94);
  expect(accuracyRange(0, 1)).toEqual([0, 1]);
  expect(accuracyRange(0.995, 1)).toEqual([0.985, 1]);
  expect(accuracyRange(null, null)).toEqual([0, 1]);
});
