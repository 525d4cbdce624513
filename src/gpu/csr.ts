// A CSR matrix on the GPU: the baseline the TOC kernels are measured against.
// A is kept twice, as CSR and as CSC (CSR of A^T), so both products are gathers.
import biasEpilogueWgsl from '../../shaders/bias_epilogue.wgsl?raw';
import csrModule from '../../shaders/csr.wgsl?raw';
import type { SparseRows } from '../toc/types.js';
import { dispatch, storageBuffer, type KernelProgram } from './pipelines.js';
import { rowMajor, type Strides } from './toc/kernels.js';
import { biasOrStandIn, biasProgram, quadApplies, type BiasEpilogue, type KernelOptions } from './toc/runs.js';

// One invocation per (stored row, column j or quad of them): a gather, so any workgroup size gives the same bits.
/** The CSR kernels with the bias epilogue their gathers call (finish, finish4). */
const csrWgsl = `${biasEpilogueWgsl}\n${csrModule}`;

// Made once each (biasProgram keeps its variants by program).
const PROGRAMS = [false, true].map((quad) =>
  [false, true].map(
    (unit): KernelProgram => ({
      label: quad ? 'Csr.times4' : 'Csr.times',
      wgsl: csrWgsl,
      entryPoint: quad ? 'csr_times4' : 'csr_times',
      workgroupSize: 64,
      layout: quad ? 'flat' : 'grid',
      constants: { UNIT: unit ? 1 : 0 },
    }),
  ),
);
const programFor = (quad: boolean, unit: boolean): KernelProgram => PROGRAMS[quad ? 1 : 0]![unit ? 1 : 0]!;

interface Stored {
  rows: number;
  rowPtr: GPUBuffer;
  colIndex: GPUBuffer;
  values: GPUBuffer;
}

function transpose(a: SparseRows): { rowPtr: Uint32Array; colIndex: Uint32Array; values: Float32Array } {
  const rowPtr = new Uint32Array(a.cols + 1);
  for (let p = 0; p < a.colIndex.length; p++) rowPtr[a.colIndex[p]! + 1]!++;
  for (let c = 0; c < a.cols; c++) rowPtr[c + 1]! += rowPtr[c]!;
  const fill = rowPtr.slice(0, a.cols);
  const colIndex = new Uint32Array(a.colIndex.length);
  const values = new Float32Array(a.colIndex.length);
  for (let r = 0; r < a.rows; r++) {
    for (let p = a.rowPtr[r]!; p < a.rowPtr[r + 1]!; p++) {
      const at = fill[a.colIndex[p]!]!++;
      colIndex[at] = r;
      values[at] = a.values[p]!;
    }
  }
  return { rowPtr, colIndex, values };
}

export class CsrGpuBatch {
  readonly rows: number;
  readonly cols: number;
  readonly uploadBytes: number;
  private readonly csr: Stored;
  private readonly csc: Stored;
  private readonly paramBuffers = new Map<string, GPUBuffer>();
  private readonly quad: boolean;
  private readonly unit: boolean;

  /** options: the same kernel choices as TocRunsGpuBatch's, both on by default. */
  constructor(
    readonly device: GPUDevice,
    readonly a: SparseRows,
    options: KernelOptions = {},
  ) {
    this.quad = options.quad !== false;
    this.unit = options.unit !== false && a.values.every((v) => v === 1);
    this.rows = a.rows;
    this.cols = a.cols;
    const up = (label: string, rows: number, rowPtr: Uint32Array, colIndex: Uint32Array, values: Float32Array): Stored => ({
      rows,
      rowPtr: storageBuffer(device, `${label}.rowPtr`, rowPtr),
      colIndex: storageBuffer(device, `${label}.colIndex`, colIndex),
      values: storageBuffer(device, `${label}.values`, values),
    });
    this.csr = up('CsrGpuBatch.csr', a.rows, a.rowPtr, a.colIndex, Float32Array.from(a.values));
    const t = transpose(a);
    this.csc = up('CsrGpuBatch.csc', a.cols, t.rowPtr, t.colIndex, t.values);
    this.uploadBytes = 2 * (a.colIndex.byteLength + 4 * a.values.length) + 4 * (a.rows + 1) + 4 * (a.cols + 1);
  }

  private run(encoder: GPUCommandEncoder, stored: Stored, m: GPUBuffer, k: number, out: GPUBuffer, ms: Strides, rs: Strides, epilogue?: BiasEpilogue): void {
    const values = new Uint32Array([k, stored.rows, ms.row, ms.col, rs.row, rs.col]);
    const key = values.join(',');
    let params = this.paramBuffers.get(key);
    if (!params) {
      params = this.device.createBuffer({ label: 'Csr.params', size: values.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.device.queue.writeBuffer(params, 0, values);
      this.paramBuffers.set(key, params);
    }
    const quad = this.quad && quadApplies(k, ms, rs, m, out);
    const plain = programFor(quad, this.unit);
    const program = epilogue ? biasProgram(plain, epilogue.relu) : plain;
    const pass = encoder.beginComputePass({ label: plain.label });
    const [mAt, outAt, biasAt] = quad ? [6, 7, 9] : [4, 5, 8];
    dispatch(
      this.device,
      pass,
      program,
      { 0: params, 1: stored.rowPtr, 2: stored.colIndex, 3: stored.values, [mAt]: m, [outAt]: out, [biasAt]: biasOrStandIn(this.device, k, epilogue) },
      stored.rows,
      quad ? k / 4 : k,
    );
    pass.end();
  }

  /** R = A * M (M cols x k, R rows x k). */
  times(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, ms: Strides = rowMajor(k), rs: Strides = rowMajor(k)): void {
    this.run(encoder, this.csr, m, k, out, ms, rs);
  }

  /** R = A * M + b (then relu'd with `relu`), row-major M and R: the bias in the product's own pass, as TocRunsGpuBatch's. */
  timesAddBias(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, bias: GPUBuffer, relu: boolean): void {
    this.run(encoder, this.csr, m, k, out, rowMajor(k), rowMajor(k), { bias, relu });
  }

  /** R = A^T * M (M rows x k, R cols x k). */
  transposeTimes(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, ms: Strides = rowMajor(k), rs: Strides = rowMajor(k)): void {
    this.run(encoder, this.csc, m, k, out, ms, rs);
  }

  destroy(): void {
    for (const s of [this.csr, this.csc]) for (const b of [s.rowPtr, s.colIndex, s.values]) b.destroy();
    for (const b of this.paramBuffers.values()) b.destroy();
  }
}
