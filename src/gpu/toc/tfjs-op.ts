// A tfjs operation whose input is a TOC-compressed batch A: forward A * W (+ b),
// gradient dZ^T * A (as A^T * dZ, in the layout of W) and, with a bias, its column
// sums. All run as our WGSL kernels on the device tfjs itself uses, so the batch
// is never decompressed.
import * as tf from '@tensorflow/tfjs';
import { recordAddBias, recordColumnSums, recordReluMask } from '../bias.js';
import { requireWebgpu, runKernel, scratchBuffer } from '../tfjs-kernel.js';
import type { Strides } from './kernels.js';

/** A matrix on the GPU that can multiply without being made dense: TocGpuBatch, or CsrGpuBatch as a baseline. */
export interface GpuSparseMatrix {
  rows: number;
  cols: number;
  times(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, ms?: Strides, rs?: Strides): void;
  transposeTimes(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, ms?: Strides, rs?: Strides): void;
  /** R = A * M + b, relu'd with `relu`, in the product's own pass (the runs and CSR gathers); without it a pass of its own adds b. */
  timesAddBias?(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, bias: GPUBuffer, relu: boolean): void;
}

/**
 * Z = A * W (+ b) for a TOC batch A (rows x cols), weights W (cols x units) and
 * an optional bias b (units), differentiable in W and b. The bias is added in the
 * product's own command encoder and its gradient taken by our column sums: tfjs's
 * broadcast add and axis-0 sum cost more than the product on SwiftShader. With
 * `activation` 'relu' (and a bias) it is relu(A * W + b), the ReLU in the bias's
 * pass and its gradient a pass before A^T * dZ: three tfjs programs fewer a step.
 * Where the batch can (timesAddBias: the runs and CSR gathers) the bias and the
 * ReLU are added as the product stores its outputs, with no pass of their own.
 */
export function tocMatMul(a: GpuSparseMatrix, w: tf.Tensor2D, b?: tf.Tensor1D, activation: 'linear' | 'relu' = 'linear'): tf.Tensor2D {
  requireWebgpu('tocMatMul');
  const [cols, units] = w.shape;
  if (cols !== a.cols) throw new Error(`tocMatMul: W has ${cols} rows, the batch has ${a.cols} columns`);
  if (b && (b.rank !== 1 || b.shape[0] !== units)) throw new Error(`tocMatMul: b has shape [${b.shape}], W has ${units} columns`);
  const relu = activation === 'relu';
  if (relu && !b) throw new Error('tocMatMul: a ReLU is fused with the bias; give a bias');
  const forward = (inputs: tf.Tensor[]) =>
    runKernel(inputs, [[a.rows, units]], 'TocMatMul.forward', (encoder, device, [m, bias], [out]) => {
      if (bias && a.timesAddBias) return a.timesAddBias(encoder, m!, units, out!, bias, relu);
      a.times(encoder, m!, units, out!);
      if (bias) recordAddBias(device, encoder, out!, bias, a.rows, units, relu);
    })[0]!;
  // dL/dW = A^T * dZ (cols x units, the layout of W) and, with a bias, dL/db = the column sums of dZ, in one submission.
  // Through a ReLU, dZ is dY masked by its output Y, in a scratch buffer first.
  const gradients = (dy: tf.Tensor, bias: boolean, y?: tf.Tensor) =>
    runKernel(y ? [dy, y] : [dy], bias ? [[cols, units], [units]] : [[cols, units]], 'TocMatMul.gradient', (encoder, device, [g, out], [dw, db]) => {
      let dz = g!;
      if (out) {
        dz = scratchBuffer(device, 'TocMatMul.reluGradient', a.rows * units * 4);
        recordReluMask(device, encoder, g!, out, dz, a.rows, units);
      }
      a.transposeTimes(encoder, dz, units, dw!);
      if (db) recordColumnSums(device, encoder, dz, db, a.rows, units);
    });
  if (!b) {
    const op = tf.customGrad((weights) => ({ value: forward([weights as tf.Tensor]), gradFunc: (dz: tf.Tensor) => gradients(dz, false)[0]! }));
    return op(w) as tf.Tensor2D;
  }
  const op = tf.customGrad((weights, bias, save) => {
    const value = forward([weights as tf.Tensor, bias as tf.Tensor]);
    if (relu) (save as tf.GradSaveFunc)([value]);
    return { value, gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => gradients(dy, true, relu ? saved[0] : undefined) };
  });
  return op(w, b) as tf.Tensor2D;
}
