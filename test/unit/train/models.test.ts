// Every model of the registry on the tfjs CPU backend: it can be made and
// disposed without a single step (a run stopped while it loads), lists the
// variables a checkpoint saves, and leaves no tensors behind.
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
  }
});
