import { expect, it } from 'vitest';
import { accuracyRange, tickLabels, WHOLE_INCREMENTS } from '../../../src/app/axis.js';

it('an accuracy axis keeps within [0, 1], with room around flat and spread data', () => {
  expect(accuracyRange(0.89, 0.89)).toEqual([0.88, 0.9]);
  const [lo, hi] = accuracyRange(0.5, 0.9);
  expect(lo).toBeCloseTo(0.46);
  expect(hi).toBeCloseTo(0.94);
  expect(accuracyRange(0, 1)).toEqual([0, 1]);
  expect(accuracyRange(0.995, 1)).toEqual([0.985, 1]);
  expect(accuracyRange(null, null)).toEqual([0, 1]);
});

it('a whole-number axis steps by 1, 2, 5, 10, 20, 25, 50, …: never a fraction, and up to counts of billions', () => {
  expect(WHOLE_INCREMENTS.slice(0, 8)).toEqual([1, 2, 5, 10, 20, 25, 50, 100]);
  expect(WHOLE_INCREMENTS.every(Number.isInteger)).toBe(true);
  expect(WHOLE_INCREMENTS.at(-1)).toBeGreaterThan(1e12);
});

it('tick labels fit a phone-width axis and tell neighbouring ticks apart', () => {
  // examples/s of a fast table model: the full numbers were cut to "00,000" at 390 px.
  expect(tickLabels([0, 100_000, 200_000])).toEqual(['0', '100K', '200K']);
  expect(tickLabels([10_000, 10_500, 11_000])).toEqual(['10.0K', '10.5K', '11.0K']);
  // A flat accuracy curve: two ticks 0.0001 apart once both read 0.784.
  expect(tickLabels([0.7841, 0.7842])).toEqual(['0.7841', '0.7842']);
  expect(tickLabels([0.4, 0.6])).toEqual(['0.4', '0.6']);
  expect(tickLabels([0, 2000, 4000])).toEqual(['0', '2,000', '4,000']);
  // A narrow range may get one tick: it keeps three significant digits.
  expect(tickLabels([5])).toEqual(['5']);
  expect(tickLabels([0.7853])).toEqual(['0.785']);
  expect(tickLabels([131_578])).toEqual(['131.6K']);
});
