// Adapts a tfjs LayersModel over image batches to the lab's Model interface.
import * as tf from '@tensorflow/tfjs';
import { softmaxCrossEntropy } from '../../gpu/softmax-ce.js';
import { releaseKernelBuffers } from '../../gpu/tfjs-kernel.js';
import type { Batch, DatasetInfo } from '../../pipeline/api.js';
import { hash32 } from '../../shared/random.js';
import type { Model, ModelInput } from './registry.js';

interface ImageInput extends ModelInput {
  x: tf.Tensor4D;
}

/**
 * Mean softmax cross-entropy: our kernels on WebGPU (the lab's backend), where tfjs's reductions over [rows, classes]
 * cost most of a tabular step on SwiftShader; tfjs's own loss elsewhere (the unit tests train on its CPU backend).
 */
export function softmaxLoss(logits: tf.Tensor2D, input: ModelInput, classes: number): tf.Scalar {
  if (tf.getBackend() === 'webgpu') return softmaxCrossEntropy(logits, input.labels);
  return tf.losses.softmaxCrossEntropy(tf.oneHot(input.labels, classes), logits) as tf.Scalar;
}

/** Each call, the next layer's kernel initializer: Glorot-normal (tfjs's default for dense and conv layers) drawn from the seed and the layer's place. */
export type KernelInit = () => ReturnType<typeof tf.initializers.glorotNormal> | undefined;

export function seededKernels(seed: number | undefined): KernelInit {
  let layer = 0;
  return () => (seed === undefined ? undefined : tf.initializers.glorotNormal({ seed: hash32(seed, 'kernel', layer++) }));
}

export function imageModel(
  info: DatasetInfo,
  seed: number | undefined,
  build: (input: [number, number, number], classes: number, kernel: KernelInit) => tf.LayersModel,
): Model {
  if (info.kind !== 'image') throw new Error(`this model reads images; ${info.name} is a ${info.kind} dataset`);
  const shape = info.inputShape as [number, number, number];
  const model = build(shape, info.classes.length, seededKernels(seed));
  return {
    prepare(batch: Batch): ImageInput {
      if (batch.kind !== 'image') throw new Error(`expected an image batch, got ${batch.kind}`);
      const x = tf.tensor4d(batch.x, [batch.size, ...shape]);
      const labels = tf.tensor1d(batch.y, 'int32');
      return { size: batch.size, x, labels, dispose: () => tf.dispose([x, labels]) };
    },
    logits: (input) => model.apply((input as ImageInput).x) as tf.Tensor2D,
    loss: softmaxLoss,
    // A LayerVariable holds its tf.Variable; read() hands out that variable, not a copy.
    variables: () => model.weights.map((w) => w.read() as tf.Variable),
    dispose: () => {
      model.dispose();
      releaseKernelBuffers(); // our operations' scratch buffers and uniforms go with the run's model
    },
  };
}
