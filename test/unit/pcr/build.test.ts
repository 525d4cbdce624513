import { describe, expect, it } from 'vitest';
import { assertModelInputSize, makeManifest } from '../../../src/pcr/build.js';

describe('model input size of a built dataset', () => {
  it('takes 8 to 1024 pixels a side, as the lab trains at', () => {
    expect(() => assertModelInputSize(8, 1024)).not.toThrow();
    for (const [w, h] of [
      [0, 0],
      [2000, 2000],
      [64, 7],
      [32.5, 32],
      [Number.NaN, 64],
    ] as const) {
      expect(() => assertModelInputSize(w, h)).toThrow(/model input size .* is out of range: each side must be 8 to 1024 pixels/);
    }
  });

  it('a variable-size manifest (a folder build) is never made with a size the lab cannot train at', () => {
    const fields = { name: 'imgs', classes: ['a', 'b'], quality: 90, splits: {}, variableSize: true };
    expect(() => makeManifest({ ...fields, image: { width: 0, height: 0, channels: 3 } })).toThrow(/0x0 is out of range/);
    expect(() => makeManifest({ ...fields, image: { width: 2000, height: 2000, channels: 3 } })).toThrow(/2000x2000 is out of range/);
    expect(makeManifest({ ...fields, image: { width: 64, height: 48, channels: 3 } }).image).toEqual({ width: 64, height: 48, channels: 3 });
  });
});
