import { describe, expect, it } from 'vitest';
import { distinctName } from '../../../src/storage/local-datasets.js';

describe('distinctName', () => {
  it('keeps a name no dataset has', () => {
    expect(distinctName('imgs', ['shapes'])).toBe('imgs');
  });

  it('numbers a name already taken, from (2) up to the first free one', () => {
    expect(distinctName('imgs', ['imgs'])).toBe('imgs (2)');
    expect(distinctName('imgs', ['imgs', 'imgs (2)', 'imgs (3)'])).toBe('imgs (4)');
    expect(distinctName('imgs (2)', ['imgs (2)'])).toBe('imgs (2) (2)');
  });
});
