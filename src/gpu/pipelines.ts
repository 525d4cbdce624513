// Compute pipelines compiled once per (shader, entry point, constants) and cached
// per device. Set globalThis.BYTELAB_PRINT_SHADER = true to print each WGSL
// module as it is compiled (like tfjs-backend-webgpu's WEBGPU_PRINT_SHADER).

export interface KernelProgram {
  /** Label of the pipeline and of the GPU objects made for it, e.g. 'TocTimes.nodeValues'. */
  label: string;
  wgsl: string;
  entryPoint: string;
  constants?: Record<string, number>;
}

const caches = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();
const modules = new WeakMap<GPUDevice, Map<string, GPUShaderModule>>();

function cacheKey(p: KernelProgram): string {
  return `${p.label}|${p.entryPoint}|${JSON.stringify(p.constants ?? {})}`;
}

export function pipelineFor(device: GPUDevice, program: KernelProgram): GPUComputePipeline {
  let cache = caches.get(device);
  if (!cache) caches.set(device, (cache = new Map()));
  const key = cacheKey(program);
  let pipeline = cache.get(key);
  if (!pipeline) {
    let mods = modules.get(device);
    if (!mods) modules.set(device, (mods = new Map()));
    let module = mods.get(program.wgsl);
    if (!module) {
      if ((globalThis as { BYTELAB_PRINT_SHADER?: boolean }).BYTELAB_PRINT_SHADER) console.log(`[${program.label}]\n${program.wgsl}`);
      module = device.createShaderModule({ label: program.label.split('.')[0], code: program.wgsl });
      mods.set(program.wgsl, module);
    }
    pipeline = device.createComputePipeline({
      label: program.label,
      layout: 'auto',
      compute: { module, entryPoint: program.entryPoint, ...(program.constants ? { constants: program.constants } : {}) },
    });
    cache.set(key, pipeline);
  }
  return pipeline;
}

/** Binds buffers to the bindings an entry point uses (layout 'auto' keeps only those) and records one dispatch. */
export function dispatch(
  device: GPUDevice,
  pass: GPUComputePassEncoder,
  program: KernelProgram,
  bindings: Record<number, GPUBuffer>,
  workgroups: [number, number?, number?],
): void {
  const pipeline = pipelineFor(device, program);
  const entries = Object.entries(bindings).map(([binding, buffer]) => ({ binding: Number(binding), resource: { buffer } }));
  const bindGroup = device.createBindGroup({ label: program.label, layout: pipeline.getBindGroupLayout(0), entries });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(workgroups[0], workgroups[1] ?? 1, workgroups[2] ?? 1);
}

/** A storage buffer initialised from a typed array (padded to 4 bytes, at least 4 bytes long). */
export function storageBuffer(device: GPUDevice, label: string, data: ArrayBufferView, usage = 0): GPUBuffer {
  const size = Math.max(4, Math.ceil(data.byteLength / 4) * 4);
  const buffer = device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | usage, mappedAtCreation: true });
  new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  buffer.unmap();
  return buffer;
}

export async function readBuffer(device: GPUDevice, buffer: GPUBuffer, bytes = buffer.size): Promise<Float32Array> {
  const staging = device.createBuffer({ label: `${buffer.label}.readback`, size: bytes, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const encoder = device.createCommandEncoder({ label: `${buffer.label}.readback` });
  encoder.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(staging.getMappedRange().slice(0));
  staging.unmap();
  staging.destroy();
  return out;
}
