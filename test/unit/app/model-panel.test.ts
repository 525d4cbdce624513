// What a model file keeps and how it loads back: its name, its dataset's
// address (relative to the page when it was the page's own server), and the
// model it names, which must exist, read its dataset's kind and fit its weights.
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkModelFits, manifestForHere, modelFileName, storedManifestUrl } from '../../../src/app/model-panel.js';
import type { ModelFileMeta } from '../../../src/train/model-file.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
  await tf.ready();
});

const page = 'http://localhost:5199/?dataset=flights-250k';

describe('model file names', () => {
  it('joins id, dataset and step with single dashes', () => {
    expect(modelFileName({ modelId: 'logreg', dataset: { name: 'flights (250k)' }, step: 10 } as ModelFileMeta)).toBe('logreg-flights-250k-step10');
    expect(modelFileName({ modelId: 'tiny-cnn', dataset: { name: 'Fashion-MNIST mini' }, step: 14 } as ModelFileMeta)).toBe(
      'tiny-cnn-Fashion-MNIST-mini-step14',
    );
  });
});

describe('dataset addresses', () => {
  it('keeps a dataset of the page’s own server relative to the page, any other as it is', () => {
    expect(storedManifestUrl('http://localhost:5199/datasets/flights-250k-toc/manifest.json', page)).toBe('datasets/flights-250k-toc/manifest.json');
    expect(storedManifestUrl('http://localhost:5199/lab/d/manifest.json', 'http://localhost:5199/lab/')).toBe('d/manifest.json');
    expect(storedManifestUrl('https://data.example.com/d/manifest.json', page)).toBe('https://data.example.com/d/manifest.json');
    expect(storedManifestUrl('http://localhost:6000/datasets/x/manifest.json', page)).toBe('http://localhost:6000/datasets/x/manifest.json');
    expect(storedManifestUrl('idb://local/abc/manifest.json', page)).toBe('idb://local/abc/manifest.json');
  });

  it('resolves a relative address against the page, and reads a listed dataset here for an old file’s other origin', () => {
    expect(manifestForHere('datasets/flights-250k-toc/manifest.json', 'http://127.0.0.1:7000/')).toEqual({
      url: 'http://127.0.0.1:7000/datasets/flights-250k-toc/manifest.json',
    });
    const old = manifestForHere('http://localhost:38995/datasets/flights-250k-toc/manifest.json', page);
    expect(old.url).toBe('http://localhost:5199/datasets/flights-250k-toc/manifest.json');
    expect(old.note).toContain('http://localhost:38995/datasets/flights-250k-toc/manifest.json');
    expect(manifestForHere('https://data.example.com/mine/manifest.json', page)).toEqual({ url: 'https://data.example.com/mine/manifest.json' });
    expect(manifestForHere('idb://local/abc/manifest.json', page)).toEqual({ url: 'idb://local/abc/manifest.json' });
  });
});

describe('the model a file names', () => {
  const meta = (modelId: string): ModelFileMeta => ({
    format: 'bytelab-model',
    version: 1,
    modelId,
    dataset: { name: 'flights (250k)', manifestUrl: 'datasets/flights-250k-toc/manifest.json', inputShape: [487], classes: ['a', 'b'] },
    step: 10,
  });
  const weights = [
    { shape: [487, 2], data: new Float32Array(974) },
    { shape: [2], data: new Float32Array(2) },
  ];

  it('takes a model that exists, reads the dataset’s kind and fits the weights', () => {
    expect(() => checkModelFits(meta('logreg'), weights, 'm.json')).not.toThrow();
    expect(() => checkModelFits(meta('svm'), weights, 'm.json')).not.toThrow(); // the same shapes: nothing tells them apart
  });

  it('refuses an unknown model, one for images, and weights that do not fit', () => {
    expect(() => checkModelFits(meta('nope'), weights, 'm.json')).toThrow('m.json: unknown model "nope"');
    expect(() => checkModelFits(meta('tiny-cnn'), weights, 'm.json')).toThrow('m.json: it names Tiny CNN (1 strided conv), which reads image data');
    expect(() => checkModelFits(meta('toc-mlp'), weights, 'm.json')).toThrow('m.json: its weights do not fit MLP on TOC');
  });
});
