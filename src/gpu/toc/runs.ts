// TOC products on the resolved-runs layout (shaders/toc_runs.wgsl, docs/toc.md
// "Kernel design"): per product one dispatch over the cached codes (skipped when
// there are none) and one over the rows or columns, both gathers like CSR's.
// Row-major operands with k a multiple of 4 take the quad entry points (4 output
// columns per invocation); a batch whose values are all 1 skips value loads.
import tocRunsWgsl from '../../../shaders/toc_runs.wgsl?raw';
import type { TocBatch } from '../../toc/batch.js';
import { runsLayoutBytes, tocRunsLayout, type RunsWorkModel, type TocRunsLayout } from '../../toc/gpu-runs.js';
import { dispatch, storageBuffer, type KernelProgram } from '../pipelines.js';
import { rowMajor, type Strides } from './kernels.js';

// One invocation per (item, output column or quad of them): any workgroup size gives the same bits.
const WG = 64;
const ENTRY_POINTS = ['run_sums', 'row_sums', 'occurrence_sums', 'column_sums'] as const;
type EntryPoint = (typeof ENTRY_POINTS)[number];

/** Kernel choices a bench can turn off to measure what each is worth (both on by default). */
export interface KernelOptions {
  /** 4 output columns per invocation where the strides allow it. */
  quad?: boolean;
  /** No value loads when every value of the batch is 1. */
  unit?: boolean;
}

/**
 * Whether R = A * M (or A^T * M) can take the quad entry points: row-major M and R, k a multiple of 4, and
 * both buffers at least one vec4 long (a vec4 array binds 16 bytes at least; an empty product has less).
 */
export function quadApplies(k: number, ms: Strides, rs: Strides, m: GPUBuffer, out: GPUBuffer): boolean {
  return k % 4 === 0 && k > 0 && ms.col === 1 && rs.col === 1 && ms.row % 4 === 0 && rs.row % 4 === 0 && m.size >= 16 && out.size >= 16;
}

/** A TOC batch on the GPU in the resolved-runs layout. Same interface as TocGpuBatch and CsrGpuBatch. */
export class TocRunsGpuBatch {
  readonly rows: number;
  readonly cols: number;
  readonly cached: number;
  readonly model: RunsWorkModel;
  /** Bytes uploaded: a one-time cost per batch. */
  readonly uploadBytes: number;
  private readonly buffers: Record<string, GPUBuffer>;
  private readonly programs: Record<EntryPoint, KernelProgram>;
  private readonly quadPrograms: Record<EntryPoint, KernelProgram>;
  private readonly quad: boolean;
  private scratch: GPUBuffer | undefined;
  private readonly paramBuffers = new Map<string, GPUBuffer>();

  constructor(
    readonly device: GPUDevice,
    batch: TocBatch,
    layout: TocRunsLayout = tocRunsLayout(batch),
    options: KernelOptions = {},
  ) {
    this.rows = layout.rows;
    this.cols = layout.cols;
    this.cached = layout.cached;
    this.model = layout.model;
    const arrays = {
      // A vec2 array binds at least 8 bytes, even for an all-zero batch.
      pairs: layout.pairs.length ? layout.pairs : new Uint32Array(2),
      rowBounds: layout.rowBounds,
      rowItems: layout.rowItems,
      runOffsets: layout.runOffsets,
      runItems: layout.runItems,
      occurrenceOffsets: layout.occurrenceOffsets,
      occurrenceRows: layout.occurrenceRows,
      colBounds: layout.colBounds,
      colItems: layout.colItems,
    };
    this.buffers = Object.fromEntries(Object.entries(arrays).map(([name, data]) => [name, storageBuffer(device, `TocRunsGpuBatch.${name}`, data)]));
    this.uploadBytes = runsLayoutBytes(layout);
    // The layout's index widths are pipeline constants: a handful of pipelines in all.
    const constants = {
      IDX16: layout.indexBits === 16 ? 1 : 0,
      PAIR_BITS: layout.wideItems ? 16 : layout.pairBits,
      WIDE: layout.wideItems ? 1 : 0,
      UNIT: layout.unitValues && options.unit !== false ? 1 : 0,
    };
    const programs = (quad: boolean) =>
      Object.fromEntries(
        ENTRY_POINTS.map((entryPoint): [EntryPoint, KernelProgram] => [
          entryPoint,
          {
            label: `TocRuns.${entryPoint}${quad ? '4' : ''}`,
            wgsl: tocRunsWgsl,
            entryPoint: quad ? `${entryPoint}4` : entryPoint,
            workgroupSize: WG,
            layout: quad ? 'flat' : 'grid',
            constants,
          },
        ]),
      ) as Record<EntryPoint, KernelProgram>;
    this.programs = programs(false);
    this.quadPrograms = programs(true);
    this.quad = options.quad !== false;
  }

  /** |S| x k floats for H or G, grown as needed (16 bytes at least: row_sums binds it, as a vec4 array too, even when S is empty). */
  private scratchFor(k: number): GPUBuffer {
    const size = Math.max(16, this.cached * k * 4);
    if (!this.scratch || this.scratch.size < size) {
      this.scratch?.destroy();
      this.scratch = this.device.createBuffer({ label: 'TocRunsGpuBatch.scratch', size, usage: GPUBufferUsage.STORAGE });
    }
    return this.scratch;
  }

  private params(items: number, k: number, m: Strides, r: Strides): GPUBuffer {
    const values = new Uint32Array([k, items, this.cached, 0, m.row, m.col, r.row, r.col]);
    const key = values.join(',');
    let buffer = this.paramBuffers.get(key);
    if (!buffer) {
      buffer = this.device.createBuffer({ label: 'TocRuns.params', size: values.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.device.queue.writeBuffer(buffer, 0, values);
      this.paramBuffers.set(key, buffer);
    }
    return buffer;
  }

  /** Records R = A * M: M is cols x k, R is rows x k. */
  times(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, mStrides: Strides = rowMajor(k), outStrides: Strides = rowMajor(k)): void {
    const b = this.buffers;
    const scratch = this.scratchFor(k);
    const pass = encoder.beginComputePass({ label: 'TocRuns.times' });
    // The quad entry points bind M, R and the scratch as vec4 arrays (bindings 9, 10, 11) and run k / 4 invocations per item.
    const quad = this.quad && quadApplies(k, mStrides, outStrides, m, out);
    const [programs, width, mAt, scratchAt, outAt] = quad ? [this.quadPrograms, k / 4, 9, 11, 10] : [this.programs, k, 2, 3, 4];
    if (this.cached > 0) {
      const params = this.params(this.cached, k, mStrides, outStrides);
      dispatch(
        this.device,
        pass,
        programs.run_sums,
        { 0: params, 1: b.pairs!, [mAt]: m, [scratchAt]: scratch, 6: b.runItems!, 7: b.runOffsets! },
        this.cached,
        width,
      );
    }
    const params = this.params(this.rows, k, mStrides, outStrides);
    dispatch(
      this.device,
      pass,
      programs.row_sums,
      { 0: params, 1: b.pairs!, [mAt]: m, [scratchAt]: scratch, [outAt]: out, 5: b.rowBounds!, 6: b.rowItems! },
      this.rows,
      width,
    );
    pass.end();
  }

  /** Records R = A^T * M: M is rows x k, R is cols x k (v*A with k = 1, M*A through strides, the weight gradient). */
  transposeTimes(
    encoder: GPUCommandEncoder,
    m: GPUBuffer,
    k: number,
    out: GPUBuffer,
    mStrides: Strides = rowMajor(k),
    outStrides: Strides = rowMajor(k),
  ): void {
    const b = this.buffers;
    const scratch = this.scratchFor(k);
    const pass = encoder.beginComputePass({ label: 'TocRuns.transposeTimes' });
    const quad = this.quad && quadApplies(k, mStrides, outStrides, m, out);
    const [programs, width, mAt, scratchAt, outAt] = quad ? [this.quadPrograms, k / 4, 9, 11, 10] : [this.programs, k, 2, 3, 4];
    if (this.cached > 0) {
      const params = this.params(this.cached, k, mStrides, outStrides);
      dispatch(
        this.device,
        pass,
        programs.occurrence_sums,
        { 0: params, [mAt]: m, [scratchAt]: scratch, 7: b.occurrenceOffsets!, 8: b.occurrenceRows! },
        this.cached,
        width,
      );
    }
    const params = this.params(this.cols, k, mStrides, outStrides);
    dispatch(
      this.device,
      pass,
      programs.column_sums,
      { 0: params, 1: b.pairs!, [mAt]: m, [scratchAt]: scratch, [outAt]: out, 5: b.colBounds!, 6: b.colItems! },
      this.cols,
      width,
    );
    pass.end();
  }

  destroy(): void {
    for (const buffer of Object.values(this.buffers)) buffer.destroy();
    this.scratch?.destroy();
    for (const buffer of this.paramBuffers.values()) buffer.destroy();
  }
}
