// A short tiny-cnn run in Node (tfjs CPU backend) on synthetic-coarse images
// made in memory at 128x128 and scaled to 32x32 (no JPEG: the lab's `size=32`
// input without the dataset files), with the lab's defaults: Adam 0.005,
// batch 32, reshuffled every epoch, random flips. The model's initial weights
// come from `seed` (tfjs's initialisers draw their seeds from Math.random).
import * as tf from '@tensorflow/tfjs';
import type { DatasetInfo } from '../../src/pipeline/api.js';
import { resize } from '../../src/pcr/pixels.js';
import { syntheticImage } from '../../src/pcr/synthetic.js';
import { seededRandom, shuffleInPlace } from '../../src/shared/random.js';
import type { ModelSpec } from '../../src/train/models/registry.js';

const SIZE = 32;
const PER = SIZE * SIZE * 3;

export interface Split {
  x: Float32Array;
  y: Int32Array;
  n: number;
}

export function coarseSplit(split: string, n: number): Split {
  const x = new Float32Array(n * PER);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const { image, label } = syntheticImage('coarse', split, i);
    const small = resize(image, SIZE, SIZE).data;
    for (let k = 0; k < PER; k++) x[i * PER + k] = small[k]! / 255;
    y[i] = label;
  }
  return { x, y, n };
}

export const coarseInfo = (examples: number): DatasetInfo => ({
  kind: 'image',
  name: 'synthetic-coarse (in memory)',
  classes: Array.from({ length: 10 }, (_, i) => `class ${i}`),
  inputShape: [SIZE, SIZE, 3],
  fidelityLevels: 1,
  examples,
  records: 1,
  bytesPerLevel: [0],
});

export interface RunOutcome {
  accuracy: number;
  /** Distinct classes the model predicts on the test split: 1 is a collapsed model. */
  classesPredicted: number;
}

export function trainTinyRun(spec: ModelSpec, seed: number, train: Split, test: Split, steps: number, batch = 32): RunOutcome {
  const realRandom = Math.random;
  Math.random = seededRandom(1000 + seed);
  const model = (() => {
    try {
      return spec.create(coarseInfo(train.n));
    } finally {
      Math.random = realRandom;
    }
  })();
  const optimizer = tf.train.adam(0.005);
  try {
    const random = seededRandom(seed);
    const order = Array.from({ length: train.n }, (_, i) => i);
    let at = train.n;
    for (let step = 0; step < steps; step++) {
      if (at + batch > train.n) {
        shuffleInPlace(order, random);
        at = 0;
      }
      const ids = order.slice(at, at + batch);
      at += batch;
      const x = new Float32Array(batch * PER);
      ids.forEach((id, i) => {
        const flip = random() < 0.5;
        for (let r = 0; r < SIZE; r++)
          for (let c = 0; c < SIZE; c++)
            for (let k = 0; k < 3; k++) x[i * PER + (r * SIZE + (flip ? SIZE - 1 - c : c)) * 3 + k] = train.x[id * PER + (r * SIZE + c) * 3 + k]!;
      });
      const y = Int32Array.from(ids, (id) => train.y[id]!);
      const input = model.prepare({ kind: 'image', x, y, ids: Int32Array.from(ids), size: batch, index: 0 });
      tf.tidy(() => void optimizer.minimize(() => model.loss(model.logits(input), input, 10)));
      input.dispose();
    }
    const input = model.prepare({ kind: 'image', x: test.x, y: test.y, ids: new Int32Array(test.n), size: test.n, index: 0 });
    const predicted = tf.tidy(() => model.logits(input).argMax(1).dataSync());
    input.dispose();
    let right = 0;
    for (let i = 0; i < test.n; i++) if (predicted[i] === test.y[i]) right++;
    return { accuracy: right / test.n, classesPredicted: new Set(predicted).size };
  } finally {
    model.dispose();
    optimizer.dispose();
  }
}
