// Timing helpers shared by the in-browser benches that train with tfjs on its
// WebGPU device: submit tfjs's pending work and wait for an idle queue before a
// clock starts, and profile one training step: tfjs's kernels through tf.profile,
// our own kernels' compute passes by label through timestamp queries; and the
// GPU-side span of a timed trial (SpanTimer).
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
  /** Sum of our kernels' pass times in the step (passes tf.profile does not time), when the device has timestamp-query. */
  ourKernelMs?: number;
  /** Our compute passes by label, most time first: calls and summed GPU ms. */
  ours?: Array<{ label: string; calls: number; ms: number }>;
}

/**
 * Times every compute pass begun while it is installed that has no timestamp writes of its own: ours (tfjs's passes
 * under tf.profile carry their own). GPUCommandEncoder.beginComputePass is wrapped for the profiled step only.
 */
class PassTimer {
  private static readonly PAIRS = 1024;
  private readonly querySet: GPUQuerySet;
  private readonly labels: string[] = [];

  constructor(private readonly device: GPUDevice) {
    this.querySet = device.createQuerySet({ label: 'bench.passes', type: 'timestamp', count: 2 * PassTimer.PAIRS });
  }

  /** Wraps beginComputePass; the returned function puts it back. */
  install(): () => void {
    const proto = GPUCommandEncoder.prototype;
    const original = proto.beginComputePass;
    const { labels, querySet } = this;
    proto.beginComputePass = function (this: GPUCommandEncoder, descriptor?: GPUComputePassDescriptor) {
      if (descriptor?.timestampWrites || labels.length >= PassTimer.PAIRS) return original.call(this, descriptor);
      const i = labels.length;
      labels.push(descriptor?.label || '(no label)');
      const timestampWrites = { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 };
      return original.call(this, { ...descriptor, timestampWrites });
    };
    return () => {
      proto.beginComputePass = original;
    };
  }

  destroy(): void {
    this.querySet.destroy();
  }

  /** GPU ms by label (after the passes were submitted); frees the queries. */
  async read(): Promise<Array<{ label: string; calls: number; ms: number }>> {
    const n = this.labels.length;
    const byLabel = new Map<string, { label: string; calls: number; ms: number }>();
    if (n > 0) {
      const bytes = 16 * n;
      const resolved = this.device.createBuffer({ label: 'bench.passes', size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      const readback = this.device.createBuffer({ label: 'bench.passes', size: bytes, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
      const encoder = this.device.createCommandEncoder({ label: 'bench.passes' });
      encoder.resolveQuerySet(this.querySet, 0, 2 * n, resolved, 0);
      encoder.copyBufferToBuffer(resolved, 0, readback, 0, bytes);
      this.device.queue.submit([encoder.finish()]);
      await readback.mapAsync(GPUMapMode.READ);
      const stamps = new BigUint64Array(readback.getMappedRange().slice(0));
      readback.unmap();
      resolved.destroy();
      readback.destroy();
      for (let i = 0; i < n; i++) {
        const [start, end] = [stamps[2 * i]!, stamps[2 * i + 1]!];
        const entry = byLabel.get(this.labels[i]!) ?? { label: this.labels[i]!, calls: 0, ms: 0 };
        entry.calls++;
        entry.ms += end > start ? Number(end - start) / 1e6 : 0;
        byLabel.set(entry.label, entry);
      }
    }
    this.destroy();
    return [...byLabel.values()].sort((a, b) => b.ms - a.ms);
  }
}

/**
 * One step under tf.profile: where the step's time goes among tfjs's kernels and, with timestamp-query, among our
 * compute passes (by label; a copy between buffers outside a pass is in neither).
 */
export async function profileStep(device: GPUDevice, step: () => tf.Scalar): Promise<StepProfile> {
  await settle(device);
  const passes = device.features.has('timestamp-query') ? new PassTimer(device) : undefined;
  const uninstall = passes?.install();
  const t0 = performance.now();
  let info: Awaited<ReturnType<typeof tf.profile>>;
  try {
    info = await tf.profile(async () => {
      const loss = step();
      await loss.data();
      return loss;
    });
  } catch (err) {
    passes?.destroy();
    throw err;
  } finally {
    uninstall?.();
  }
  const wallMs = performance.now() - t0;
  const ours = await passes?.read();
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
  const ourKernelMs = ours?.reduce((sum, p) => sum + p.ms, 0);
  return { wallMs, tfjsKernelMs, kernels: kernels.map(({ name, calls, ms, shapes }) => ({ name, calls, ms, shapes })), ourKernelMs, ours };
}

/**
 * GPU-side span of a trial with timestamp-query: an empty compute pass writes a
 * timestamp before the operations and another after them. For our kernels both
 * passes sit in the trial's own command encoder; tfjs records into an encoder of
 * its own, so there the marks are separate submissions around its work and the
 * span also holds any time the GPU waited for tfjs to submit.
 */
export class SpanTimer {
  private readonly querySet: GPUQuerySet;
  private readonly resolved: GPUBuffer;
  private readonly readback: GPUBuffer;

  constructor(private readonly device: GPUDevice) {
    this.querySet = device.createQuerySet({ label: 'bench.timestamps', type: 'timestamp', count: 2 });
    this.resolved = device.createBuffer({ label: 'bench.timestamps.resolved', size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.readback = device.createBuffer({ label: 'bench.timestamps.readback', size: 16, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  }

  /** Records the start (0) or end (1) mark into `encoder`; the end mark also resolves both. */
  mark(encoder: GPUCommandEncoder, which: 0 | 1): void {
    const timestampWrites = which === 0 ? { querySet: this.querySet, beginningOfPassWriteIndex: 0 } : { querySet: this.querySet, endOfPassWriteIndex: 1 };
    encoder.beginComputePass({ label: 'bench.timestamp', timestampWrites }).end();
    if (which === 1) {
      encoder.resolveQuerySet(this.querySet, 0, 2, this.resolved, 0);
      encoder.copyBufferToBuffer(this.resolved, 0, this.readback, 0, 16);
    }
  }

  submitMark(which: 0 | 1): void {
    const encoder = this.device.createCommandEncoder({ label: 'bench.timestamp' });
    this.mark(encoder, which);
    this.device.queue.submit([encoder.finish()]);
  }

  /** ms between the two marks of the last trial (after the queue drained). */
  async spanMs(): Promise<number> {
    await this.readback.mapAsync(GPUMapMode.READ);
    const [start, end] = new BigUint64Array(this.readback.getMappedRange().slice(0));
    this.readback.unmap();
    return end! > start! ? Number(end! - start!) / 1e6 : NaN;
  }
}
