import { describe, expect, it } from 'vitest';
import { positiveIntFlag } from '../../../src/cli/flags.js';

describe('positiveIntFlag', () => {
  it('reads a whole number and falls back when the flag is absent', () => {
    expect(positiveIntFlag('250', 'record-size', 1)).toBe(250);
    expect(positiveIntFlag(undefined, 'record-size', 1024)).toBe(1024);
  });

  it.each(['0', '-3', '2.5', 'abc', ''])('names the flag and the bad value "%s"', (bad) => {
    expect(() => positiveIntFlag(bad, 'record-size', 1)).toThrow(`--record-size must be a positive integer, got "${bad}"`);
  });
});
