// TOC products on the resolved-runs layout (shaders/toc_runs.wgsl, docs/toc.md
// "Kernel design"). A product fills X = [M; H] (or [M; G]): M copied in (or
// re-laid out by load_m), then one dispatch over the cached codes for H or G;
// then one CSR-shaped gather over X. With nothing cached and a row-major M the
// gather reads M itself: no copy, one dispatch, exactly CSR's work.
// Row-major operands with k a multiple of 4 take the quad entry points (4 output
// columns per invocation); a batch whose values are all 1 skips value loads.
import biasEpilogueWgsl from '../../../shaders/bias_epilogue.wgsl?raw';
import tocRunsModule from '../../../shaders/toc_runs.wgsl?raw';
import type { TocBatch } from '../../toc/batch.js';
import { runsLayoutBytes, tocRunsLayout, type RunsWorkModel, type TocRunsLayout } from '../../toc/gpu-runs.js';
import { dispatch, storageBuffer, type KernelProgram } from '../pipelines.js';
import { rowMajor, type Strides } from './kernels.js';

/** The runs kernels with the bias epilogue their gathers call (finish, finish4). */
const tocRunsWgsl = `${biasEpilogueWgsl}\n${tocRunsModule}`;

// One invocation per (item, output column or quad of them): any workgroup size gives the same bits.
const WG = 64;
const ENTRY_POINTS = ['load_m', 'run_sums', 'occurrence_sums', 'gather'] as const;
type EntryPoint = (typeof ENTRY_POINTS)[number];

/** Kernel choices a bench can turn off to measure what each is worth (both on by default). */
export interface KernelOptions {
  /** 4 output columns per invocation where the strides allow it. */
  quad?: boolean;
  /** No value loads when every value of the batch is 1. */
  unit?: boolean;
}

type Programs = Record<EntryPoint, KernelProgram>;

/** What a forward product adds to each output as it stores it: a first layer's bias, and a ReLU after it. */
export interface BiasEpilogue {
  /** One float per output column. */
  bias: GPUBuffer;
  relu: boolean;
}

/** A gather program with the bias (and ReLU) added as it stores (override constants BIAS, RELU): made once per program. */
const withBias = new WeakMap<KernelProgram, [KernelProgram, KernelProgram]>();
export function biasProgram(program: KernelProgram, relu: boolean): KernelProgram {
  let pair = withBias.get(program);
  if (!pair) {
    const fused = (r: boolean): KernelProgram => ({
      ...program,
      label: `${program.label}+bias${r ? '+relu' : ''}`,
      constants: { ...program.constants, BIAS: 1, RELU: r ? 1 : 0 },
    });
    withBias.set(program, (pair = [fused(false), fused(true)]));
  }
  return pair[relu ? 1 : 0];
}

/** The bias bindings' stand-in where no bias is added (the gathers read it only with BIAS on, but bind it always): one per device. */
const standIns = new WeakMap<GPUDevice, GPUBuffer>();

/** The buffer a gather binds as its bias: the epilogue's, checked to hold k floats, or the device's 16-byte stand-in. */
export function biasOrStandIn(device: GPUDevice, k: number, epilogue: BiasEpilogue | undefined): GPUBuffer {
  if (epilogue) {
    // A shorter one would be read clamped, wrong without a word.
    if (epilogue.bias.size < 4 * k) throw new Error(`a bias of ${epilogue.bias.size} bytes for ${k} output columns`);
    return epilogue.bias;
  }
  let standIn = standIns.get(device);
  if (!standIn) standIns.set(device, (standIn = device.createBuffer({ label: 'noBias', size: 16, usage: GPUBufferUsage.STORAGE })));
  return standIn;
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
  /** Rows of M, so H or G start at X row mRows. */
  mRows: number;
  /** Codes this side caches: rows of H or G after M's (each side has its own set). */
  cached: number;
  outRows: number;
  bounds: GPUBuffer;
  items: GPUBuffer;
  /** Each item's value when the side's items are plain (a 4-byte stand-in otherwise: the gather binds it either way). */
  itemValues: GPUBuffer;
  /** Scalar and quad programs of the side: compiled for plain items or packed ones. */
  programs: Programs;
  quadPrograms: Programs;
  fill: 'run_sums' | 'occurrence_sums';
  label: string;
}

/** A TOC batch on the GPU in the resolved-runs layout. Same interface as TocGpuBatch and CsrGpuBatch. */
export class TocRunsGpuBatch {
  readonly rows: number;
  readonly cols: number;
  /** Codes cached for A·M (rows of H) and for Aᵀ·M (rows of G). */
  readonly rowCached: number;
  readonly colCached: number;
  readonly model: RunsWorkModel;
  /** Bytes uploaded: a one-time cost per batch. */
  readonly uploadBytes: number;
  private readonly buffers: Record<string, GPUBuffer>;
  private readonly rowSide: Side;
  private readonly colSide: Side;
  private readonly quad: boolean;
  private ext: GPUBuffer | undefined;
  private readonly paramBuffers = new Map<string, GPUBuffer>();

  constructor(
    readonly device: GPUDevice,
    batch: TocBatch,
    layout: TocRunsLayout = tocRunsLayout(batch),
    options: KernelOptions = {},
  ) {
    this.rows = layout.rows;
    this.cols = layout.cols;
    this.rowCached = layout.rowCached;
    this.colCached = layout.colCached;
    this.model = layout.model;
    const arrays = {
      values: layout.values,
      rowBounds: layout.rowBounds,
      rowItems: layout.rowItems,
      runOffsets: layout.runOffsets,
      runItems: layout.runItems,
      occurrenceOffsets: layout.occurrenceOffsets,
      occurrenceRows: layout.occurrenceRows,
      colBounds: layout.colBounds,
      colItems: layout.colItems,
      rowValues: layout.rowValues,
      colValues: layout.colValues,
    };
    // Value loads asked for (unit: false) on a unit batch: its plain sides store no values, so give them ones to load.
    if (layout.unitValues && options.unit === false) {
      if (layout.rowPlain) arrays.rowValues = new Float32Array(layout.rowBounds[layout.rows]!).fill(1);
      if (layout.colPlain) arrays.colValues = new Float32Array(layout.colBounds[layout.cols]!).fill(1);
    }
    this.buffers = Object.fromEntries(Object.entries(arrays).map(([name, data]) => [name, storageBuffer(device, `TocRunsGpuBatch.${name}`, data)]));
    this.uploadBytes = runsLayoutBytes(layout);
    // The layout's index widths and unit values are pipeline constants: a handful of pipelines in all.
    // A plain side (nothing cached) gathers with PLAIN on; its fill programs never run.
    const constantsFor = (plain: boolean) => ({
      IDX16: layout.indexBits === 16 ? 1 : 0,
      PAIR_BITS: layout.wideItems ? 16 : layout.pairBits,
      WIDE: layout.wideItems && !plain ? 1 : 0,
      UNIT: layout.unitValues && options.unit !== false ? 1 : 0,
      PLAIN: plain ? 1 : 0,
    });
    const programs = (quad: boolean, plain: boolean) =>
      Object.fromEntries(
        ENTRY_POINTS.map((entryPoint): [EntryPoint, KernelProgram] => {
          // load_m has no quad form: it runs only for strided M, which the quad forms do not take.
          const q = quad && entryPoint !== 'load_m';
          const name = q ? `${entryPoint}4` : entryPoint;
          const constants = constantsFor(plain);
          return [entryPoint, { label: `TocRuns.${name}`, wgsl: tocRunsWgsl, entryPoint: name, workgroupSize: WG, layout: q ? 'flat' : 'grid', constants }];
        }),
      ) as Programs;
    this.quad = options.quad !== false;
    const b = this.buffers;
    this.rowSide = {
      mRows: this.cols,
      cached: this.rowCached,
      outRows: this.rows,
      bounds: b.rowBounds!,
      items: b.rowItems!,
      itemValues: b.rowValues!,
      programs: programs(false, layout.rowPlain),
      quadPrograms: programs(true, layout.rowPlain),
      fill: 'run_sums',
      label: 'TocRuns.times',
    };
    this.colSide = {
      mRows: this.rows,
      cached: this.colCached,
      outRows: this.cols,
      bounds: b.colBounds!,
      items: b.colItems!,
      itemValues: b.colValues!,
      programs: programs(false, layout.colPlain),
      quadPrograms: programs(true, layout.colPlain),
      fill: 'occurrence_sums',
      label: 'TocRuns.transposeTimes',
    };
  }

  /** Bytes of the X = [M; H or G] buffer the products have needed so far (0 when nothing needed it). */
  get extBytes(): number {
    return this.ext?.size ?? 0;
  }

  /** X: floats for M's rows and the side's |S| more, grown as needed (16 bytes at least: the quad forms bind it as a vec4 array). */
  private extFor(floats: number): GPUBuffer {
    const size = Math.max(16, floats * 4);
    if (!this.ext || this.ext.size < size) {
      this.ext?.destroy();
      this.ext = this.device.createBuffer({ label: 'TocRunsGpuBatch.ext', size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    }
    return this.ext;
  }

  private params(items: number, k: number, base: number, xRow: number, m: Strides, r: Strides): GPUBuffer {
    const values = new Uint32Array([k, items, base, xRow, m.row, m.col, r.row, r.col]);
    const key = values.join(',');
    let buffer = this.paramBuffers.get(key);
    if (!buffer) {
      buffer = this.device.createBuffer({ label: 'TocRuns.params', size: values.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
      this.device.queue.writeBuffer(buffer, 0, values);
      this.paramBuffers.set(key, buffer);
    }
    return buffer;
  }

  private product(encoder: GPUCommandEncoder, side: Side, m: GPUBuffer, k: number, out: GPUBuffer, ms: Strides, rs: Strides, epilogue?: BiasEpilogue): void {
    const b = this.buffers;
    // X is a buffer of our own when something is cached (H or G follow M's rows) or M is not row-major (gather reads rows).
    const needExt = side.cached > 0 || ms.col !== 1;
    const xRow = needExt ? k : ms.row;
    const quad = this.quad && k % 4 === 0 && k > 0 && xRow % 4 === 0 && rs.col === 1 && rs.row % 4 === 0 && out.size >= 16 && (needExt || m.size >= 16);
    // The quad forms bind X, R, the filling X and the bias as vec4 arrays (bindings 12, 10, 11, 15) and run k / 4 invocations per item.
    const [programs, width, xAt, outAt, extAt, biasAt] = quad ? [side.quadPrograms, k / 4, 12, 10, 11, 15] : [side.programs, k, 9, 4, 3, 14];
    let x = m;
    let pass: GPUComputePassEncoder;
    if (needExt) {
      x = this.extFor((side.mRows + side.cached) * k);
      // A row-major M without gaps goes in as it is, with a copy; any other is re-laid out by load_m.
      const copy = ms.col === 1 && ms.row === k && (m.usage & GPUBufferUsage.COPY_SRC) !== 0;
      if (copy && side.mRows > 0) encoder.copyBufferToBuffer(m, 0, x, 0, side.mRows * k * 4);
      pass = encoder.beginComputePass({ label: side.label });
      if (!copy && side.mRows > 0) {
        dispatch(this.device, pass, side.programs.load_m, { 0: this.params(side.mRows, k, 0, k, ms, rs), 2: m, 3: x }, side.mRows, k);
      }
      if (side.cached > 0) {
        const params = this.params(side.cached, k, side.mRows, k, ms, rs);
        const bindings =
          side.fill === 'run_sums'
            ? { 0: params, 1: b.values!, [extAt]: x, 5: b.runOffsets!, 6: b.runItems!, 13: side.itemValues }
            : { 0: params, [extAt]: x, 7: b.occurrenceOffsets!, 8: b.occurrenceRows! };
        dispatch(this.device, pass, programs[side.fill], bindings, side.cached, width);
      }
    } else {
      pass = encoder.beginComputePass({ label: side.label });
    }
    const params = this.params(side.outRows, k, side.mRows, xRow, ms, rs);
    const bias = biasOrStandIn(this.device, k, epilogue);
    const bindings = { 0: params, 1: b.values!, [xAt]: x, [outAt]: out, 5: side.bounds, 6: side.items, 13: side.itemValues, [biasAt]: bias };
    const gather = epilogue ? biasProgram(programs.gather, epilogue.relu) : programs.gather;
    dispatch(this.device, pass, gather, bindings, side.outRows, width);
    pass.end();
  }

  /** Records R = A * M: M is cols x k, R is rows x k. */
  times(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, mStrides: Strides = rowMajor(k), outStrides: Strides = rowMajor(k)): void {
    this.product(encoder, this.rowSide, m, k, out, mStrides, outStrides);
  }

  /** Records R = A * M + b (then relu'd with `relu`), row-major M (cols x k) and R (rows x k): the bias in the product's own pass. */
  timesAddBias(encoder: GPUCommandEncoder, m: GPUBuffer, k: number, out: GPUBuffer, bias: GPUBuffer, relu: boolean): void {
    this.product(encoder, this.rowSide, m, k, out, rowMajor(k), rowMajor(k), { bias, relu });
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
    this.product(encoder, this.colSide, m, k, out, mStrides, outStrides);
  }

  destroy(): void {
    for (const buffer of Object.values(this.buffers)) buffer.destroy();
    this.ext?.destroy();
    for (const buffer of this.paramBuffers.values()) buffer.destroy();
  }
}
