// A tfjs operation whose input is a TOC-compressed batch A: forward A * W (+ b),
// gradient dZ^T * A (as A^T * dZ, in the layout of W) and, with a bias, its column
// sums. All run as our WGSL kernels on the device tfjs itself uses, so the batch
// is never decompressed.
import * as tf from '@tensorflow/tfjs';
import { recordAddBias, recordColumnSums, releaseBiasParams } from '../bias.js';
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
  if (tf.getBackend() === 'webgpu') releaseBiasParams((tf.backend() as unknown as WebGpuBackendLike).device);
}

/**
 * Runs our kernels on tfjs tensors and returns the result as a tfjs tensor.
 * dataToGPU submits tfjs's pending work first and creating a tensor from a
 * GPUBuffer copies it in a submission of its own, so queue order keeps the three
 * steps in sequence.
 */
function runKernel(
  inputs: tf.Tensor[],
  shape: number[],
  label: string,
  record: (encoder: GPUCommandEncoder, device: GPUDevice, buffers: GPUBuffer[], out: GPUBuffer) => void,
): tf.Tensor {
  const backend = tf.backend() as unknown as WebGpuBackendLike;
  const device = backend.device;
  const gpu = inputs.map((input) => {
    backend.uploadToGPU(input.dataId);
    return input.dataToGPU();
  });
  const out = outputBuffer(device, label, shape.reduce((a, b) => a * b, 1) * 4);
  const encoder = device.createCommandEncoder({ label });
  record(
    encoder,
    device,
    gpu.map((g) => g.buffer!),
    out,
  );
  device.queue.submit([encoder.finish()]);
  for (const g of gpu) g.tensorRef.dispose();
  return tf.tensor({ buffer: out }, shape, 'float32');
}

/** A matrix on the GPU that can multiply without being made dense: TocGpuBatch, or CsrGpuBatch as a baseline. */
export interface GpuSparseMatrix {
  rows: number;
  cols: number;
  times(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, ms?: Strides, rs?: Strides): void;
  transposeTimes(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, ms?: Strides, rs?: Strides): void;
}

/**
 * Z = A * W (+ b) for a TOC batch A (rows x cols), weights W (cols x units) and
 * an optional bias b (units), differentiable in W and b. The bias is added in the
 * product's own command encoder and its gradient taken by our column sums: tfjs's
 * broadcast add and axis-0 sum cost more than the product on SwiftShader.
 */
export function tocMatMul(a: GpuSparseMatrix, w: tf.Tensor2D, b?: tf.Tensor1D): tf.Tensor2D {
  if (tf.getBackend() !== 'webgpu') throw new Error('tocMatMul needs the tfjs webgpu backend');
  const [cols, units] = w.shape;
  if (cols !== a.cols) throw new Error(`tocMatMul: W has ${cols} rows, the batch has ${a.cols} columns`);
  if (b && (b.rank !== 1 || b.shape[0] !== units)) throw new Error(`tocMatMul: b has shape [${b.shape}], W has ${units} columns`);
  const forward = (inputs: tf.Tensor[]) =>
    runKernel(inputs, [a.rows, units], 'TocMatMul.forward', (encoder, device, [m, bias], out) => {
      a.times(encoder, m!, units, out);
      if (bias) recordAddBias(device, encoder, out, bias, a.rows, units);
    });
  // dL/dW = A^T * dZ: cols x units, the layout of W.
  const weightGradient = (dz: tf.Tensor) =>
    runKernel([dz], [cols, units], 'TocMatMul.gradient', (encoder, _device, [m], out) => a.transposeTimes(encoder, m!, units, out));
  if (!b) {
    const op = tf.customGrad((weights) => ({ value: forward([weights as tf.Tensor]), gradFunc: (dz: tf.Tensor) => weightGradient(dz) }));
    return op(w) as tf.Tensor2D;
  }
  const op = tf.customGrad((weights, bias) => ({
    value: forward([weights as tf.Tensor, bias as tf.Tensor]),
    gradFunc: (dz: tf.Tensor) => [
      weightGradient(dz),
      runKernel([dz], [units], 'TocMatMul.biasGradient', (encoder, device, [g], out) => recordColumnSums(device, encoder, g!, out, a.rows, units)),
    ],
  }));
  return op(w, b) as tf.Tensor2D;
}
