// Timing helpers shared by the in-browser benches that train with tfjs on its
// WebGPU device: submit tfjs's pending work and wait for an idle queue before a
// clock starts, and profile one training step by tfjs kernel.
import * as tf from '@tensorflow/tfjs';

/** The public methods of tfjs-backend-webgpu's WebGPUBackend that submit its pending commands. */
interface TfjsWebGpuBackend {
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
  uploadToGPU(dataId: object): void;
}

export const tfjsBackend = (): TfjsWebGpuBackend => tf.backend() as unknown as TfjsWebGpuBackend;

/** Submits whatever tfjs has recorded but not yet submitted. */
export function flushTfjs(): void {
  const b = tfjsBackend();
  b.ensureCommandEncoderReady();
  b.endComputePassEncoder();
  b.submitQueue();
}

/** Submits tfjs's pending work, then waits until the queue is idle. */
export async function settle(device: GPUDevice): Promise<void> {
  flushTfjs();
  await device.queue.onSubmittedWorkDone();
}

export interface StepProfile {
  /** Wall ms of the profiled step, to its loss read-back. */
  wallMs: number;
  /** Sum of tfjs's kernel GPU times in the step. */
  tfjsKernelMs: number;
  /** tfjs kernels by name, most time first: calls and summed GPU ms, with the input shapes of the costliest call. */
  kernels: Array<{ name: string; calls: number; ms: number; shapes: string }>;
}

/** One step under tf.profile: where the step's time goes among tfjs's kernels (timestamp-query GPU times; ours are not in it). */
export async function profileStep(device: GPUDevice, step: () => tf.Scalar): Promise<StepProfile> {
  await settle(device);
  const t0 = performance.now();
  const info = await tf.profile(async () => {
    const loss = step();
    await loss.data();
    return loss;
  });
  const wallMs = performance.now() - t0;
  tf.dispose(info.result as tf.Tensor);
  const byName = new Map<string, { name: string; calls: number; ms: number; costliest: number; shapes: string }>();
  let tfjsKernelMs = 0;
  for (const k of info.kernels) {
    const ms = typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
    tfjsKernelMs += ms;
    const entry = byName.get(k.name) ?? { name: k.name, calls: 0, ms: 0, costliest: -1, shapes: '' };
    entry.calls++;
    entry.ms += ms;
    if (ms > entry.costliest) Object.assign(entry, { costliest: ms, shapes: k.inputShapes.map((s) => `[${s}]`).join(' ') });
    byName.set(k.name, entry);
  }
  const kernels = [...byName.values()].filter((k) => k.ms > 0).sort((a, b) => b.ms - a.ms);
  return { wallMs, tfjsKernelMs, kernels: kernels.map(({ name, calls, ms, shapes }) => ({ name, calls, ms, shapes })) };
}
