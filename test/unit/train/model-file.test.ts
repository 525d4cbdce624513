// A trained model as tfjs artifacts: the weights come back exactly, with what
// bytelab needs to rebuild the model, and a file that is not a bytelab model is
// refused saying so.
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { fromArtifacts, toArtifacts, type ModelFileMeta } from '../../../src/train/model-file.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
  await tf.ready();
});

const meta: ModelFileMeta = {
  format: 'bytelab-model',
  version: 1,
  modelId: 'mlp',
  dataset: { name: 'toy', manifestUrl: 'http://localhost/toy/manifest.json', inputShape: [2, 2, 1], classes: ['a', 'b'] },
  step: 12,
  accuracy: 0.75,
};

describe('model files', () => {
  it('round-trips the weights and the meta through tfjs artifacts', async () => {
    const weights = [
      { shape: [2, 3], data: Float32Array.from([1, -2, 3.5, 0, 1e-8, -7]) },
      { shape: [3], data: Float32Array.from([0.1, 0.2, 0.3]) },
    ];
    const a = await toArtifacts(weights, meta);
    expect(a.weightSpecs!.map((s) => s.shape)).toEqual([[2, 3], [3]]);
    const back = fromArtifacts(a, 'm.json');
    expect(back.meta).toEqual(meta);
    expect(back.weights.map((w) => Array.from(w.data))).toEqual(weights.map((w) => Array.from(w.data)));
  });

  it("refuses a tfjs model that is not bytelab's, and one without weights", async () => {
    expect(() => fromArtifacts({ modelTopology: { class_name: 'Sequential' } }, 'other.json')).toThrow('other.json: not a bytelab model');
    const a = await toArtifacts([{ shape: [1], data: Float32Array.from([1]) }], meta);
    expect(() => fromArtifacts({ ...a, weightData: undefined }, 'cut.json')).toThrow('cut.json: the weights are missing');
  });

  it('refuses weights that are not all numbers, naming the weight and the byte, and will not write them (a run that diverged)', async () => {
    const a = await toArtifacts(
      [
        { shape: [2, 3], data: Float32Array.from([1, -2, 3.5, 0, 1e-8, -7]) },
        { shape: [3], data: Float32Array.from([0.1, 0.2, 0.3]) },
      ],
      meta,
    );
    // The file's weights with the second variable's third value made NaN (a NaN .bin loaded and trained on in NaN, unsaid).
    const data = new Float32Array((a.weightData as ArrayBuffer).slice(0));
    data[6 + 2] = Number.NaN;
    expect(() => fromArtifacts({ ...a, weightData: data.buffer }, 'nan.json')).toThrow(
      'nan.json: weight variable_1 holds NaN (value 2 at byte 32 of the weights): a model that is not all numbers only trains in NaN',
    );
    await expect(toArtifacts([{ shape: [2], data: Float32Array.from([1, Number.POSITIVE_INFINITY]) }], meta)).rejects.toThrow(
      'its weights are not numbers (variable_0[1] is Infinity: the run diverged)',
    );
  });
});
