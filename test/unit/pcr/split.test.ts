// The train/test split of a dataset built from a folder (the lab's "Build a dataset" and `bytelab pcr build --folder`):
// stable, about 1 file in 10 in the test split, and a test image for every class of 2 or more however small the folder.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/shared/random.js';
import { splitPoint, testSplit } from '../../../src/pcr/ingest.js';

/** `n` files of each class, named as a camera or a script names them: circles/circles-0.png .. circles/circles-11.png. */
const folder = (classes: string[], n: number, name = (cls: string, i: number) => `${cls}/${cls}-${i}.png`) =>
  classes.flatMap((cls) => Array.from({ length: n }, (_, i) => ({ name: name(cls, i), cls })));

/** The names in the test split. */
const testNames = (files: { name: string; cls: string }[], fraction = 0.1) => {
  const test = testSplit(files, fraction);
  return files.filter((_, i) => test[i]).map((f) => f.name);
};

describe('the split of a folder built into a dataset', () => {
  it('gives each class of a small folder a test image and keeps the rest to train on (it gave 24 + 0 images, and no accuracy)', () => {
    for (const files of [
      folder(['circles', 'squares'], 12),
      folder(['circles', 'squares'], 12, (cls, i) => `${cls}/${cls}-${i}.jpg`),
      folder(['red', 'blue'], 3, (cls, i) => `${cls}/${i}.jpg`),
      folder(['a', 'b', 'c'], 2),
    ]) {
      const test = new Set(testNames(files));
      for (const cls of new Set(files.map((f) => f.cls))) {
        const of = files.filter((f) => f.cls === cls);
        const tested = of.filter((f) => test.has(f.name)).length;
        expect(tested, `${cls} of ${files[0]!.name}`).toBeGreaterThanOrEqual(1);
        expect(tested, `${cls} of ${files[0]!.name}`).toBeLessThan(of.length);
      }
    }
  });

  it('trains on a class of one image, and puts nothing in the test split when asked for none', () => {
    expect(testNames(folder(['circles', 'squares'], 1))).toEqual([]);
    expect(testNames(folder(['circles', 'squares'], 12), 0)).toEqual([]);
  });

  it('spreads names that differ in their last digit: FNV-1a alone gave circles-0.png and circles-1.png near-equal places', () => {
    // Independent places in [0, 1) differ by 1/3 on average; FNV-1a's were 0.11 to 0.15 apart for these.
    for (const cls of ['circles', 'squares', 'cat']) {
      const apart = Array.from({ length: 50 }, (_, k) => Math.abs(splitPoint(`${cls}/${cls}-${2 * k}.png`) - splitPoint(`${cls}/${cls}-${2 * k + 1}.png`)));
      expect(apart.reduce((a, b) => a + b) / apart.length, cls).toBeGreaterThan(0.25);
    }
  });

  it('is the same whatever order the files come in', () => {
    const files = folder(['circles', 'squares', 'triangles'], 40);
    const expected = new Set(testNames(files));
    const random = seededRandom(7);
    for (let k = 0; k < 5; k++) {
      const shuffled = [...files].sort(() => random() - 0.5);
      expect(new Set(testNames(shuffled))).toEqual(expected);
    }
  });

  it('stays about 1 in 10 for large folders, every class in it', () => {
    for (const name of [(cls: string, i: number) => `${cls}/IMG_${String(i).padStart(4, '0')}.jpg`, (cls: string, i: number) => `${cls}/${i}.jpg`]) {
      const files = folder(['cat', 'dog', 'bird', 'fish'], 2500, name);
      const test = new Set(testNames(files));
      expect(test.size / files.length).toBeGreaterThan(0.09);
      expect(test.size / files.length).toBeLessThan(0.11);
      for (const cls of ['cat', 'dog', 'bird', 'fish']) {
        const share = files.filter((f) => f.cls === cls && test.has(f.name)).length / 2500;
        expect(share, cls).toBeGreaterThan(0.08);
        expect(share, cls).toBeLessThan(0.12);
      }
    }
  });
});
