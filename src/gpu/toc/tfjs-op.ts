// A tfjs operation whose input is a TOC-compressed batch A: forward A * W,
// gradient dZ^T * A (as A^T * dZ, in the layout of W). Both run as our WGSL
// kernels on the device tfjs itself uses, so the batch is never decompressed.
import * as tf from '@tensorflow/tfjs';
import type { Strides } from './kernels.js';

/** The parts of tfjs-backend-webgpu's WebGPUBackend we use (public methods of its class). */
interface WebGpuBackendLike {
  device: GPUDevice;
  /** Moves a tensor's data to a GPU buffer if it still lives on the CPU (fresh tensors do). */
  uploadToGPU(dataId: object): void;
}

/** Output buffers reused from step to step; tfjs copies each result out before we write it again. */
const outputs = new Map<string, GPUBuffer>();

function outputBuffer(device: GPUDevice, label: string, bytes: number): GPUBuffer {
  const key = `${label}:${bytes}`;
  let buffer = outputs.get(key);
  if (!buffer) {
    // tfjs copies the result into a buffer of the same usage, which must include COPY_DST.
    buffer = device.createBuffer({ label, size: Math.max(4, bytes), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    outputs.set(key, buffer);
  }
  return buffer;
}

/** Output buffers held now (the tests check a run leaves none). */
export function tocOutputCount(): number {
  return outputs.size;
}

/** Frees the cached output buffers; a model over TOC batches calls it when it is disposed, at the end of its run. */
export function releaseTocOutputs(): void {
  for (const buffer of outputs.values()) buffer.destroy();
  outputs.clear();
}

/**
 * Runs one of our kernels on a tfjs tensor and returns the result as a tfjs
 * tensor. dataToGPU submits tfjs's pending work first and creating a tensor from
 * a GPUBuffer copies it in a submission of its own, so queue order keeps the
 * three steps in sequence.
 */
function runKernel(
  input: tf.Tensor,
  shape: [number, number],
  label: string,
  record: (encoder: GPUCommandEncoder, m: GPUBuffer, out: GPUBuffer) => void,
): tf.Tensor2D {
  const backend = tf.backend() as unknown as WebGpuBackendLike;
  const device = backend.device;
  backend.uploadToGPU(input.dataId);
  const gpu = input.dataToGPU();
  const out = outputBuffer(device, label, shape[0] * shape[1] * 4);
  const encoder = device.createCommandEncoder({ label });
  record(encoder, gpu.buffer!, out);
  device.queue.submit([encoder.finish()]);
  gpu.tensorRef.dispose();
  return tf.tensor({ buffer: out }, shape, 'float32') as tf.Tensor2D;
}

/** A matrix on the GPU that can multiply without being made dense: TocGpuBatch, or CsrGpuBatch as a baseline. */
export interface GpuSparseMatrix {
  rows: number;
  cols: number;
  times(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, ms?: Strides, rs?: Strides): void;
  transposeTimes(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, ms?: Strides, rs?: Strides): void;
}

/** Z = A * W for a TOC batch A (rows x cols) and weights W (cols x units), differentiable in W. */
export function tocMatMul(a: GpuSparseMatrix, w: tf.Tensor2D): tf.Tensor2D {
  if (tf.getBackend() !== 'webgpu') throw new Error('tocMatMul needs the tfjs webgpu backend');
  const [cols, units] = w.shape;
  if (cols !== a.cols) throw new Error(`tocMatMul: W has ${cols} rows, the batch has ${a.cols} columns`);
  const op = tf.customGrad((weights) => {
    const value = runKernel(weights as tf.Tensor, [a.rows, units], 'TocMatMul.forward', (encoder, m, out) => a.times(encoder, m, units, out));
    // dL/dW = A^T * dZ: cols x units, the layout of W.
    const gradFunc = (dz: tf.Tensor) => runKernel(dz, [cols, units], 'TocMatMul.gradient', (encoder, m, out) => a.transposeTimes(encoder, m, units, out));
    return { value, gradFunc };
  });
  return op(w) as tf.Tensor2D;
}
