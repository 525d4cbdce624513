import * as tf from '@tensorflow/tfjs';
import { imageModel } from './layers.js';
import type { ModelSpec } from './registry.js';

export const mlp: ModelSpec = {
  id: 'mlp',
  label: 'MLP (128 hidden)',
  input: 'image',
  create: (info, seed) =>
    imageModel(info, seed, (input, classes, kernel) =>
      tf.sequential({
        layers: [
          tf.layers.flatten({ inputShape: input }),
          tf.layers.dense({ units: 128, activation: 'relu', kernelInitializer: kernel() }),
          tf.layers.dense({ units: classes, kernelInitializer: kernel() }),
        ],
      }),
    ),
};
