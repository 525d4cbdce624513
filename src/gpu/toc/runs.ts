// TOC products on the resolved-runs layout (shaders/toc_runs.wgsl, docs/toc.md
// "Kernel design"). A product with cached codes fills H (or G) in a buffer of its
// own, one dispatch over the cached codes, then runs one CSR-shaped gather that
// reads M where it lies and H (G) beside it: M is never copied. With nothing
// cached the gather alone runs: one dispatch, exactly CSR's work.
// Row-major operands with k a multiple of 4 take the quad entry points (4 output
// columns per invocation); a batch whose values are all 1 skips value loads.
import tocRunsWgsl from '../../../shaders/toc_runs.wgsl?raw';
import type { TocBatch } from '../../toc/batch.js';
import { runsLayoutBytes, tocRunsLayout, type RunsWorkModel, type TocRunsLayout } from '../../toc/gpu-runs.js';
import { dispatch, storageBuffer, type KernelProgram } from '../pipelines.js';
import { rowMajor, type Strides } from './kernels.js';

// One invocation per (item, output column or quad of them): any workgroup size gives the same bits.
const WG = 64;
const ENTRY_POINTS = ['run_sums', 'occurrence_sums', 'gather'] as const;
type EntryPoint = (typeof ENTRY_POINTS)[number];

/** Kernel choices a bench can turn off to measure what each is worth (both on by default). */
export interface KernelOptions {
  /** 4 output columns per invocation where the strides allow it. */
  quad?: boolean;
  /** No value loads when every value of the batch is 1. */
  unit?: boolean;
  /**
   * A bench diagnostic, not a product (default true): false skips the H / G fill, so a product is the gather alone
   * over whatever the cached sums' buffer holds; runs minus this is what the fill costs.
   */
  fill?: boolean;
}

/**
 * Whether R = A * M (or A^T * M) can take the quad entry points: row-major M and R, k a multiple of 4, and
 * both buffers at least one vec4 long (a vec4 array binds 16 bytes at least; an empty product has less).
 */
export function quadApplies(k: number, ms: Strides, rs: Strides, m: GPUBuffer, out: GPUBuffer): boolean {
  return k % 4 === 0 && k > 0 && ms.col === 1 && rs.col === 1 && ms.row % 4 === 0 && rs.row % 4 === 0 && m.size >= 16 && out.size >= 16;
}

/** One product's side of the layout: A's rows (times) or columns (transposeTimes). */
interface Side {
  /** Rows of M: an item row hi >= mRows reads H or G row hi - mRows. */
  mRows: number;
  outRows: number;
  bounds: GPUBuffer;
  items: GPUBuffer;
  /** rowSplit or colSplit: where each row's (column's) cached items start. */
  splits: GPUBuffer;
  fill: 'run_sums' | 'occurrence_sums';
  label: string;
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
  private readonly fill: boolean;
  private sums: GPUBuffer | undefined;
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
      values: layout.values,
      rowBounds: layout.rowBounds,
      rowItems: layout.rowItems,
      rowSplit: layout.rowSplit,
      runOffsets: layout.runOffsets,
      runItems: layout.runItems,
      occurrenceOffsets: layout.occurrenceOffsets,
      occurrenceRows: layout.occurrenceRows,
      colBounds: layout.colBounds,
      colItems: layout.colItems,
      colSplit: layout.colSplit,
    };
    this.buffers = Object.fromEntries(Object.entries(arrays).map(([name, data]) => [name, storageBuffer(device, `TocRunsGpuBatch.${name}`, data)]));
    this.uploadBytes = runsLayoutBytes(layout);
    // The layout's index widths and unit values are pipeline constants: a handful of pipelines in all.
    const constants = {
      IDX16: layout.indexBits === 16 ? 1 : 0,
      PAIR_BITS: layout.wideItems ? 16 : layout.pairBits,
      WIDE: layout.wideItems ? 1 : 0,
      UNIT: layout.unitValues && options.unit !== false ? 1 : 0,
      // Nothing cached: the gather is CSR's loop, with no split load and no second loop.
      CACHED: layout.cached > 0 ? 1 : 0,
    };
    const programs = (quad: boolean) =>
      Object.fromEntries(
        ENTRY_POINTS.map((entryPoint): [EntryPoint, KernelProgram] => {
          const name = quad ? `${entryPoint}4` : entryPoint;
          return [entryPoint, { label: `TocRuns.${name}`, wgsl: tocRunsWgsl, entryPoint: name, workgroupSize: WG, layout: quad ? 'flat' : 'grid', constants }];
        }),
      ) as Record<EntryPoint, KernelProgram>;
    this.programs = programs(false);
    this.quadPrograms = programs(true);
    this.quad = options.quad !== false;
    this.fill = options.fill !== false;
  }

  /** Bytes of the cached sums' buffer (H or G) the products have needed so far (0 when nothing is cached). */
  get sumsBytes(): number {
    return this.cached > 0 ? (this.sums?.size ?? 0) : 0;
  }

  /**
   * H or G: |S| x k floats, grown as needed (16 bytes at least: the quad forms bind it as a vec4 array; with
   * nothing cached the gather still binds it, and never reads it).
   */
  private sumsFor(floats: number): GPUBuffer {
    const size = Math.max(16, floats * 4);
    if (!this.sums || this.sums.size < size) {
      this.sums?.destroy();
      this.sums = this.device.createBuffer({ label: 'TocRunsGpuBatch.sums', size, usage: GPUBufferUsage.STORAGE });
    }
    return this.sums;
  }

  private params(items: number, k: number, base: number, m: Strides, r: Strides): GPUBuffer {
    const values = new Uint32Array([k, items, base, 0, m.row, m.col, r.row, r.col]);
    const key = values.join(',');
    let buffer = this.paramBuffers.get(key);
    if (!buffer) {
      buffer = this.device.createBuffer({ label: 'TocRuns.params', size: values.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.device.queue.writeBuffer(buffer, 0, values);
      this.paramBuffers.set(key, buffer);
    }
    return buffer;
  }

  private product(encoder: GPUCommandEncoder, side: Side, m: GPUBuffer, k: number, out: GPUBuffer, ms: Strides, rs: Strides): void {
    const b = this.buffers;
    const quad = this.quad && quadApplies(k, ms, rs, m, out);
    // The quad forms bind M, H / G, R and the H / G being filled as vec4 arrays (bindings 12, 13, 10, 11) and run k / 4
    // invocations per item.
    const [programs, width, mAt, sumsAt, outAt, fillAt] = quad ? [this.quadPrograms, k / 4, 12, 13, 10, 11] : [this.programs, k, 2, 9, 4, 3];
    const sums = this.sumsFor(this.cached * k);
    const pass = encoder.beginComputePass({ label: side.label });
    if (this.cached > 0 && this.fill) {
      const params = this.params(this.cached, k, side.mRows, ms, rs);
      const bindings =
        side.fill === 'run_sums'
          ? { 0: params, 1: b.values!, [mAt]: m, [fillAt]: sums, 5: b.runOffsets!, 6: b.runItems! }
          : { 0: params, [mAt]: m, [fillAt]: sums, 7: b.occurrenceOffsets!, 8: b.occurrenceRows! };
      dispatch(this.device, pass, programs[side.fill], bindings, this.cached, width);
    }
    const params = this.params(side.outRows, k, side.mRows, ms, rs);
    const bindings = { 0: params, 1: b.values!, [mAt]: m, [sumsAt]: sums, [outAt]: out, 5: side.bounds, 6: side.items, 14: side.splits };
    dispatch(this.device, pass, programs.gather, bindings, side.outRows, width);
    pass.end();
  }

  /** Records R = A * M: M is cols x k, R is rows x k. */
  times(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, mStrides: Strides = rowMajor(k), outStrides: Strides = rowMajor(k)): void {
    const side: Side = {
      mRows: this.cols,
      outRows: this.rows,
      bounds: this.buffers.rowBounds!,
      items: this.buffers.rowItems!,
      splits: this.buffers.rowSplit!,
      fill: 'run_sums',
      label: 'TocRuns.times',
    };
    this.product(encoder, side, m, k, out, mStrides, outStrides);
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
    const side: Side = {
      mRows: this.rows,
      outRows: this.cols,
      bounds: b.colBounds!,
      items: b.colItems!,
      splits: b.colSplit!,
      fill: 'occurrence_sums',
      label: 'TocRuns.transposeTimes',
    };
    this.product(encoder, side, m, k, out, mStrides, outStrides);
  }

  destroy(): void {
    for (const buffer of Object.values(this.buffers)) buffer.destroy();
    this.sums?.destroy();
    for (const buffer of this.paramBuffers.values()) buffer.destroy();
  }
}
