// TOC matrix operations on the GPU (shaders/toc_*.wgsl). A batch is uploaded
// once (TocGpuBatch); each operation then records its passes into a command
// encoder the caller submits, so tfjs and our kernels share one queue in order.
import tocTimesWgsl from '../../../shaders/toc_times.wgsl?raw';
import tocTransposeTimesWgsl from '../../../shaders/toc_transpose_times.wgsl?raw';
import type { TocBatch } from '../../toc/batch.js';
import { dispatch, storageBuffer, type KernelProgram } from '../pipelines.js';
import { tocGpuLayout, type TocGpuLayout } from '../../toc/gpu-layout.js';

// Gathers run one invocation per output in workgroups of 64. The tree passes run
// one workgroup per column (their barriers order the levels), so they take the
// widest workgroup the default limits allow, 256. Every output is summed by one
// invocation in a fixed order, so workgroup sizes never change the bits.
const GATHER_WG = 64;
const TREE_WG = 256;

const programs = {
  nodeValues: { label: 'TocTimes.nodeValues', wgsl: tocTimesWgsl, entryPoint: 'node_values', workgroupSize: TREE_WG, layout: 'perColumn' },
  rowSums: { label: 'TocTimes.rowSums', wgsl: tocTimesWgsl, entryPoint: 'row_sums', workgroupSize: GATHER_WG, layout: 'grid' },
  occurrenceSums: {
    label: 'TocTransposeTimes.occurrenceSums',
    wgsl: tocTransposeTimesWgsl,
    entryPoint: 'occurrence_sums',
    workgroupSize: GATHER_WG,
    layout: 'grid',
  },
  subtreeSums: { label: 'TocTransposeTimes.subtreeSums', wgsl: tocTransposeTimesWgsl, entryPoint: 'subtree_sums', workgroupSize: TREE_WG, layout: 'perColumn' },
  columnSums: { label: 'TocTransposeTimes.columnSums', wgsl: tocTransposeTimesWgsl, entryPoint: 'column_sums', workgroupSize: GATHER_WG, layout: 'grid' },
} satisfies Record<string, KernelProgram>;

/** How a dense operand or result is laid out: element [i][j] is at i * row + j * col. */
export interface Strides {
  row: number;
  col: number;
}

export const rowMajor = (k: number): Strides => ({ row: k, col: 1 });
export const columnMajor = (n: number): Strides => ({ row: 1, col: n });

/** A TOC batch resident on the GPU, with the index structures of layout.ts. */
export class TocGpuBatch {
  readonly rows: number;
  readonly cols: number;
  readonly nodeCount: number;
  readonly levels: number;
  /** Bytes uploaded (batch + layout): a one-time cost per batch. */
  readonly uploadBytes: number;
  private readonly buffers: Record<string, GPUBuffer>;
  private scratch: GPUBuffer | undefined;
  private readonly paramBuffers = new Map<string, GPUBuffer>();

  constructor(
    readonly device: GPUDevice,
    batch: TocBatch,
    layout: TocGpuLayout = tocGpuLayout(batch),
  ) {
    this.rows = batch.rows;
    this.cols = batch.cols;
    this.nodeCount = batch.nodeCount;
    this.levels = layout.levels;
    const arrays = {
      nodeParent: batch.nodeParent,
      nodeKeyCol: batch.nodeKeyCol,
      nodeKeyVal: batch.nodeKeyVal,
      codes: batch.codes,
      rowOffsets: batch.rowOffsets,
      levelNodes: layout.levelNodes,
      levelOffsets: layout.levelOffsets,
      childOffsets: layout.childOffsets,
      childNodes: layout.childNodes,
      occurrenceOffsets: layout.occurrenceOffsets,
      occurrenceRows: layout.occurrenceRows,
      columnOffsets: layout.columnOffsets,
      columnNodes: layout.columnNodes,
    };
    this.buffers = Object.fromEntries(Object.entries(arrays).map(([name, data]) => [name, storageBuffer(device, `TocGpuBatch.${name}`, data)]));
    this.uploadBytes = Object.values(arrays).reduce((n, a) => n + a.byteLength, 0);
  }

  /** Node-by-column scratch space (H, G/W of the paper), grown as needed. */
  private scratchFor(k: number): GPUBuffer {
    const size = Math.max(4, this.nodeCount * k * 4);
    if (!this.scratch || this.scratch.size < size) {
      this.scratch?.destroy();
      this.scratch = this.device.createBuffer({ label: 'TocGpuBatch.nodeScratch', size, usage: GPUBufferUsage.STORAGE });
    }
    return this.scratch;
  }

  /** Uniform parameters, made once per distinct (operation, k, strides) and reused every step. */
  private params(label: string, k: number, third: number, m: Strides, r: Strides): GPUBuffer {
    const values = new Uint32Array([k, this.levels, third, this.nodeCount, m.row, m.col, r.row, r.col]);
    const key = `${label}:${values.join(',')}`;
    let buffer = this.paramBuffers.get(key);
    if (!buffer) {
      buffer = this.device.createBuffer({ label, size: values.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.device.queue.writeBuffer(buffer, 0, values);
      this.paramBuffers.set(key, buffer);
    }
    return buffer;
  }

  /** Records R = A * M: M is cols x k (in `m` with strides mStrides), R is rows x k. */
  times(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, mStrides: Strides = rowMajor(k), outStrides: Strides = rowMajor(k)): void {
    const b = this.buffers;
    const params = this.params('TocTimes.params', k, this.rows, mStrides, outStrides);
    const h = this.scratchFor(k);
    const pass = encoder.beginComputePass({ label: 'TocTimes' });
    dispatch(
      this.device,
      pass,
      programs.nodeValues,
      { 0: params, 1: b.nodeParent!, 2: b.nodeKeyCol!, 3: b.nodeKeyVal!, 4: b.levelNodes!, 5: b.levelOffsets!, 6: m, 7: h },
      this.nodeCount,
      k,
    );
    dispatch(this.device, pass, programs.rowSums, { 0: params, 7: h, 8: b.codes!, 9: b.rowOffsets!, 10: out }, this.rows, k);
    pass.end();
  }

  /** Records R = A^T * M: M is rows x k, R is cols x k. With k = 1 this is v * A; with M = dZ it is the weight gradient. */
  transposeTimes(
    encoder: GPUCommandEncoder,
    m: GPUBuffer,
    k: number,
    out: GPUBuffer,
    mStrides: Strides = rowMajor(k),
    outStrides: Strides = rowMajor(k),
  ): void {
    const b = this.buffers;
    const params = this.params('TocTransposeTimes.params', k, this.cols, mStrides, outStrides);
    const g = this.scratchFor(k);
    const pass = encoder.beginComputePass({ label: 'TocTransposeTimes' });
    dispatch(this.device, pass, programs.occurrenceSums, { 0: params, 1: b.occurrenceOffsets!, 2: b.occurrenceRows!, 3: m, 4: g }, this.nodeCount, k);
    dispatch(
      this.device,
      pass,
      programs.subtreeSums,
      { 0: params, 4: g, 5: b.levelNodes!, 6: b.levelOffsets!, 7: b.childOffsets!, 8: b.childNodes! },
      this.nodeCount,
      k,
    );
    dispatch(this.device, pass, programs.columnSums, { 0: params, 4: g, 9: b.columnOffsets!, 10: b.columnNodes!, 11: b.nodeKeyVal!, 12: out }, this.cols, k);
    pass.end();
  }

  destroy(): void {
    for (const buffer of Object.values(this.buffers)) buffer.destroy();
    this.scratch?.destroy();
    for (const buffer of this.paramBuffers.values()) buffer.destroy();
  }
}
