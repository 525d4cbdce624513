import * as tf from '@tensorflow/tfjs';
import { imageModel } from './layers.js';
import type { ModelSpec } from './registry.js';

/** Two conv blocks and a dense head: the lab's default image model. */
export const smallCnn: ModelSpec = {
  id: 'cnn',
  label: 'Small CNN (2 conv + dense)',
  input: 'image',
  create: (info, seed) =>
    imageModel(info, seed, (input, classes, kernel) =>
      tf.sequential({
        layers: [
          tf.layers.conv2d({ inputShape: input, filters: 8, kernelSize: 3, activation: 'relu', padding: 'same', kernelInitializer: kernel() }),
          tf.layers.maxPooling2d({ poolSize: 2 }),
          tf.layers.conv2d({ filters: 16, kernelSize: 3, activation: 'relu', padding: 'same', kernelInitializer: kernel() }),
          tf.layers.maxPooling2d({ poolSize: 2 }),
          tf.layers.flatten(),
          tf.layers.dense({ units: 32, activation: 'relu', kernelInitializer: kernel() }),
          tf.layers.dense({ units: classes, kernelInitializer: kernel() }),
        ],
      }),
    ),
};

/**
 * One strided conv: small enough for software WebGPU (SwiftShader) in tests.
 * Its input is moved from [0, 1] to [-1, 1] first: on all-positive inputs Adam
 * (0.005) pushed whole ReLU filters below zero on every pixel, where they get
 * no gradient again, and about 1 run in 10 lost all 4 and predicted one class
 * for good (bench/tiny-cnn-collapse.ts). No weights more; same speed.
 */
export const tinyCnn: ModelSpec = {
  id: 'tiny-cnn',
  label: 'Tiny CNN (1 strided conv)',
  input: 'image',
  create: (info, seed) =>
    imageModel(info, seed, (input, classes, kernel) =>
      tf.sequential({
        layers: [
          tf.layers.rescaling({ inputShape: input, scale: 2, offset: -1 }),
          tf.layers.conv2d({ filters: 4, kernelSize: 3, strides: 2, activation: 'relu', kernelInitializer: kernel() }),
          tf.layers.flatten(),
          tf.layers.dense({ units: classes, kernelInitializer: kernel() }),
        ],
      }),
    ),
};
