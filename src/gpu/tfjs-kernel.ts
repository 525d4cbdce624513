// Our WGSL kernels as tfjs operations: inputs are tfjs tensors on the webgpu
// backend, the outputs become tensors, and everything runs on the device tfjs uses.
// tocMatMul (toc/tfjs-op.ts), the lab's loss (softmax-ce.ts) and the TOC MLP's
// output layer (dense.ts) run this way.
import * as tf from '@tensorflow/tfjs';
import { releaseShapeParams } from './pipelines.js';

/** The parts of tfjs-backend-webgpu's WebGPUBackend we use (public members of its class). */
interface WebGpuBackendLike {
  device: GPUDevice;
  /** Moves a tensor's data to a GPU buffer if it still lives on the CPU (fresh tensors do). */
  uploadToGPU(dataId: object): void;
  /** Where each tensor's data lives: `resource`, its GPU buffer once uploaded. */
  tensorMap: { get(dataId: object): { resource?: unknown } };
  /** A new tensor's data entry; uploadToGPU then gives it a buffer from tfjs's pool, as tfjs does for its programs' outputs. */
  makeTensorInfo(shape: number[], dtype: 'float32'): { dataId: object; shape: number[]; dtype: 'float32' };
  /** tfjs records its programs into a command encoder of its own and submits it now and then; these submit what it holds. */
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
}

/** Scratch buffers reused from call to call: space between an operation's dispatches, and per-step constants (Adam's). */
const buffers = new Map<string, GPUBuffer>();

/** A storage buffer of `bytes` kept for `label` from call to call; each call's submission is queued after the last one's. */
export function scratchBuffer(device: GPUDevice, label: string, bytes: number): GPUBuffer {
  const key = `${label}:${bytes}`;
  let buffer = buffers.get(key);
  if (!buffer) {
    // COPY_DST: queue.writeBuffer fills some (Adam's step constants).
    buffer = device.createBuffer({ label, size: Math.max(4, bytes), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    buffers.set(key, buffer);
  }
  return buffer;
}

/** Scratch buffers held now (the tests check a run leaves none). */
export function kernelBufferCount(): number {
  return buffers.size;
}

/** Frees the scratch buffers and shape uniforms; a model that used our operations calls it when it is disposed, at the end of its run. */
export function releaseKernelBuffers(): void {
  for (const buffer of buffers.values()) buffer.destroy();
  buffers.clear();
  if (tf.getBackend() === 'webgpu') releaseShapeParams((tf.backend() as unknown as WebGpuBackendLike).device);
}

/** Throws unless tfjs runs on WebGPU: our kernels need its device. */
export function requireWebgpu(op: string): void {
  if (tf.getBackend() !== 'webgpu') throw new Error(`${op} needs the tfjs webgpu backend`);
}

/**
 * Runs our kernels on tfjs tensors and returns their outputs (one per shape) as
 * tfjs tensors, all from one command encoder and one submission. Inputs and
 * outputs are tfjs's own buffers, as its programs use them: tfjs's pending work
 * is submitted first (it may write our inputs, or free buffers the outputs
 * reuse), and whatever tfjs does with them later is submitted after ours.
 * (dataToGPU, and a tensor made from a buffer of ours, would copy each one in a
 * submission of its own.)
 */
export function runKernel(
  inputs: tf.Tensor[],
  shapes: number[][],
  label: string,
  record: (encoder: GPUCommandEncoder, device: GPUDevice, buffers: GPUBuffer[], outs: GPUBuffer[]) => void,
): tf.Tensor[] {
  const backend = tf.backend() as unknown as WebGpuBackendLike;
  const device = backend.device;
  for (const input of inputs) backend.uploadToGPU(input.dataId);
  backend.ensureCommandEncoderReady();
  backend.endComputePassEncoder();
  backend.submitQueue();
  const inputBuffers = inputs.map((input) => {
    const resource = backend.tensorMap.get(input.dataId).resource;
    if (!(resource instanceof GPUBuffer)) throw new Error(`${label}: an input's data is not in a GPU buffer (tfjs changed?)`);
    return resource;
  });
  if (shapes.some((shape) => shape.includes(0))) throw new Error(`${label}: an output has no elements (shapes ${JSON.stringify(shapes)})`);
  // Tensors before anything is recorded, so a throw below leaves nothing behind that tidy cannot free.
  const outputs = shapes.map((shape) => {
    const info = backend.makeTensorInfo(shape, 'float32');
    backend.uploadToGPU(info.dataId);
    return tf.engine().makeTensorFromTensorInfo(info);
  });
  const outputBuffers = outputs.map((t) => backend.tensorMap.get(t.dataId).resource as GPUBuffer);
  try {
    const encoder = device.createCommandEncoder({ label });
    record(encoder, device, inputBuffers, outputBuffers);
    device.queue.submit([encoder.finish()]);
  } catch (err) {
    tf.dispose(outputs);
    throw err;
  }
  return outputs;
}
