// Adapts a tfjs LayersModel over image batches to the lab's Model interface.
import * as tf from '@tensorflow/tfjs';
import type { Batch, DatasetInfo } from '../../pipeline/api.js';
import type { Model, ModelInput } from './registry.js';

interface ImageInput extends ModelInput {
  x: tf.Tensor4D;
}

export function softmaxLoss(logits: tf.Tensor2D, input: ModelInput, classes: number): tf.Scalar {
  return tf.losses.softmaxCrossEntropy(tf.oneHot(input.labels, classes), logits) as tf.Scalar;
}

export function imageModel(info: DatasetInfo, build: (input: [number, number, number], classes: number) => tf.LayersModel): Model {
  if (info.kind !== 'image') throw new Error(`this model reads images; ${info.name} is a ${info.kind} dataset`);
  const shape = info.inputShape as [number, number, number];
  const model = build(shape, info.classes.length);
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
    dispose: () => model.dispose(),
  };
}
