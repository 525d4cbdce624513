// The TOC kernel benchmark page (bench/gpu/kernels.html), driven by
// bench/toc-kernels.ts. On the WebGPU device tfjs uses it times, side by side:
//   - one-time costs per batch: CPU encoding, toBatch + tocGpuLayout, uploads;
//   - A*v, v*A, A*M and M*A (k = 64) with the TOC kernels, the CSR kernels and
//     tfjs tf.matMul on the dense batch, after checking that all three agree;
//   - epochs of logistic regression whose first layer is tocMatMul on TOC,
//     tocMatMul on CSR, or tf.matMul on dense tensors.
// Results are a Promise on window.__bench. Query options: trials, epochs, target (ms per trial),
// timestamps=0 (no GPU-side times).
import * as tf from '@tensorflow/tfjs';
import { webgpuBackend } from '../../src/gpu/backend.js';
import { CsrGpuBatch } from '../../src/gpu/csr.js';
import { readBuffer, storageBuffer } from '../../src/gpu/pipelines.js';
import { columnMajor, rowMajor, TocGpuBatch, type Strides } from '../../src/gpu/toc/kernels.js';
import { tocGpuLayout, type TocGpuLayout } from '../../src/toc/gpu-layout.js';
import { tocMatMul } from '../../src/gpu/toc/tfjs-op.js';
import { readTocRecord, validateTocManifest, writeTocRecord, type TocFrame } from '../../src/toc/dataset.js';
import {
  decode,
  encodeDense,
  encodePairs,
  encodeToc,
  sparseFromDense,
  sparseFromPairs,
  toBatch,
  type ColumnValuePair,
  type SparseRows,
  type TocBatch,
  type TocLogical,
} from '../../src/toc/index.js';
import { mnistLike, randomMatrix, rng } from '../../test/unit/toc/generators.js';

// ------------------------------------------------------------------ results

export type OpName = 'A*v' | 'v*A' | 'A*M' | 'M*A';

/** Shape and TOC structure of one 250-row batch. */
export interface BatchInfo {
  name: string;
  rows: number;
  cols: number;
  nnz: number;
  /** |I|: unique column:value pairs (first layer of the prefix tree). */
  firstLayer: number;
  /** |D|: codes. */
  codes: number;
  /** Nodes of the prefix tree C', root included. */
  nodes: number;
  /** Depth of the tree: the level-by-level passes run this many rounds. */
  levels: number;
  /** Bytes of the TOC1 physical encoding (bit-packed, float32 values): what a record stores. */
  tocFileBytes: number;
}

/** One-time costs of one batch, each the median of several runs. */
export interface OneTimeCosts {
  name: string;
  encodeMs: number;
  /** What encodeMs measured: encodeDense or encodePairs. */
  encodeWith: string;
  batchLayoutMs: number;
  tocBytes: number;
  tocUploadMs: number;
  /** Includes building the CSC copy on the CPU (CsrGpuBatch does it in its constructor). */
  csrBytes: number;
  csrUploadMs: number;
  denseBytes: number;
  denseUploadMs: number;
}

export interface CheckResult {
  batch: string;
  op: OpName;
  /** max |x - dense| / (1 + |dense|) over all outputs. */
  tocError: number;
  csrError: number;
}

export interface KernelTiming {
  batch: string;
  op: OpName;
  k: number;
  /** ms per operation: median over trials of (trial time / repetitions). */
  toc: number;
  csr: number;
  dense: number;
  /** GPU-side ms per operation from timestamp-query, when the device has it (see SpanTimer). */
  gpu: { toc: number; csr: number; dense: number } | undefined;
  reps: { toc: number; csr: number; dense: number };
  /** Wall-clock ms per operation of each round; a round runs the three in turn. */
  trials: { toc: number[]; csr: number[]; dense: number[] };
}

export interface TrainingRun {
  name: 'TOC' | 'CSR' | 'dense';
  /** Wall-clock ms of each epoch; the first includes pipeline compilation. */
  epochMs: number[];
  /** Mean training loss (softmax cross-entropy) of each epoch. */
  losses: number[];
  /** Bytes of the 40 batches kept on the GPU in this representation (labels not counted). */
  gpuBytes: number;
  /** max |W - W_dense| / (1 + |W_dense|) over the trained weights (0 for dense itself). */
  weightError: number;
}

export interface EndToEnd {
  batches: number;
  rows: number;
  cols: number;
  classes: number;
  epochs: number;
  learningRate: number;
  /** Share of rows labelled 1 (delayed). */
  positiveRate: number;
  /** Per-batch TOC structure, in batch order. */
  toc: Array<Pick<BatchInfo, 'nnz' | 'firstLayer' | 'codes' | 'nodes' | 'levels' | 'tocFileBytes'>>;
  /** Node-by-unit scratch the TOC kernels keep per batch (nodes x classes x 4 bytes). */
  tocScratchBytes: number;
  /** One-time CPU costs for all 40 batches together. */
  encodeMs: number;
  recordBytes: number;
  readRecordMs: number;
  batchLayoutMs: number;
  /** Upload of all 40 batches together. */
  uploadMs: { toc: number; csr: number; dense: number };
  runs: TrainingRun[];
  /** tfjs tensors alive after the three runs minus before: 0 unless something leaks. */
  leakedTensors: number;
}

export interface BenchResults {
  /** vendor / architecture of the adapter, e.g. 'google / swiftshader'. */
  adapter: string;
  adapterDescription: string;
  timestampQuery: boolean;
  /** Whether the kernel table has GPU-side times (timestamp-query present and not turned off with ?timestamps=0). */
  gpuTimes: boolean;
  userAgent: string;
  crossOriginIsolated: boolean;
  trials: number;
  targetMs: number;
  batches: BatchInfo[];
  oneTime: OneTimeCosts[];
  checks: CheckResult[];
  kernels: KernelTiming[];
  endToEnd: EndToEnd;
  gpuErrors: string[];
  totalMs: number;
}

declare global {
  interface Window {
    __bench?: Promise<BenchResults>;
  }
}

// ------------------------------------------------------------------ options

const query = new URLSearchParams(location.search);
function option(name: string, fallback: number): number {
  const v = Number(query.get(name) ?? fallback);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}
const TRIALS = Math.round(option('trials', 7));
// Enough epochs that the per-epoch ratios have a spread (epoch 1 compiles pipelines and is left out).
const EPOCHS = Math.max(2, Math.round(option('epochs', 8)));
/** Wall-clock time one timed trial aims at; repetitions per trial follow from it. */
const TARGET_MS = option('target', 100);
const MAX_REPS = 400;
const CPU_RUNS = 5;
const UPLOAD_RUNS = 5;
const ROWS = 250;
const K = 64;
const E2E_BATCHES = 40;
const CLASSES = 2;
const LEARNING_RATE = 0.01;
/** Agreement required of TOC and CSR with the dense result before anything is timed. */
const MAX_REL_ERROR = 1e-4;

const T0 = performance.now();
const log = (line: string): void => console.log(`bench: [${((performance.now() - T0) / 1000).toFixed(1)} s] ${line}`);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function cpuMedian(runs: number, f: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    f();
    times.push(performance.now() - t0);
  }
  return median(times);
}

// ------------------------------------------------------------------ the shared queue

/** The public methods of tfjs-backend-webgpu's WebGPUBackend that submit its pending commands. */
interface TfjsWebGpuBackend {
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
  uploadToGPU(dataId: object): void;
}

const tfjsBackend = (): TfjsWebGpuBackend => tf.backend() as unknown as TfjsWebGpuBackend;

/** Submits whatever tfjs has recorded but not yet submitted. */
function flushTfjs(): void {
  const b = tfjsBackend();
  b.ensureCommandEncoderReady();
  b.endComputePassEncoder();
  b.submitQueue();
}

/** Submits tfjs's pending work, then waits until the queue is idle. */
async function settle(device: GPUDevice): Promise<void> {
  flushTfjs();
  await device.queue.onSubmittedWorkDone();
}

/**
 * GPU-side span of a trial with timestamp-query: an empty compute pass writes a
 * timestamp before the operations and another after them. For our kernels both
 * passes sit in the trial's own command encoder; tfjs records into an encoder of
 * its own, so there the marks are separate submissions around its work and the
 * span also holds any time the GPU waited for tfjs to submit.
 */
class SpanTimer {
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

/** A dense tensor moved to the GPU now (tfjs otherwise uploads on first use). */
function denseTensor(data: Float32Array, shape: [number, number]): tf.Tensor2D {
  const t = tf.tensor2d(data, shape);
  tfjsBackend().uploadToGPU(t.dataId);
  return t;
}

// ------------------------------------------------------------------ data

/** Samples 0..n-1 with probability proportional to 1 / (rank + 1)^s, rank[i] = order[i]. */
function zipf(random: () => number, n: number, s: number, order?: number[]): () => number {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) cdf[i] = total += 1 / (i + 1) ** s;
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return order ? order[lo]! : lo;
  };
}

/** Column groups of the flights-like table, in column order (one one-hot feature each). */
const FLIGHT_GROUPS = [
  { name: 'origin', size: 300 },
  { name: 'destination', size: 300 },
  { name: 'hour', size: 24 },
  { name: 'weekday', size: 7 },
  { name: 'distance bucket', size: 10 },
] as const;
const FLIGHT_COLS = FLIGHT_GROUPS.reduce((n, g) => n + g.size, 0);

/**
 * Flights-like rows: origin and destination airports drawn Zipf-like (a few hubs
 * carry most flights, so routes repeat), departure hour peaked in the day,
 * weekday nearly uniform, distance bucket a function of the route. Each row is
 * 5 pairs of value 1, one per group. Labels (1 = delayed) come from a hidden
 * logistic model over the same columns.
 */
function flights(count: number, seed: number): { rows: ColumnValuePair[][]; labels: Uint16Array } {
  const random = rng(seed);
  const base: number[] = [];
  let at = 0;
  for (const g of FLIGHT_GROUPS) {
    base.push(at);
    at += g.size;
  }
  const airport = zipf(random, 300, 1.0);
  const hourOrder = [8, 7, 9, 17, 6, 12, 18, 10, 11, 13, 14, 15, 16, 19, 20, 21, 5, 22, 23, 0, 4, 1, 2, 3];
  const hour = zipf(random, 24, 0.8, hourOrder);
  const weekday = zipf(random, 7, 0.3, [4, 0, 3, 1, 6, 2, 5]);
  const distance = (o: number, d: number): number => ((Math.imul(o + 1, 0x9e3779b1) ^ Math.imul(d + 1, 0x85ebca6b)) >>> 0) % 10;
  const truth = Float64Array.from({ length: FLIGHT_COLS }, () => (random() * 2 - 1) * 1.2);
  const rows: ColumnValuePair[][] = [];
  const labels = new Uint16Array(count);
  for (let r = 0; r < count; r++) {
    const o = airport();
    let d = airport();
    while (d === o) d = airport();
    const cols = [base[0]! + o, base[1]! + d, base[2]! + hour(), base[3]! + weekday(), base[4]! + distance(o, d)];
    rows.push(cols.map((c) => [c, 1] as const));
    const z = cols.reduce((s, c) => s + truth[c]!, -1);
    labels[r] = random() < 1 / (1 + Math.exp(-z)) ? 1 : 0;
  }
  return { rows, labels };
}

function densify(s: SparseRows): Float32Array {
  const out = new Float32Array(s.rows * s.cols);
  for (let r = 0; r < s.rows; r++) for (let p = s.rowPtr[r]!; p < s.rowPtr[r + 1]!; p++) out[r * s.cols + s.colIndex[p]!] = s.values[p]!;
  return out;
}

/** One of the three batch types of the kernel benchmark. */
interface Subject {
  name: string;
  rows: number;
  cols: number;
  dense: Float32Array;
  sparse: SparseRows;
  encodeWith: string;
  encode: () => TocLogical;
}

function subjects(flightRows: ColumnValuePair[][]): Subject[] {
  const mnist = mnistLike(ROWS, 3);
  const pairs = flightRows.slice(0, ROWS);
  const flightSparse = sparseFromPairs(pairs, FLIGHT_COLS, 'f32');
  const randomCols = 1000;
  const random = Float32Array.from(randomMatrix(rng(21), { rows: ROWS, cols: randomCols, density: 0.05, distinctValues: 4 }, 'f32'));
  return [
    {
      name: 'mnist-like',
      rows: ROWS,
      cols: 784,
      dense: mnist,
      sparse: sparseFromDense(mnist, ROWS, 784),
      encodeWith: 'encodeDense',
      encode: () => encodeDense(mnist, ROWS, 784),
    },
    {
      name: 'flights-like',
      rows: ROWS,
      cols: FLIGHT_COLS,
      dense: densify(flightSparse),
      sparse: flightSparse,
      encodeWith: 'encodePairs',
      encode: () => encodePairs(pairs, FLIGHT_COLS, 'f32'),
    },
    {
      name: 'sparse random',
      rows: ROWS,
      cols: randomCols,
      dense: random,
      sparse: sparseFromDense(random, ROWS, randomCols),
      encodeWith: 'encodeDense',
      encode: () => encodeDense(random, ROWS, randomCols),
    },
  ];
}

function batchInfo(name: string, logical: TocLogical, batch: TocBatch, layout: TocGpuLayout): BatchInfo {
  return {
    name,
    rows: batch.rows,
    cols: batch.cols,
    nnz: countNonZeros(batch),
    firstLayer: batch.firstLayerSize,
    codes: batch.codes.length,
    nodes: batch.nodeCount,
    levels: layout.levels,
    tocFileBytes: encodeToc(logical, { valueType: 'f32' }).length,
  };
}

/** Non-zeros of the batch: the lengths of the node sequences its codes stand for. */
function countNonZeros(batch: TocBatch): number {
  const depth = new Uint32Array(batch.nodeCount);
  for (let i = 1; i < batch.nodeCount; i++) depth[i] = depth[batch.nodeParent[i]!]! + 1;
  let nnz = 0;
  for (const c of batch.codes) nnz += depth[c]!;
  return nnz;
}

// ------------------------------------------------------------------ the four products

interface OpSpec {
  op: OpName;
  k: number;
  /** A^T * M (v*A, M*A) rather than A * M. */
  transpose: boolean;
  /** Shape of the dense operand as tfjs sees it, and whether it goes left of A. */
  shape: [number, number];
  left: boolean;
  outLength: number;
  ms: Strides;
  rs: Strides;
}

function opSpecs(rows: number, cols: number): OpSpec[] {
  return [
    { op: 'A*v', k: 1, transpose: false, shape: [cols, 1], left: false, outLength: rows, ms: rowMajor(1), rs: rowMajor(1) },
    { op: 'v*A', k: 1, transpose: true, shape: [1, rows], left: true, outLength: cols, ms: rowMajor(1), rs: rowMajor(1) },
    { op: 'A*M', k: K, transpose: false, shape: [cols, K], left: false, outLength: rows * K, ms: rowMajor(K), rs: rowMajor(K) },
    // M * A = (A^T M^T)^T: M (k x rows, row-major) read column-major, the k x cols result written column-major.
    { op: 'M*A', k: K, transpose: true, shape: [K, rows], left: true, outLength: K * cols, ms: columnMajor(rows), rs: columnMajor(cols) },
  ];
}

type GpuMatrix = TocGpuBatch | CsrGpuBatch;

function record(encoder: GPUCommandEncoder, a: GpuMatrix, o: OpSpec, m: GPUBuffer, out: GPUBuffer): void {
  if (o.transpose) a.transposeTimes(encoder, m, o.k, out, o.ms, o.rs);
  else a.times(encoder, m, o.k, out, o.ms, o.rs);
}

function maxRelError(got: ArrayLike<number>, want: ArrayLike<number>, n: number): number {
  let e = 0;
  for (let i = 0; i < n; i++) {
    const d = Math.abs(got[i]! - want[i]!) / (1 + Math.abs(want[i]!));
    e = Math.max(e, Number.isNaN(d) ? Infinity : d);
  }
  return e;
}

/** Records and submits (our kernels) or issues (tfjs) `reps` operations, between the timer's marks if given. */
type Runner = (reps: number, timer?: SpanTimer) => void;

interface Timed {
  /** ms per operation of each round. */
  trials: number[];
  ms: number;
  gpuMs: number | undefined;
  reps: number;
}

/**
 * Times implementations of one operation side by side: an untimed warm-up of
 * each, a calibration run that picks each one's reps so a trial takes about
 * TARGET_MS, then TRIALS rounds in which every implementation runs one trial in
 * turn (the order rotating), so all of them see the same state of the machine.
 * Each trial waits for the queue to drain. Returns, per implementation, the
 * median ms per operation, wall-clock and (with timestamp-query) GPU-side.
 */
async function timeSideBySide(device: GPUDevice, timer: SpanTimer | undefined, runs: Runner[]): Promise<Timed[]> {
  const reps: number[] = [];
  for (const run of runs) {
    run(1);
    await settle(device);
    const t0 = performance.now();
    run(1);
    await settle(device);
    reps.push(Math.min(MAX_REPS, Math.max(1, Math.round(TARGET_MS / Math.max(performance.now() - t0, 0.01)))));
  }
  const times = runs.map((): number[] => []);
  const spans = runs.map((): number[] => []);
  for (let t = 0; t < TRIALS; t++) {
    for (let n = 0; n < runs.length; n++) {
      const i = (n + t) % runs.length;
      const t0 = performance.now();
      runs[i]!(reps[i]!, timer);
      await settle(device);
      times[i]!.push((performance.now() - t0) / reps[i]!);
      if (timer) spans[i]!.push((await timer.spanMs()) / reps[i]!);
    }
  }
  return runs.map((_, i) => ({ trials: times[i]!, ms: median(times[i]!), gpuMs: timer ? median(spans[i]!) : undefined, reps: reps[i]! }));
}

async function timeUpload<T>(device: GPUDevice, make: () => T, destroy: (x: T) => void): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < UPLOAD_RUNS; i++) {
    await settle(device);
    const t0 = performance.now();
    const x = make();
    await settle(device);
    times.push(performance.now() - t0);
    destroy(x);
  }
  return median(times);
}

async function kernelBench(
  device: GPUDevice,
  timer: SpanTimer | undefined,
  s: Subject,
): Promise<{ info: BatchInfo; oneTime: OneTimeCosts; checks: CheckResult[]; timings: KernelTiming[] }> {
  log(`${s.name}: encoding`);
  const logical = s.encode();
  const encodeMs = cpuMedian(CPU_RUNS, s.encode);
  const batch = toBatch(logical);
  const layout = tocGpuLayout(batch);
  const batchLayoutMs = cpuMedian(CPU_RUNS, () => tocGpuLayout(toBatch(logical)));
  const info = batchInfo(s.name, logical, batch, layout);
  if (info.nnz !== s.sparse.colIndex.length) throw new Error(`${s.name}: TOC batch holds ${info.nnz} non-zeros, the sparse rows ${s.sparse.colIndex.length}`);

  log(`${s.name}: uploads`);
  const tocUploadMs = await timeUpload(
    device,
    () => new TocGpuBatch(device, batch, layout),
    (x) => x.destroy(),
  );
  const csrUploadMs = await timeUpload(
    device,
    () => new CsrGpuBatch(device, s.sparse),
    (x) => x.destroy(),
  );
  const denseUploadMs = await timeUpload(
    device,
    () => denseTensor(s.dense, [s.rows, s.cols]),
    (x) => x.dispose(),
  );
  const toc = new TocGpuBatch(device, batch, layout);
  const csr = new CsrGpuBatch(device, s.sparse);
  const dense = denseTensor(s.dense, [s.rows, s.cols]);
  const oneTime: OneTimeCosts = {
    name: s.name,
    encodeMs,
    encodeWith: s.encodeWith,
    batchLayoutMs,
    tocBytes: toc.uploadBytes,
    tocUploadMs,
    csrBytes: csr.uploadBytes,
    csrUploadMs,
    denseBytes: s.rows * s.cols * 4,
    denseUploadMs,
  };

  const random = rng(7);
  const specs = opSpecs(s.rows, s.cols);
  const prepared = specs.map((o) => {
    const data = Float32Array.from({ length: o.shape[0] * o.shape[1] }, () => random() * 2 - 1);
    return {
      o,
      m: storageBuffer(device, `bench.${o.op}.m`, data),
      out: device.createBuffer({ label: `bench.${o.op}.out`, size: Math.max(4, o.outLength * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC }),
      operand: denseTensor(data, o.shape),
    };
  });
  const denseOp = (p: (typeof prepared)[number]): tf.Tensor2D => (p.o.left ? tf.matMul(p.operand, dense) : tf.matMul(dense, p.operand));

  log(`${s.name}: checking TOC and CSR against tf.matMul`);
  const checks: CheckResult[] = [];
  for (const p of prepared) {
    const want = denseOp(p);
    const expected = await want.data();
    want.dispose();
    const errors: number[] = [];
    for (const a of [toc, csr]) {
      const encoder = device.createCommandEncoder({ label: `bench.check.${p.o.op}` });
      record(encoder, a, p.o, p.m, p.out);
      device.queue.submit([encoder.finish()]);
      errors.push(maxRelError(await readBuffer(device, p.out), expected, p.o.outLength));
    }
    checks.push({ batch: s.name, op: p.o.op, tocError: errors[0]!, csrError: errors[1]! });
    if (errors.some((e) => !(e <= MAX_REL_ERROR))) {
      throw new Error(
        `${s.name} ${p.o.op}: TOC error ${errors[0]!.toExponential(2)}, CSR error ${errors[1]!.toExponential(2)} against tf.matMul (limit ${MAX_REL_ERROR})`,
      );
    }
  }

  const timings: KernelTiming[] = [];
  for (const p of prepared) {
    log(`${s.name}: timing ${p.o.op}`);
    const ours =
      (a: GpuMatrix): Runner =>
      (reps, spans) => {
        const encoder = device.createCommandEncoder({ label: `bench.${p.o.op}` });
        spans?.mark(encoder, 0);
        for (let i = 0; i < reps; i++) record(encoder, a, p.o, p.m, p.out);
        spans?.mark(encoder, 1);
        device.queue.submit([encoder.finish()]);
      };
    const tfjs: Runner = (reps, spans) => {
      spans?.submitMark(0);
      for (let i = 0; i < reps; i++) denseOp(p).dispose();
      if (spans) {
        flushTfjs();
        spans.submitMark(1);
      }
    };
    const [t, c, d] = (await timeSideBySide(device, timer, [ours(toc), ours(csr), tfjs])) as [Timed, Timed, Timed];
    timings.push({
      batch: s.name,
      op: p.o.op,
      k: p.o.k,
      toc: t.ms,
      csr: c.ms,
      dense: d.ms,
      gpu: timer ? { toc: t.gpuMs!, csr: c.gpuMs!, dense: d.gpuMs! } : undefined,
      reps: { toc: t.reps, csr: c.reps, dense: d.reps },
      trials: { toc: t.trials, csr: c.trials, dense: d.trials },
    });
  }

  for (const p of prepared) {
    p.m.destroy();
    p.out.destroy();
    p.operand.dispose();
  }
  toc.destroy();
  csr.destroy();
  dense.dispose();
  return { info, oneTime, checks, timings };
}

// ------------------------------------------------------------------ end to end

interface Trainer {
  name: TrainingRun['name'];
  /** Trains one epoch over all batches, timed from an idle queue to the epoch's loss read-back. */
  epoch(): Promise<void>;
  /** Reads the trained weights and frees the model. */
  finish(): Promise<Omit<TrainingRun, 'weightError'> & { weights: Float32Array }>;
}

function trainer(
  device: GPUDevice,
  name: TrainingRun['name'],
  firstLayer: (i: number, w: tf.Tensor2D) => tf.Tensor2D,
  labels: tf.Tensor2D[],
  w0: Float32Array,
  cols: number,
  gpuBytes: number,
): Trainer {
  const [w, b] = tf.tidy(() => [tf.variable(tf.tensor2d(w0, [cols, CLASSES])), tf.variable(tf.zeros([CLASSES]))]);
  const optimizer = tf.train.adam(LEARNING_RATE);
  const epochMs: number[] = [];
  const losses: number[] = [];
  return {
    name,
    async epoch() {
      await settle(device);
      const t0 = performance.now();
      let sum = tf.scalar(0);
      for (let i = 0; i < labels.length; i++) {
        const next = tf.tidy(() => {
          const cost = optimizer.minimize(() => tf.losses.softmaxCrossEntropy(labels[i]!, firstLayer(i, w).add(b)) as tf.Scalar, true, [w, b])!;
          return sum.add(cost) as tf.Scalar;
        });
        sum.dispose();
        sum = next;
      }
      // One read per epoch: it waits for all the epoch's steps.
      const total = (await sum.data())[0]!;
      sum.dispose();
      epochMs.push(performance.now() - t0);
      losses.push(total / labels.length);
    },
    async finish() {
      const weights = (await w.data()) as Float32Array;
      tf.dispose([w, b]);
      optimizer.dispose();
      return { name, epochMs, losses, gpuBytes, weights };
    },
  };
}

async function endToEnd(device: GPUDevice, rows: ColumnValuePair[][], allLabels: Uint16Array, cols: number): Promise<EndToEnd> {
  const chunks = Array.from({ length: E2E_BATCHES }, (_, i) => rows.slice(i * ROWS, (i + 1) * ROWS));
  log(`end to end: encoding ${E2E_BATCHES} batches`);
  let t0 = performance.now();
  const logicals = chunks.map((c) => encodePairs(c, cols, 'f32'));
  const encodeMs = performance.now() - t0;
  const frames: TocFrame[] = logicals.map((logical, i) => ({ labels: allLabels.slice(i * ROWS, (i + 1) * ROWS), logical }));
  const { bytes, entries } = writeTocRecord(frames);
  const entry = { file: 'train-00000.tocr', batches: entries };
  const readRecordMs = cpuMedian(3, () => readTocRecord(bytes, entry, { classes: CLASSES, columns: cols }));
  // Train on what the record gives back, as the lab's pipeline does.
  const read = readTocRecord(bytes, entry, { classes: CLASSES, columns: cols });
  t0 = performance.now();
  const built = read.map((f) => {
    const batch = toBatch(f.logical);
    return { batch, layout: tocGpuLayout(batch) };
  });
  const batchLayoutMs = performance.now() - t0;
  const sparse = chunks.map((c) => sparseFromPairs(c, cols, 'f32'));
  const denseData = sparse.map(densify);

  log('end to end: uploads');
  await settle(device);
  t0 = performance.now();
  const toc = built.map(({ batch, layout }) => new TocGpuBatch(device, batch, layout));
  await settle(device);
  const tocUploadMs = performance.now() - t0;
  t0 = performance.now();
  const csr = sparse.map((s) => new CsrGpuBatch(device, s));
  await settle(device);
  const csrUploadMs = performance.now() - t0;
  t0 = performance.now();
  const dense = denseData.map((d) => denseTensor(d, [ROWS, cols]));
  await settle(device);
  const denseUploadMs = performance.now() - t0;

  const labels = read.map((f) => tf.tidy(() => tf.oneHot(tf.tensor1d(Int32Array.from(f.labels), 'int32'), CLASSES).toFloat() as tf.Tensor2D));
  // Glorot-uniform start, the same for all three.
  const random = rng(99);
  const limit = Math.sqrt(6 / (cols + CLASSES));
  const w0 = Float32Array.from({ length: cols * CLASSES }, () => (random() * 2 - 1) * limit);

  const tocInfo = built.map(({ batch, layout }, i) => {
    const { nnz, firstLayer, codes, nodes, levels, tocFileBytes } = batchInfo(`batch ${i}`, read[i]!.logical, batch, layout);
    return { nnz, firstLayer, codes, nodes, levels, tocFileBytes };
  });
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const tensorsBefore = tf.memory().numTensors;
  const trainers = [
    trainer(device, 'TOC', (i, w) => tocMatMul(toc[i]!, w), labels, w0, cols, sum(toc.map((t) => t.uploadBytes))),
    trainer(device, 'CSR', (i, w) => tocMatMul(csr[i]!, w), labels, w0, cols, sum(csr.map((c) => c.uploadBytes))),
    trainer(device, 'dense', (i, w) => tf.matMul(dense[i]!, w), labels, w0, cols, E2E_BATCHES * ROWS * cols * 4),
  ];
  // Epoch by epoch, the three in turn (the order rotating), so they share the state of the machine.
  for (let e = 0; e < EPOCHS; e++) {
    for (let n = 0; n < trainers.length; n++) {
      const t = trainers[(n + e) % trainers.length]!;
      log(`end to end: epoch ${e + 1} of ${EPOCHS}, first layer on ${t.name}`);
      await t.epoch();
    }
  }
  const trained = [];
  for (const t of trainers) trained.push(await t.finish());
  const leakedTensors = tf.memory().numTensors - tensorsBefore;

  const denseWeights = trained[2]!.weights;
  const runs: TrainingRun[] = trained.map(({ weights, ...run }) => ({ ...run, weightError: maxRelError(weights, denseWeights, weights.length) }));
  toc.forEach((t) => t.destroy());
  csr.forEach((c) => c.destroy());
  tf.dispose([...dense, ...labels]);
  return {
    batches: E2E_BATCHES,
    rows: E2E_BATCHES * ROWS,
    cols: cols,
    classes: CLASSES,
    epochs: EPOCHS,
    learningRate: LEARNING_RATE,
    positiveRate: sum(Array.from(allLabels.subarray(0, E2E_BATCHES * ROWS))) / (E2E_BATCHES * ROWS),
    toc: tocInfo,
    tocScratchBytes: sum(tocInfo.map((t) => Math.max(4, t.nodes * CLASSES * 4))),
    encodeMs,
    recordBytes: bytes.length,
    readRecordMs,
    batchLayoutMs,
    uploadMs: { toc: tocUploadMs, csr: csrUploadMs, dense: denseUploadMs },
    runs,
    leakedTensors,
  };
}

// ------------------------------------------------------------------ main

/** The first record (40 batches of 250 rows) of public/datasets/flights-250k-toc, as rows of column:value pairs. */
async function bundledFlights(): Promise<{ rows: ColumnValuePair[][]; labels: Uint16Array; cols: number }> {
  const base = '/datasets/flights-250k-toc/';
  const manifest = validateTocManifest(await (await fetch(`${base}manifest.json`)).json(), 'flights-250k-toc');
  const entry = manifest.splits.train.records[0]!;
  const bytes = new Uint8Array(await (await fetch(base + entry.file)).arrayBuffer());
  const frames = readTocRecord(bytes, entry, { classes: manifest.classes.length, columns: manifest.columns }).slice(0, E2E_BATCHES);
  const rows: ColumnValuePair[][] = [];
  for (const f of frames) {
    const dense = decode(toBatch(f.logical));
    for (let r = 0; r < dense.rows; r++) {
      const row: ColumnValuePair[] = [];
      for (let c = 0; c < dense.cols; c++) if (dense.data[r * dense.cols + c] !== 0) row.push([c, dense.data[r * dense.cols + c]!]);
      rows.push(row);
    }
  }
  const labels = new Uint16Array(frames.flatMap((f) => Array.from(f.labels)));
  return { rows, labels, cols: manifest.columns };
}

async function adapterInfo(device: GPUDevice): Promise<GPUAdapterInfo | undefined> {
  const fromDevice = (device as GPUDevice & { adapterInfo?: GPUAdapterInfo }).adapterInfo;
  if (fromDevice) return fromDevice;
  return (await navigator.gpu.requestAdapter())?.info;
}

async function main(): Promise<BenchResults> {
  const device = await webgpuBackend();
  const gpuErrors: string[] = [];
  device.addEventListener('uncapturederror', (e) => gpuErrors.push((e as GPUUncapturedErrorEvent).error.message));
  const info = await adapterInfo(device);
  const adapter = [info?.vendor, info?.architecture].filter(Boolean).join(' / ') || 'unknown adapter';
  log(`adapter ${adapter}; trials ${TRIALS}, epochs ${EPOCHS}, ~${TARGET_MS} ms per trial`);

  const timer = device.features.has('timestamp-query') && query.get('timestamps') !== '0' ? new SpanTimer(device) : undefined;
  const flightData = flights(E2E_BATCHES * ROWS, 2024);
  const results = { batches: [] as BatchInfo[], oneTime: [] as OneTimeCosts[], checks: [] as CheckResult[], kernels: [] as KernelTiming[] };
  for (const s of subjects(flightData.rows)) {
    const r = await kernelBench(device, timer, s);
    results.batches.push(r.info);
    results.oneTime.push(r.oneTime);
    results.checks.push(...r.checks);
    results.kernels.push(...r.timings);
  }
  // Time per epoch on real flights: the first 40 batches of the bundled flights-250k TOC dataset.
  const real = await bundledFlights();
  const e2e = await endToEnd(device, real.rows, real.labels, real.cols);
  await settle(device);
  log('done');
  return {
    adapter,
    adapterDescription: info?.description ?? '',
    timestampQuery: device.features.has('timestamp-query'),
    gpuTimes: timer !== undefined,
    userAgent: navigator.userAgent,
    crossOriginIsolated: self.crossOriginIsolated,
    trials: TRIALS,
    targetMs: TARGET_MS,
    ...results,
    endToEnd: e2e,
    gpuErrors,
    totalMs: performance.now() - T0,
  };
}

window.__bench = main();
window.__bench
  .then((r) => (document.getElementById('out')!.textContent = JSON.stringify(r, null, 2)))
  .catch((e: Error) => {
    console.error(`bench: failed: ${e.stack ?? e.message}`);
    document.getElementById('out')!.textContent = `failed: ${e.message}`;
  });
