import * as tf from '@tensorflow/tfjs';
import { imageModel } from './layers.js';
import type { ModelSpec } from './registry.js';

/** Two conv blocks and a dense head: the lab's default image model. */
export const smallCnn: ModelSpec = {
  id: 'cnn',
  label: 'Small CNN (2 conv + dense)',
  input: 'image',
  create: (info) =>
    imageModel(info, (input, classes) =>
      tf.sequential({
        layers: [
          tf.layers.conv2d({ inputShape: input, filters: 8, kernelSize: 3, activation: 'relu', padding: 'same' }),
          tf.layers.maxPooling2d({ poolSize: 2 }),
          tf.layers.conv2d({ filters: 16, kernelSize: 3, activation: 'relu', padding: 'same' }),
          tf.layers.maxPooling2d({ poolSize: 2 }),
          tf.layers.flatten(),
          tf.layers.dense({ units: 32, activation: 'relu' }),
          tf.layers.dense({ units: classes }),
        ],
      }),
    ),
};

/**
 * One strided conv: small enough for software WebGPU (SwiftShader) in tests.
 * ELU, not ReLU: with inputs in [0, 1] and Adam at 0.005, ReLU filters die
 * (negative on every pixel, so no gradient) and with 4 of them about 1 run in
 * 10 lost all 4 and predicted one class for good (bench/tiny-cnn-collapse.ts).
 * ELU is fused into the conv like ReLU, so it costs no extra op.
 */
export const tinyCnn: ModelSpec = {
  id: 'tiny-cnn',
  label: 'Tiny CNN (1 strided conv)',
  input: 'image',
  create: (info) =>
    imageModel(info, (input, classes) =>
      tf.sequential({
        layers: [
          tf.layers.conv2d({ inputShape: input, filters: 4, kernelSize: 3, strides: 2, activation: 'elu' }),
          tf.layers.flatten(),
          tf.layers.dense({ units: classes }),
        ],
      }),
    ),
};
