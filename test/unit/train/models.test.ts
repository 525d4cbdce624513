// Every model of the registry on the tfjs CPU backend: it can be made and
// disposed without a single step (a run stopped while it loads), lists the
// variables a checkpoint saves, and leaves no tensors behind; its initial weights
// are drawn from the run's seed.
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DatasetInfo } from '../../../src/pipeline/api.js';
import { MODELS } from '../../../src/train/models/registry.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
  await tf.ready();
});

const info = (kind: DatasetInfo['kind']): DatasetInfo => ({
  kind,
  name: 'shape only',
  classes: ['a', 'b', 'c'],
  inputShape: kind === 'image' ? [8, 8, 1] : [20],
  fidelityLevels: 1,
  examples: 0,
  records: 1,
  bytesPerLevel: [0],
});

describe('models', () => {
  for (const spec of MODELS) {
    it(`${spec.id}: made and disposed without a step, its variables listed, no tensor left`, () => {
      const before = tf.memory().numTensors;
      const model = spec.create(info(spec.input));
      const variables = model.variables();
      expect(variables.length).toBeGreaterThan(0);
      expect(variables.every((v) => v instanceof tf.Variable)).toBe(true);
      expect(() => model.dispose()).not.toThrow();
      expect(tf.memory().numTensors).toBe(before);
    });

    it(`${spec.id}: the same seed starts it from the same weights, another seed from others`, () => {
      const weights = (seed: number) => {
        const model = spec.create(info(spec.input), seed);
        const values = model.variables().map((v) => Array.from(v.dataSync()));
        model.dispose();
        return values;
      };
      const first = weights(7);
      expect(weights(7)).toEqual(first);
      const other = weights(8);
      // Every kernel differs (biases start at zero under any seed).
      const kernels = first.map((v, i) => [v, other[i]!] as const).filter(([v]) => v.some((x) => x !== 0));
      expect(kernels.length).toBeGreaterThan(0);
      for (const [a, b] of kernels) expect(b).not.toEqual(a);
      // Layers of one model are not drawn alike: no two kernels of the same size start the same.
      const sameSize = first.filter((v) => v.some((x) => x !== 0));
      // Image models start as tfjs's dense and conv layers do, Glorot-normal: the MLP's hidden kernel (64 x 128) has values
      // past the Glorot-uniform limit sqrt(6 / (64 + 128)); the tables' layers are uniform, within it.
      if (spec.id === 'mlp') expect(Math.max(...first[0]!.map(Math.abs))).toBeGreaterThan(Math.sqrt(6 / (64 + 128)));
      for (let i = 0; i < sameSize.length; i++)
        for (let j = i + 1; j < sameSize.length; j++) if (sameSize[i]!.length === sameSize[j]!.length) expect(sameSize[j]).not.toEqual(sameSize[i]);
    });
  }
});
