// The lab's loss, mean softmax cross-entropy, as our kernels (shaders/softmax_ce.wgsl)
// in place of tf.losses.softmaxCrossEntropy: the same value and gradient from two
// dispatches in one submission instead of tfjs's reductions over [rows, classes], which on
// SwiftShader cost most of a tabular step (docs/toc-kernels-log.md, "Session 13").
import * as tf from '@tensorflow/tfjs';
import softmaxCeWgsl from '../../shaders/softmax_ce.wgsl?raw';
import { dispatch, shapeParams, type KernelProgram } from './pipelines.js';
import { requireWebgpu, runKernel, scratchBuffer } from './tfjs-kernel.js';

const ROW_LOSSES: KernelProgram = { label: 'SoftmaxCe.rowLosses', wgsl: softmaxCeWgsl, entryPoint: 'row_losses', workgroupSize: 64, layout: 'grid' };
// One workgroup, its invocations striding over the rows.
const MEAN_LOSS: KernelProgram = { label: 'SoftmaxCe.meanLoss', wgsl: softmaxCeWgsl, entryPoint: 'mean_loss', workgroupSize: 64, layout: 'perColumn' };

/**
 * Mean over rows of -log softmax(logits[row])[labels[row]], as tf.losses.softmaxCrossEntropy
 * computes it against tf.oneHot(labels, classes) (a label outside the classes adds 0);
 * differentiable in the logits: dL/dlogits = (softmax - onehot) * dL / rows. One submission
 * computes the loss and that gradient for dL = 1; the backward pass scales it by dL.
 */
export function softmaxCrossEntropy(logits: tf.Tensor2D, labels: tf.Tensor1D): tf.Scalar {
  requireWebgpu('softmaxCrossEntropy');
  const [rows, classes] = logits.shape;
  if (labels.dtype !== 'int32' || labels.shape[0] !== rows)
    throw new Error(`softmaxCrossEntropy: labels must be ${rows} int32 values, got [${labels.shape}] ${labels.dtype}`);
  const op = tf.customGrad((x, save) => {
    const [value, gradient] = runKernel([x as tf.Tensor, labels], [[], [rows, classes]], 'SoftmaxCe', (encoder, device, [z, y], [mean, dz]) => {
      const params = shapeParams(device, rows, classes);
      const perRow = scratchBuffer(device, 'SoftmaxCe.rowLoss', rows * 4);
      const pass = encoder.beginComputePass({ label: 'SoftmaxCe' });
      dispatch(device, pass, ROW_LOSSES, { 0: params, 1: z!, 2: y!, 3: perRow, 4: dz! }, rows, 1);
      dispatch(device, pass, MEAN_LOSS, { 0: params, 3: perRow, 5: mean! }, 1, 1);
      pass.end();
    });
    (save as tf.GradSaveFunc)([gradient!]);
    return { value: value!, gradFunc: (dy: tf.Tensor, [g]: tf.Tensor[]) => g!.mul(dy) };
  });
  return op(logits) as tf.Scalar;
}
