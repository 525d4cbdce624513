// Compute programs in the manner of tfjs-backend-webgpu: a KernelProgram describes
// one entry point (WGSL, workgroup size, how its workgroups cover the work) and
// dispatch() binds buffers and records it. Pipelines are cached per device by
// shader source, entry point and override constants, never by label: a label
// names objects, it does not identify code. Set globalThis.BYTELAB_PRINT_SHADER =
// true to print each WGSL module as it is compiled (like WEBGPU_PRINT_SHADER).

export interface KernelProgram {
  /** Label of the pipeline and of the GPU objects made for it, e.g. 'TocTimes.nodeValues'. */
  label: string;
  wgsl: string;
  entryPoint: string;
  /** Invocations per workgroup: set as the shader's `override WG` (`@workgroup_size(WG)`). */
  workgroupSize: number;
  /**
   * How workgroups cover `items` x k outputs. 'grid': one invocation per (item, column j),
   * ceil(items / WG) x k workgroups. 'perColumn': one workgroup per column j whose WG
   * invocations stride over the items (level-by-level passes need one workgroup's barriers).
   * 'flat': one invocation per (item, column), numbered item-major (the shader splits the flat
   * index, see quad_of in toc_runs.wgsl), x x y workgroups as one dimension holds at most 65,535.
   */
  layout: 'grid' | 'perColumn' | 'flat';
  /** Other override constants of the shader (e.g. index widths of a batch's layout). */
  constants?: Record<string, number>;
}

/** Workgroups to dispatch, derived from the program's layout and workgroup size. */
const MAX_GROUPS_PER_DIMENSION = 65_535;

function dispatchShape(program: KernelProgram, items: number, k: number): [number, number] {
  if (program.layout === 'flat') {
    const groups = Math.ceil((items * k) / program.workgroupSize);
    if (groups === 0) return [0, 1];
    const x = Math.min(groups, MAX_GROUPS_PER_DIMENSION);
    return [x, Math.ceil(groups / x)];
  }
  return program.layout === 'grid' ? [Math.ceil(items / program.workgroupSize), k] : [k, 1];
}

/** Pipeline-overridable constants of a program; part of the pipeline's cache key. */
function constantsOf(program: KernelProgram): Record<string, number> {
  return { ...program.constants, WG: program.workgroupSize };
}

/** Shader modules by WGSL source, then pipelines by entry point and constants. */
const modules = new WeakMap<GPUDevice, Map<string, GPUShaderModule>>();
const pipelines = new WeakMap<GPUShaderModule, Map<string, GPUComputePipeline>>();

function moduleFor(device: GPUDevice, program: KernelProgram): GPUShaderModule {
  let mods = modules.get(device);
  if (!mods) modules.set(device, (mods = new Map()));
  let module = mods.get(program.wgsl);
  if (!module) {
    if ((globalThis as { BYTELAB_PRINT_SHADER?: boolean }).BYTELAB_PRINT_SHADER) console.log(`[${program.label}]\n${program.wgsl}`);
    module = device.createShaderModule({ label: program.label.split('.')[0], code: program.wgsl });
    mods.set(program.wgsl, module);
  }
  return module;
}

function pipelineFor(device: GPUDevice, program: KernelProgram): GPUComputePipeline {
  const module = moduleFor(device, program);
  let cache = pipelines.get(module);
  if (!cache) pipelines.set(module, (cache = new Map()));
  const constants = constantsOf(program);
  const key = `${program.entryPoint}|${JSON.stringify(constants)}`;
  let pipeline = cache.get(key);
  if (!pipeline) {
    pipeline = device.createComputePipeline({ label: program.label, layout: 'auto', compute: { module, entryPoint: program.entryPoint, constants } });
    cache.set(key, pipeline);
  }
  return pipeline;
}

/**
 * Binds buffers to the bindings an entry point uses (layout 'auto' keeps only those)
 * and records one dispatch over `items` x k outputs (see KernelProgram.layout).
 */
export function dispatch(
  device: GPUDevice,
  pass: GPUComputePassEncoder,
  program: KernelProgram,
  bindings: Record<number, GPUBuffer>,
  items: number,
  k: number,
): void {
  const pipeline = pipelineFor(device, program);
  const entries = Object.entries(bindings).map(([binding, buffer]) => ({ binding: Number(binding), resource: { buffer } }));
  const bindGroup = device.createBindGroup({ label: program.label, layout: pipeline.getBindGroupLayout(0), entries });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(...dispatchShape(program, items, k));
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

/** Shape uniforms by device and shape: a run has one or two shapes (train and test batches) per kernel. */
const shapeUniforms = new WeakMap<GPUDevice, Map<string, GPUBuffer>>();

/** A uniform buffer holding a shape's dimensions as u32s, in order (the Params of bias.wgsl, softmax_ce.wgsl, dense.wgsl), made once per shape. */
export function shapeParams(device: GPUDevice, ...dims: number[]): GPUBuffer {
  let byShape = shapeUniforms.get(device);
  if (!byShape) shapeUniforms.set(device, (byShape = new Map()));
  const key = dims.join('x');
  let buffer = byShape.get(key);
  if (!buffer) {
    // Whole 16-byte rows, as uniform structs are laid out; one holds up to four dimensions.
    buffer = device.createBuffer({ label: `Params.${key}`, size: Math.ceil(dims.length / 4) * 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(buffer, 0, new Uint32Array(dims));
    byShape.set(key, buffer);
  }
  return buffer;
}

/** Frees a device's shape uniforms (with the operations' scratch buffers, at the end of a run). */
export function releaseShapeParams(device: GPUDevice): void {
  for (const buffer of shapeUniforms.get(device)?.values() ?? []) buffer.destroy();
  shapeUniforms.delete(device);
}
