// The lab's loss, mean softmax cross-entropy, as our kernels (shaders/softmax_ce.wgsl)
// in place of tf.losses.softmaxCrossEntropy: the same value and gradient, one
// dispatch each way instead of tfjs's reductions over [rows, classes], which on
// SwiftShader cost most of a tabular step (docs/toc.md, session 13).
import * as tf from '@tensorflow/tfjs';
import softmaxCeWgsl from '../../shaders/softmax_ce.wgsl?raw';
import { dispatch, shapeParams, type KernelProgram } from './pipelines.js';
import { requireWebgpu, runKernel } from './tfjs-kernel.js';

// One workgroup for the mean (its invocations stride over the rows), one invocation per row for the gradient.
const MEAN_LOSS: KernelProgram = { label: 'SoftmaxCe.meanLoss', wgsl: softmaxCeWgsl, entryPoint: 'mean_loss', workgroupSize: 64, layout: 'perColumn' };
const LOGITS_GRADIENT: KernelProgram = { label: 'SoftmaxCe.gradient', wgsl: softmaxCeWgsl, entryPoint: 'logits_gradient', workgroupSize: 64, layout: 'grid' };

/**
 * Mean over rows of -log softmax(logits[row])[labels[row]], as tf.losses.softmaxCrossEntropy
 * computes it against tf.oneHot(labels, classes) (a label outside the classes adds 0);
 * differentiable in the logits: dL/dlogits = (softmax - onehot) * dL / rows.
 */
export function softmaxCrossEntropy(logits: tf.Tensor2D, labels: tf.Tensor1D): tf.Scalar {
  requireWebgpu('softmaxCrossEntropy');
  const [rows, classes] = logits.shape;
  if (labels.dtype !== 'int32' || labels.shape[0] !== rows)
    throw new Error(`softmaxCrossEntropy: labels must be ${rows} int32 values, got [${labels.shape}] ${labels.dtype}`);
  const op = tf.customGrad((x, save) => {
    (save as tf.GradSaveFunc)([x as tf.Tensor]);
    const value = runKernel([x as tf.Tensor, labels], [], 'SoftmaxCe.loss', (encoder, device, [z, y], out) => {
      const pass = encoder.beginComputePass({ label: MEAN_LOSS.label });
      dispatch(device, pass, MEAN_LOSS, { 0: shapeParams(device, rows, classes), 1: z!, 2: y!, 4: out }, 1, 1);
      pass.end();
    });
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) =>
      runKernel([saved[0]!, labels, dy], [rows, classes], 'SoftmaxCe.dLogits', (encoder, device, [z, y, up], out) => {
        const pass = encoder.beginComputePass({ label: LOGITS_GRADIENT.label });
        dispatch(device, pass, LOGITS_GRADIENT, { 0: shapeParams(device, rows, classes), 1: z!, 2: y!, 3: up!, 4: out }, rows, 1);
        pass.end();
      });
    return { value, gradFunc };
  });
  return op(logits) as tf.Scalar;
}
