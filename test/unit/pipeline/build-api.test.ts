import { describe, expect, it } from 'vitest';
import { describeLeftOut, NOT_AN_IMAGE, NOT_DECODED } from '../../../src/pipeline/build-api.js';

describe('describeLeftOut', () => {
  it('says nothing was left out', () => {
    expect(describeLeftOut([])).toBe('nothing left out');
  });

  it('counts the files, names them by reason, a few then "and N more"', () => {
    const skipped = [
      ...['a.gif', 'b.webp', 'c.txt', 'd.txt', 'e.txt'].map((file) => ({ file, reason: NOT_AN_IMAGE })),
      { file: 'bad.jpg', reason: NOT_DECODED, detail: 'not a JPEG' },
    ];
    expect(describeLeftOut(skipped)).toBe(`6 left out (${NOT_AN_IMAGE}: a.gif, b.webp, c.txt and 2 more; ${NOT_DECODED}: bad.jpg)`);
  });
});
