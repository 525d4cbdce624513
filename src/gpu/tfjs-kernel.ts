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
  /** tfjs records its programs into a command encoder of its own and submits it now and then; these submit what it holds. */
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
}

/** Output and scratch buffers reused from step to step; tfjs copies each result out before we write it again. */
const buffers = new Map<string, GPUBuffer>();

/** A storage buffer of `bytes` kept for `label` from step to step: an operation's output, or scratch space between its dispatches. */
export function scratchBuffer(device: GPUDevice, label: string, bytes: number): GPUBuffer {
  const key = `${label}:${bytes}`;
  let buffer = buffers.get(key);
  if (!buffer) {
    // tfjs copies the result into a buffer of the same usage, which must include COPY_DST.
    buffer = device.createBuffer({ label, size: Math.max(4, bytes), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    buffers.set(key, buffer);
  }
  return buffer;
}

/** Output and scratch buffers held now (the tests check a run leaves none). */
export function kernelOutputCount(): number {
  return buffers.size;
}

/** Frees the cached buffers and shape uniforms; a model that used our operations calls it when it is disposed, at the end of its run. */
export function releaseKernelOutputs(): void {
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
 * tfjs tensors, all from one command encoder and one submission. The inputs are
 * read where tfjs keeps them: tfjs's pending work is submitted first (it may be
 * what writes them), and whatever tfjs does with those buffers later is submitted
 * after ours. (dataToGPU would copy each input, in a submission of its own.)
 * Creating a tensor from a GPUBuffer copies it, so the output buffers can be
 * written again at the next call.
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
  const outs = shapes.map((shape, i) => scratchBuffer(device, `${label}.${i}`, shape.reduce((a, b) => a * b, 1) * 4));
  const encoder = device.createCommandEncoder({ label });
  record(encoder, device, inputBuffers, outs);
  device.queue.submit([encoder.finish()]);
  return outs.map((buffer, i) => tf.tensor({ buffer }, shapes[i]!, 'float32'));
}
