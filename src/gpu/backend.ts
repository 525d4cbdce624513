// tfjs on WebGPU, and nothing else: if WebGPU is missing we say so and how to
// enable it, rather than fall back silently to a slower backend.
import * as tf from '@tensorflow/tfjs';

class WebGpuUnavailableError extends Error {
  override name = 'WebGpuUnavailableError';
}

const HOW_TO_ENABLE =
  'Use Chrome or Edge 113+ on a page served over https or http://localhost. On Linux, or without a supported GPU, start Chrome with --enable-unsafe-webgpu ' +
  '(and --enable-features=Vulkan), or enable chrome://flags/#enable-unsafe-webgpu.';

let ready: Promise<GPUDevice> | undefined;

/** Selects the tfjs webgpu backend once and returns the GPUDevice it uses (shared with our own kernels). */
export function webgpuBackend(): Promise<GPUDevice> {
  ready ??= (async () => {
    if (!('gpu' in navigator) || !navigator.gpu)
      throw new WebGpuUnavailableError(`This browser exposes no WebGPU (navigator.gpu is missing). ${HOW_TO_ENABLE}`);
    const adapter = await navigator.gpu.requestAdapter();
    if (!adapter) throw new WebGpuUnavailableError(`WebGPU is present but no GPU adapter was offered. ${HOW_TO_ENABLE}`);
    await import('@tensorflow/tfjs-backend-webgpu');
    const ok = await tf.setBackend('webgpu');
    await tf.ready();
    if (!ok || tf.getBackend() !== 'webgpu') throw new WebGpuUnavailableError(`tfjs could not start its webgpu backend. ${HOW_TO_ENABLE}`);
    // The backend keeps its device as a public field; our TOC kernels use the same one.
    return (tf.backend() as unknown as { device: GPUDevice }).device;
  })();
  return ready;
}

/** A short description of the adapter, for the page header. */
export async function adapterDescription(device: GPUDevice): Promise<string> {
  const info = (device as GPUDevice & { adapterInfo?: GPUAdapterInfo }).adapterInfo;
  if (!info) return 'WebGPU';
  return [info.vendor, info.architecture, info.description].filter(Boolean).join(' / ') || 'WebGPU';
}
