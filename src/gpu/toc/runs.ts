// TOC products on the resolved-runs layout (shaders/toc_runs.wgsl, docs/toc.md
// "Kernel design"): per product one dispatch over the cached codes (skipped when
// there are none) and one over the rows or columns, both gathers like CSR's.
import tocRunsWgsl from '../../../shaders/toc_runs.wgsl?raw';
import type { TocBatch } from '../../toc/batch.js';
import { runsLayoutBytes, tocRunsLayout, type RunsWorkModel, type TocRunsLayout } from '../../toc/gpu-runs.js';
import { dispatch, storageBuffer, type KernelProgram } from '../pipelines.js';
import { rowMajor, type Strides } from './kernels.js';

// One invocation per (item, output column): any workgroup size gives the same bits.
const WG = 64;
type EntryPoint = 'run_sums' | 'row_sums' | 'occurrence_sums' | 'column_sums';

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
  private scratch: GPUBuffer | undefined;
  private readonly paramBuffers = new Map<string, GPUBuffer>();

  constructor(
    readonly device: GPUDevice,
    batch: TocBatch,
    layout: TocRunsLayout = tocRunsLayout(batch),
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
      runPairs: layout.runPairs,
      occurrenceOffsets: layout.occurrenceOffsets,
      occurrenceRows: layout.occurrenceRows,
      colBounds: layout.colBounds,
      colItems: layout.colItems,
    };
    this.buffers = Object.fromEntries(Object.entries(arrays).map(([name, data]) => [name, storageBuffer(device, `TocRunsGpuBatch.${name}`, data)]));
    this.uploadBytes = runsLayoutBytes(layout);
    // The layout's index widths are pipeline constants: a handful of pipelines in all.
    const constants = { IDX16: layout.indexBits === 16 ? 1 : 0, PAIR_BITS: layout.wideItems ? 16 : layout.pairBits, WIDE: layout.wideItems ? 1 : 0 };
    const program = (entryPoint: EntryPoint): KernelProgram => ({
      label: `TocRuns.${entryPoint}`,
      wgsl: tocRunsWgsl,
      entryPoint,
      workgroupSize: WG,
      layout: 'grid',
      constants,
    });
    this.programs = {
      run_sums: program('run_sums'),
      row_sums: program('row_sums'),
      occurrence_sums: program('occurrence_sums'),
      column_sums: program('column_sums'),
    };
  }

  /** |S| x k floats for H or G, grown as needed (4 bytes at least: row_sums binds it even when S is empty). */
  private scratchFor(k: number): GPUBuffer {
    const size = Math.max(4, this.cached * k * 4);
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
    if (this.cached > 0) {
      const params = this.params(this.cached, k, mStrides, outStrides);
      dispatch(this.device, pass, this.programs.run_sums, { 0: params, 1: b.pairs!, 2: m, 3: scratch, 7: b.runOffsets!, 8: b.runPairs! }, this.cached, k);
    }
    const params = this.params(this.rows, k, mStrides, outStrides);
    dispatch(this.device, pass, this.programs.row_sums, { 0: params, 1: b.pairs!, 2: m, 3: scratch, 4: out, 5: b.rowBounds!, 6: b.rowItems! }, this.rows, k);
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
    if (this.cached > 0) {
      const params = this.params(this.cached, k, mStrides, outStrides);
      dispatch(
        this.device,
        pass,
        this.programs.occurrence_sums,
        { 0: params, 2: m, 3: scratch, 7: b.occurrenceOffsets!, 8: b.occurrenceRows! },
        this.cached,
        k,
      );
    }
    const params = this.params(this.cols, k, mStrides, outStrides);
    dispatch(this.device, pass, this.programs.column_sums, { 0: params, 1: b.pairs!, 2: m, 3: scratch, 4: out, 5: b.colBounds!, 6: b.colItems! }, this.cols, k);
    pass.end();
  }

  destroy(): void {
    for (const buffer of Object.values(this.buffers)) buffer.destroy();
    this.scratch?.destroy();
    for (const buffer of this.paramBuffers.values()) buffer.destroy();
  }
}
