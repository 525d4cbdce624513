import { describe, expect, it } from 'vitest';
import { baselineLine, majorityClass } from '../../../src/app/model-view.js';
import { classTotals } from '../../../src/train/trainer.js';

describe('the accuracy tile’s baseline', () => {
  // A split of three of birdstrikes' classes as a model that predicts "None" for every row leaves it (the bundled split has six).
  const classes = ['Medium', 'Minor', 'None'];
  const allNone = [0, 0, 35, 0, 0, 64, 0, 0, 843];

  it('is the share of the largest true class, read from the rows of the confusion matrix', () => {
    expect(classTotals(allNone)).toEqual([35, 64, 843]);
    expect(majorityClass(classes, classTotals(allNone))).toEqual({ name: 'None', share: 843 / 942 });
    // Columns (predictions) do not count: the same rows predicted otherwise give the same baseline.
    expect(majorityClass(classes, classTotals([35, 0, 0, 64, 0, 0, 843, 0, 0]))).toEqual({ name: 'None', share: 843 / 942 });
    expect(majorityClass(classes, [0, 0, 0])).toBeUndefined();
    expect(majorityClass(classes, [1, 2])).toBeUndefined(); // counts of another dataset's classes
  });

  it('says when the accuracy is no better than always guessing that class', () => {
    const base = majorityClass(classes, classTotals(allNone))!;
    expect(baselineLine(843 / 942, base)).toBe('no better than always “None”: 89.5%');
    expect(baselineLine(0.8949, base)).toBe('no better than always “None”: 89.5%'); // equal as the tile shows it
    expect(baselineLine(0.9, base)).toBe('always “None”: 89.5%');
    expect(baselineLine(0.5, { name: 'T-shirt/top', share: 0.1 })).toBe('always “T-shirt/top”: 10.0%');
  });
});
