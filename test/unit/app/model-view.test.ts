import { describe, expect, it } from 'vitest';
import { baselineLine, majorityClass } from '../../../src/app/model-view.js';

describe('the accuracy tile’s baseline', () => {
  // A split of three of birdstrikes' classes as a model that predicts "None" for every row leaves it (the bundled split has six).
  const classes = ['Medium', 'Minor', 'None'];
  const allNone = [0, 0, 35, 0, 0, 64, 0, 0, 843];

  it('is the share of the largest true class, read from the rows of the confusion matrix', () => {
    expect(majorityClass(classes, allNone)).toEqual({ name: 'None', share: 843 / 942 });
    // Columns (predictions) do not count: the same rows predicted otherwise give the same baseline.
    expect(majorityClass(classes, [35, 0, 0, 64, 0, 0, 843, 0, 0])).toEqual({ name: 'None', share: 843 / 942 });
    expect(majorityClass(classes, new Array(9).fill(0))).toBeUndefined();
  });

  it('says when the accuracy is no better than always guessing that class', () => {
    const base = majorityClass(classes, allNone)!;
    expect(baselineLine(843 / 942, base)).toBe('no better than always “None”: 89.5%');
    expect(baselineLine(0.8949, base)).toBe('no better than always “None”: 89.5%'); // equal as the tile shows it
    expect(baselineLine(0.9, base)).toBe('always “None”: 89.5%');
    expect(baselineLine(0.5, { name: 'T-shirt/top', share: 0.1 })).toBe('always “T-shirt/top”: 10.0%');
  });
});
