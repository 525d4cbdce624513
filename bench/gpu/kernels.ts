// The TOC kernel benchmark page (bench/gpu/kernels.html), driven by
// bench/toc-kernels.ts. On the WebGPU device tfjs uses it times, side by side:
//   - one-time costs per batch: CPU encoding, the GPU layouts, uploads;
//   - A*v, v*A, A*M and A^T*M (k = 64) with the TOC resolved-runs kernels and the
//     CSR kernels (each with its kernel choices on, and both "basic": one output
//     per invocation, values loaded), the TOC tree kernels and tfjs tf.matMul on
//     the dense batch, after checking that all of them agree;
//   - epochs of logistic regression and of an MLP whose first layer is tocMatMul
//     on TOC runs, tocMatMul on CSR, or tf.matMul on dense tensors.
// Results are a Promise on window.__bench. Query options: trials, epochs, target (ms per trial),
// timestamps=0 (no GPU-side times), only=NAME,.. (batches whose name starts with one of them),
// e2e=logreg,mlp|none (which per-epoch runs), cache=cost|terms|all|none, minSavedShare=F and minSavedPerCode=N (the runs
// layout's caching rule, RunsLayoutOptions; the share and per-code knobs imply the terms rule; default: the lab's cost rule),
// sides=one (the cost rule with one cached set for both products, at session 8's prices RUNS_PRICES_S8: the A/B of session 10),
// fashion=DIR (a TOC build of Fashion-MNIST under public/, e.g. data/fashion-mnist-toc: its first 250 training images
// replace the synthetic MNIST-like digits). The runs layout is built per k, as the lab builds it for its model: k = 1 for
// A*v and v*A, k = 64 for A*M and AT*M; the per-epoch runs use the model's k (2 classes, 64 hidden units).
import * as tf from '@tensorflow/tfjs';
import { adam } from '../../src/gpu/adam.js';
import { webgpuBackend } from '../../src/gpu/backend.js';
import { CsrGpuBatch } from '../../src/gpu/csr.js';
import { readBuffer, storageBuffer } from '../../src/gpu/pipelines.js';
import { rowMajor, TocGpuBatch, type Strides } from '../../src/gpu/toc/kernels.js';
import { tocGpuLayout, type TocGpuLayout } from '../../src/toc/gpu-layout.js';
import { TocRunsGpuBatch } from '../../src/gpu/toc/runs.js';
import { recordAddBias } from '../../src/gpu/bias.js';
import { thinDense } from '../../src/gpu/dense.js';
import { softmaxCrossEntropy } from '../../src/gpu/softmax-ce.js';
import { tocMatMul, type GpuSparseMatrix } from '../../src/gpu/toc/tfjs-op.js';
import { flushTfjs, profileStep, settle, SpanTimer, tfjsBackend, type StepProfile } from './step-profile.js';
import {
  chooseEncoding,
  compareEncodings,
  concatRows,
  frequencyOrder,
  permuteColumns,
  sliceRows,
  sparseFromLogical,
  type ColumnOrder,
  type EncodingCandidate,
} from '../../src/toc/choose.js';
import { readTocRecord, validateTocManifest, writeTocRecord, type TocFrame } from '../../src/toc/dataset.js';
import {
  pricesFor,
  RUNS_PRICES,
  RUNS_PRICES_S8,
  tocRunsLayout,
  type CacheRule,
  type RunsCost,
  type PlainSides,
  type RunsLayoutOptions,
  type RunsWorkModel,
  type TocRunsLayout,
} from '../../src/toc/gpu-runs.js';
import { encodeDense, encodeSparse, encodeToc, sparseFromDense, toBatch, type SparseRows, type TocBatch, type TocLogical } from '../../src/toc/index.js';
import { mnistLike, randomMatrix, rng } from '../../test/unit/toc/generators.js';

// ------------------------------------------------------------------ results

export type OpName = 'A*v' | 'v*A' | 'A*M' | 'AT*M';

/**
 * The implementations compared: TOC resolved runs (TocRunsGpuBatch) and CSR (CsrGpuBatch) with their kernel choices on
 * (quad entry points where k allows, no value loads for unit values), the same two "basic" (one output column per
 * invocation, values loaded: both choices off), TOC tree passes (TocGpuBatch), tf.matMul on dense.
 */
export const IMPLS = ['runs', 'runsPacked', 'runsGather', 'csr', 'runsBasic', 'csrBasic', 'tree', 'dense'] as const;
export type Impl = (typeof IMPLS)[number];
/**
 * runsGather: a diagnostic, not a product. The runs kernels' last step alone (the gather over the same items, k and
 * entry points as runs) on an operand that already has |S| rows after M's, so no copy of M and no run_sums or
 * occurrence_sums dispatch: runs − runsGather is what filling X = [M; H or G] costs. Its output is not A·M (the |S|
 * rows are zeros), so it is timed, not checked.
 */
export type SparseImpl = Exclude<Impl, 'dense' | 'runsGather'>;
/** runsPacked: runs on session 10's layout (plainSides 'none': packed items on a side with nothing cached too), session 11's A/B. */
/**
 * The first layers X * W + b the per-epoch runs compare. runs, csr: tocMatMul with the bias (added, and its
 * gradient taken, by our kernels: the lab's first layer since session 12). dense: tf.fused.matMul with the bias.
 * skip: the first layer left out (a zero output with zero gradients: everything else of the step, Adam on W and
 * b included), the floor under which no first layer can take an epoch; its loss and weights are not the others'.
 * All take the lab's loss (softmaxCrossEntropy) and, in the MLP, its output layer (thinDense), our kernels since
 * session 13, and its Adam (src/gpu/adam.ts) since session 14, except runsTfjsRest: the runs layer with tfjs's
 * tf.losses.softmaxCrossEntropy, tf.fused.matMul as the output layer (as tf.layers.dense computes it) and tf.train.adam,
 * the lab before session 13. runsBiasPass: runs with the bias (and ReLU) added by a pass of their own after the forward
 * product, as the lab did before session 34 (now the runs and CSR gathers add them as they store). csrAgain: the csr
 * trainer once more (its own weights, optimiser and timer on the same batches), an A/A control: its ratio to csr is what
 * the bench's noise and turn order alone make of two equal first layers.
 */
export const E2E_IMPLS = ['runs', 'runsBiasPass', 'runsTfjsRest', 'csr', 'csrAgain', 'dense', 'skip'] as const;
export type E2eImpl = (typeof E2E_IMPLS)[number];

/** Shape and TOC structure of one batch. */
export interface BatchInfo {
  name: string;
  /** Where the rows come from and how they were encoded (batch size, column order). */
  source: string;
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
  /** The resolved-runs layout the A*M and AT*M products use (k = 64): work model (terms per output column vs nnz). */
  model: RunsWorkModel;
  indexBits: number;
  /** The layout per k the products use (k = 1: A*v, v*A; k = 64: A*M, AT*M): what the rule cached, and runsCost's prediction. */
  layouts: Array<{ k: number; model: RunsWorkModel; cost: RunsCost }>;
}

/** One-time costs of one batch, each the median of several runs. */
export interface OneTimeCosts {
  name: string;
  encodeMs: number;
  /** What encodeMs measured: encodeDense or encodePairs. */
  encodeWith: string;
  /** toBatch + tocGpuLayout (tree), toBatch + tocRunsLayout (runs). */
  batchLayoutMs: number;
  runsLayoutMs: number;
  tocBytes: number;
  tocUploadMs: number;
  runsBytes: number;
  runsUploadMs: number;
  /** Includes building the CSC copy on the CPU (CsrGpuBatch does it in its constructor). */
  csrBytes: number;
  csrUploadMs: number;
  denseBytes: number;
  denseUploadMs: number;
}

export interface CheckResult {
  batch: string;
  op: OpName;
  /** max |x - dense| / (1 + |dense|) over all outputs, per sparse implementation. */
  errors: Record<SparseImpl, number>;
}

export interface KernelTiming {
  batch: string;
  op: OpName;
  k: number;
  /** ms per operation: median over trials of (trial time / repetitions). */
  ms: Record<Impl, number>;
  /** GPU-side ms per operation from timestamp-query, when the device has it (see SpanTimer). */
  gpu: Record<Impl, number> | undefined;
  reps: Record<Impl, number>;
  /** Wall-clock ms per operation of each round; a round runs every implementation in turn. */
  trials: Record<Impl, number[]>;
  /** GPU-side ms per operation of each round (timestamp-query), when available. */
  gpuTrials: Record<Impl, number[]> | undefined;
}

export interface TrainingRun {
  name: E2eImpl;
  /** Wall-clock ms of each epoch; the first includes pipeline compilation. */
  epochMs: number[];
  /** Mean training loss (softmax cross-entropy) of each epoch. */
  losses: number[];
  /** Bytes of the batches kept on the GPU in this representation (labels not counted). */
  gpuBytes: number;
  /** max |W - W_dense| / (1 + |W_dense|) over the trained weights (0 for dense itself). */
  weightError: number;
  /** One more step under tf.profile after the epochs: tfjs's kernels by name, GPU ms summed (our kernels are not in it). */
  profile: StepProfile;
  /**
   * GPU-side ms of each epoch's first-layer products inside training (ProductTimer): A·M of the forward and Aᵀ·M of the
   * gradient, summed over the epoch's batches. For the tocMatMul runs only, with timestamp-query.
   */
  products?: { forward: number[]; gradient: number[] };
}

export interface EndToEnd {
  model: 'logreg' | 'mlp';
  /** The bundled dataset whose first record it trains on, and the rows per batch. */
  dataset: string;
  batchRows: number;
  /** Units of the first layer (the classes for logistic regression, the hidden units of the MLP): k of its products. */
  units: number;
  columnOrder: ColumnOrder;
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
  /** Bytes of the X = [M; H or G] buffers the runs kernels keep for all batches (made on the GPU, not uploaded). */
  runsScratchBytes: number;
  models: RunsWorkModel[];
  /** One-time CPU costs for all 40 batches together. */
  encodeMs: number;
  recordBytes: number;
  readRecordMs: number;
  batchLayoutMs: number;
  runsLayoutMs: number;
  /** Upload of all batches together. */
  uploadMs: Record<E2eImpl, number>;
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
  /** Name prefixes the batches were limited to (empty: all). */
  only: string[];
  /** The runs layout's caching rule where the query set it (empty: the lab's defaults). */
  layoutOptions: RunsLayoutOptions;
  /** The cost rule's prices (src/toc/gpu-runs.ts RUNS_PRICES) this run's layouts and predictions used. */
  prices: typeof RUNS_PRICES;
  batches: BatchInfo[];
  oneTime: OneTimeCosts[];
  checks: CheckResult[];
  kernels: KernelTiming[];
  /** The forward with its bias added as the gather stores (session 34) against the product and a bias pass after it. */
  fusedBias: FusedBiasTiming[];
  /** The encoding candidates compared per real table, and the one chosen. */
  encodings: Array<{ table: string; candidates: EncodingCandidate[]; chosen: EncodingCandidate }>;
  endToEnd: EndToEnd[];
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
const ONLY = (query.get('only') ?? '').split(',').filter(Boolean);
const LAYOUT_OPTIONS: RunsLayoutOptions = {
  ...(query.has('cache') ? { cache: query.get('cache') as CacheRule } : query.has('minSavedShare') || query.has('minSavedPerCode') ? { cache: 'terms' } : {}),
  // sides=one: session 8's rule, one cached set for both products chosen at its prices (RUNS_PRICES_S8), for A/B runs.
  ...(query.get('sides') === 'one' ? { sides: 'one' as const } : {}),
  ...(query.has('minSavedShare') ? { minSavedShare: Number(query.get('minSavedShare')) } : {}),
  ...(query.has('minSavedPerCode') ? { minSavedPerCode: Number(query.get('minSavedPerCode')) } : {}),
  // plain=unit|all|none: which sides with nothing cached are plain (the reports of session 11 ran 'all').
  ...(query.has('plain') ? { plainSides: query.get('plain') as PlainSides } : {}),
};
/** The runs layout for products with k output columns, as the lab builds it for a model with that first-layer width. */
const layoutFor = (batch: TocBatch, k: number, extra: RunsLayoutOptions = {}): TocRunsLayout =>
  tocRunsLayout(batch, { ...LAYOUT_OPTIONS, k, ...(LAYOUT_OPTIONS.sides === 'one' ? { prices: pricesFor(k, RUNS_PRICES_S8) } : {}), ...extra });
/** Session 10's layout: packed items on every side (the A/B of session 11's plain sides). */
const PACKED: RunsLayoutOptions = { plainSides: 'none' };
const E2E_MODELS = (query.get('e2e') ?? 'logreg,mlp').split(',').filter((m): m is 'logreg' | 'mlp' => m === 'logreg' || m === 'mlp');
// Enough epochs that the per-epoch ratios have a spread (epoch 1 compiles pipelines and is left out).
const EPOCHS = Math.max(2, Math.round(option('epochs', 8)));
/** Wall-clock time one timed trial aims at; repetitions per trial follow from it. */
const TARGET_MS = option('target', 100);
const MAX_REPS = 400;
const CPU_RUNS = 5;
const UPLOAD_RUNS = 5;
const ROWS = 250;
const K = 64;
/**
 * Per-epoch data (session 11): e2eData=flights|birdstrikes (the first record of the bundled dataset), e2eRows=N rows per
 * batch (default 250), e2eOrder=frequency|source; batches: 40 of 250 rows (10,000 rows, sessions 4-10's epoch), or as many
 * whole batches of e2eRows as that many rows hold (flights 2000: 5), or as the record holds when it has fewer.
 */
const E2E_DATA = query.get('e2eData') === 'birdstrikes' ? 'birdstrikes' : 'flights';
const E2E_ROWS = Math.round(option('e2eRows', 250));
const E2E_ORDER: ColumnOrder = query.get('e2eOrder') === 'source' ? 'source' : 'frequency';
const E2E_EPOCH_ROWS = 10_000;
/** Classes of the flights label (delay > 15 min or not); birdstrikes takes its manifest's. */
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

/**
 * GPU-side time of a first layer's products inside training: an empty timestamp pass before and after each product in
 * tocMatMul's own command encoder (A·M in the forward, Aᵀ·M in the gradient), summed per epoch. The rest of the step is
 * the same for TOC and CSR; these spans are the part that differs, and they do not carry the wall clock's waits for the
 * CPU (another process on the machine, tfjs's scheduling) that make an epoch's wall time swing by half.
 */
class ProductTimer {
  /** Query pairs per epoch: 2 products per batch, 40 batches at most in the per-epoch runs. */
  private static readonly PAIRS = 256;
  private readonly querySet: GPUQuerySet;
  private readonly resolved: GPUBuffer;
  private readonly readback: GPUBuffer;
  /** Which product each recorded pair timed, in order; the pairs past the epoch's end (the profiled step) are dropped. */
  private kinds: Array<'forward' | 'gradient'> = [];
  readonly forward: number[] = [];
  readonly gradient: number[] = [];

  constructor(private readonly device: GPUDevice) {
    const bytes = ProductTimer.PAIRS * 16;
    this.querySet = device.createQuerySet({ label: 'bench.products', type: 'timestamp', count: 2 * ProductTimer.PAIRS });
    this.resolved = device.createBuffer({ label: 'bench.products.resolved', size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.readback = device.createBuffer({ label: 'bench.products.readback', size: bytes, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  }

  /** `a` with each product between two timestamp passes. */
  wrap(a: GpuSparseMatrix): GpuSparseMatrix {
    return {
      rows: a.rows,
      cols: a.cols,
      times: (encoder, m, k, out, ms, rs) => this.span(encoder, 'forward', () => a.times(encoder, m, k, out, ms, rs)),
      transposeTimes: (encoder, m, k, out, ms, rs) => this.span(encoder, 'gradient', () => a.transposeTimes(encoder, m, k, out, ms, rs)),
      // The forward with its bias (and ReLU) in the product's pass: the span holds them (a pass of their own is outside it).
      timesAddBias:
        a.timesAddBias && ((encoder, m, k, out, bias, relu) => this.span(encoder, 'forward', () => a.timesAddBias!(encoder, m, k, out, bias, relu))),
    };
  }

  private span(encoder: GPUCommandEncoder, kind: 'forward' | 'gradient', record: () => void): void {
    const i = this.kinds.length;
    if (i >= ProductTimer.PAIRS) {
      record(); // more products than an epoch of the per-epoch runs has: not timed
      return;
    }
    encoder.beginComputePass({ label: 'bench.products', timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: 2 * i } }).end();
    record();
    encoder.beginComputePass({ label: 'bench.products', timestampWrites: { querySet: this.querySet, endOfPassWriteIndex: 2 * i + 1 } }).end();
    this.kinds.push(kind);
  }

  /** Reads the epoch's spans (after its steps were submitted) and sums them by product. */
  async endEpoch(): Promise<void> {
    const pairs = this.kinds.length;
    const sums = { forward: 0, gradient: 0 };
    if (pairs > 0) {
      const encoder = this.device.createCommandEncoder({ label: 'bench.products' });
      encoder.resolveQuerySet(this.querySet, 0, 2 * pairs, this.resolved, 0);
      encoder.copyBufferToBuffer(this.resolved, 0, this.readback, 0, 16 * pairs);
      this.device.queue.submit([encoder.finish()]);
      await this.readback.mapAsync(GPUMapMode.READ, 0, 16 * pairs);
      const stamps = new BigUint64Array(this.readback.getMappedRange(0, 16 * pairs).slice(0));
      this.readback.unmap();
      for (let i = 0; i < pairs; i++) {
        const [start, end] = [stamps[2 * i]!, stamps[2 * i + 1]!];
        if (end > start) sums[this.kinds[i]!] += Number(end - start) / 1e6; // a pair the GPU left unwritten adds nothing, as in PassTimer
      }
    }
    this.forward.push(sums.forward);
    this.gradient.push(sums.gradient);
    this.kinds = [];
  }

  destroy(): void {
    this.querySet.destroy();
    this.resolved.destroy();
    this.readback.destroy();
  }
}

/** A dense tensor moved to the GPU now (tfjs otherwise uploads on first use). */
function denseTensor(data: Float32Array, shape: [number, number]): tf.Tensor2D {
  const t = tf.tensor2d(data, shape);
  tfjsBackend().uploadToGPU(t.dataId);
  return t;
}

// ------------------------------------------------------------------ data

function densify(s: SparseRows): Float32Array {
  const out = new Float32Array(s.rows * s.cols);
  for (let r = 0; r < s.rows; r++) for (let p = s.rowPtr[r]!; p < s.rowPtr[r + 1]!; p++) out[r * s.cols + s.colIndex[p]!] = s.values[p]!;
  return out;
}

/** One batch of the kernel benchmark. */
interface Subject {
  name: string;
  source: string;
  rows: number;
  cols: number;
  dense: Float32Array;
  sparse: SparseRows;
  encodeWith: string;
  encode: () => TocLogical;
}

function fromSparse(name: string, source: string, sparse: SparseRows): Subject {
  return { name, source, rows: sparse.rows, cols: sparse.cols, dense: densify(sparse), sparse, encodeWith: 'encodeSparse', encode: () => encodeSparse(sparse) };
}

/** Rows of the large batch every real table is timed at (in frequency order), whatever the chooser picks. */
const LARGE_ROWS = 2000;

/**
 * A real table's first batch at 250 rows in source order, its first 2000 rows in frequency order (always: the batch
 * with the most reuse, timed in every session since 4), and its first batch in the encoding chooseEncoding picks when
 * that is neither.
 */
function realSubjects(name: string, table: SparseRows, chosen: EncodingCandidate): Subject[] {
  const ordered = (order: ColumnOrder) => (order === 'source' ? table : permuteColumns(table, frequencyOrder(table)));
  const isChosen = (rows: number, order: ColumnOrder) => (chosen.batchRows === rows && chosen.columnOrder === order ? ' (chosen)' : '');
  const subject = (rows: number, order: ColumnOrder, name: string) =>
    fromSparse(name, `first ${rows} rows, ${order} column order${isChosen(rows, order)}`, sliceRows(ordered(order), 0, Math.min(rows, table.rows)));
  const out = [subject(ROWS, 'source', `${name} ${ROWS}`), subject(LARGE_ROWS, 'frequency', `${name} ${LARGE_ROWS} frequency`)];
  if (!out.some((s) => s.source.endsWith('(chosen)')))
    out.push(subject(chosen.batchRows, chosen.columnOrder, `${name} ${chosen.batchRows} ${chosen.columnOrder}`));
  return out;
}

/** The synthetic batches; MNIST-like digits only when no real Fashion-MNIST is given. */
function syntheticSubjects(withDigits: boolean): Subject[] {
  const mnist = mnistLike(ROWS, 3);
  const randomCols = 1000;
  const random = Float32Array.from(randomMatrix(rng(21), { rows: ROWS, cols: randomCols, density: 0.05, distinctValues: 4 }, 'f32'));
  const digits: Subject[] = [
    {
      name: 'mnist-like 250',
      source: 'synthetic digits (mnistLike)',
      rows: ROWS,
      cols: 784,
      dense: mnist,
      sparse: sparseFromDense(mnist, ROWS, 784),
      encodeWith: 'encodeDense',
      encode: () => encodeDense(mnist, ROWS, 784),
    },
  ];
  return [
    ...(withDigits ? digits : []),
    {
      name: 'sparse random 250',
      source: 'randomMatrix, density 0.05, 4 values',
      rows: ROWS,
      cols: randomCols,
      dense: random,
      sparse: sparseFromDense(random, ROWS, randomCols),
      encodeWith: 'encodeDense',
      encode: () => encodeDense(random, ROWS, randomCols),
    },
  ];
}

function batchInfo(
  name: string,
  source: string,
  logical: TocLogical,
  batch: TocBatch,
  layout: TocGpuLayout,
  runs: TocRunsLayout,
  more: TocRunsLayout[] = [],
): BatchInfo {
  return {
    name,
    source,
    rows: batch.rows,
    cols: batch.cols,
    nnz: runs.model.nnz,
    firstLayer: batch.firstLayerSize,
    codes: batch.codes.length,
    nodes: batch.nodeCount,
    levels: layout.levels,
    tocFileBytes: encodeToc(logical, { valueType: 'f32' }).length,
    model: runs.model,
    indexBits: runs.indexBits,
    layouts: [...more, runs].map((l) => ({ k: l.k, model: l.model, cost: l.cost })),
  };
}

// ------------------------------------------------------------------ the four products

interface OpSpec {
  op: OpName;
  k: number;
  /** A^T * M (v*A, M*A) rather than A * M. */
  transpose: boolean;
  /** Shape of the dense operand as tfjs sees it, and the same product with tf.matMul on the dense A. */
  shape: [number, number];
  dense: (a: tf.Tensor2D, operand: tf.Tensor2D) => tf.Tensor2D;
  outLength: number;
  ms: Strides;
  rs: Strides;
}

function opSpecs(rows: number, cols: number): OpSpec[] {
  return [
    { op: 'A*v', k: 1, transpose: false, shape: [cols, 1], dense: (a, v) => tf.matMul(a, v), outLength: rows, ms: rowMajor(1), rs: rowMajor(1) },
    { op: 'v*A', k: 1, transpose: true, shape: [1, rows], dense: (a, v) => tf.matMul(v, a), outLength: cols, ms: rowMajor(1), rs: rowMajor(1) },
    { op: 'A*M', k: K, transpose: false, shape: [cols, K], dense: (a, m) => tf.matMul(a, m), outLength: rows * K, ms: rowMajor(K), rs: rowMajor(K) },
    // A^T * M with M rows x k, row-major: the first layer's weight gradient A^T dZ as the lab computes it.
    { op: 'AT*M', k: K, transpose: true, shape: [rows, K], dense: (a, m) => tf.matMul(a, m, true), outLength: cols * K, ms: rowMajor(K), rs: rowMajor(K) },
  ];
}

type GpuMatrix = TocRunsGpuBatch | TocGpuBatch | CsrGpuBatch;

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

/** The forward A·v + b and relu(A·M + b), bias in the gather (fused) or in a pass after the product, on runs and CSR. */
export const FUSED_VARIANTS = ['runsFused', 'runsPass', 'csrFused', 'csrPass'] as const;
export type FusedVariant = (typeof FUSED_VARIANTS)[number];

export interface FusedBiasTiming {
  batch: string;
  op: 'A*v+b' | 'relu(A*M+b)';
  k: number;
  /** GPU-side (wall clock without timestamp-query) ms per operation, per round. */
  trials: Record<FusedVariant, number[]>;
  gpuSide: boolean;
}

/** Records and submits (our kernels) or issues (tfjs) `reps` operations, between the timer's marks if given. */
type Runner = (reps: number, timer?: SpanTimer) => void;

interface Timed {
  /** ms per operation of each round, wall clock and (with timestamp-query) GPU side. */
  trials: number[];
  gpuTrials: number[] | undefined;
  ms: number;
  gpuMs: number | undefined;
  reps: number;
}

/**
 * The order of one round's turns, shuffled (seeded): a rotation keeps each turn behind the same one, and whatever the
 * one before leaves (a busy queue, a long epoch's garbage) falls on it every round (session 34).
 */
function shuffledTurns(n: number, random: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * Times implementations of one operation side by side: an untimed warm-up of
 * each, a calibration run that picks each one's reps so a trial takes about
 * TARGET_MS, then TRIALS rounds in which every implementation runs one trial in
 * turn (the order shuffled each round), so all of them see the same state of the machine.
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
  const turns = rng(341);
  for (let t = 0; t < TRIALS; t++) {
    for (const i of shuffledTurns(runs.length, turns)) {
      const t0 = performance.now();
      runs[i]!(reps[i]!, timer);
      await settle(device);
      times[i]!.push((performance.now() - t0) / reps[i]!);
      if (timer) spans[i]!.push((await timer.spanMs()) / reps[i]!);
    }
  }
  return runs.map((_, i) => ({
    trials: times[i]!,
    gpuTrials: timer ? spans[i]! : undefined,
    ms: median(times[i]!),
    gpuMs: timer ? median(spans[i]!) : undefined,
    reps: reps[i]!,
  }));
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
): Promise<{ info: BatchInfo; oneTime: OneTimeCosts; checks: CheckResult[]; timings: KernelTiming[]; fusedBias: FusedBiasTiming[] }> {
  log(`${s.name}: encoding`);
  const logical = s.encode();
  const encodeMs = cpuMedian(CPU_RUNS, s.encode);
  const batch = toBatch(logical);
  const layout = tocGpuLayout(batch);
  // One runs layout per k, as the lab makes one for its model's k: k = 1 for A*v and v*A, K for A*M and AT*M.
  const runsLayout = layoutFor(batch, K);
  const runsLayout1 = layoutFor(batch, 1);
  const batchLayoutMs = cpuMedian(CPU_RUNS, () => tocGpuLayout(toBatch(logical)));
  const runsLayoutMs = cpuMedian(CPU_RUNS, () => layoutFor(toBatch(logical), K));
  const info = batchInfo(s.name, s.source, logical, batch, layout, runsLayout, [runsLayout1]);
  if (info.nnz !== s.sparse.colIndex.length) throw new Error(`${s.name}: TOC batch holds ${info.nnz} non-zeros, the sparse rows ${s.sparse.colIndex.length}`);

  log(`${s.name}: uploads`);
  const runsUploadMs = await timeUpload(
    device,
    () => new TocRunsGpuBatch(device, batch, runsLayout),
    (x) => x.destroy(),
  );
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
  const basic = { quad: false, unit: false };
  /** The runs forms on one k's layout; runsGather, told nothing is cached, gathers straight from [M; zeros for H or G] below. */
  const runsForms = (l: TocRunsLayout) => ({
    layout: l,
    runs: new TocRunsGpuBatch(device, batch, l),
    runsPacked: new TocRunsGpuBatch(device, batch, layoutFor(batch, l.k, PACKED)),
    runsBasic: new TocRunsGpuBatch(device, batch, l, basic),
    // The packed items of a cached side, gathered as if nothing were cached (a plain side is already its own gather).
    runsGather: new TocRunsGpuBatch(device, batch, { ...l, rowCached: 0, colCached: 0 }),
  });
  const byK = new Map([
    [1, runsForms(runsLayout1)],
    [K, runsForms(runsLayout)],
  ]);
  const runs = byK.get(K)!.runs;
  const csrBasic = new CsrGpuBatch(device, s.sparse, basic);
  const dense = denseTensor(s.dense, [s.rows, s.cols]);
  const oneTime: OneTimeCosts = {
    name: s.name,
    encodeMs,
    encodeWith: s.encodeWith,
    batchLayoutMs,
    runsLayoutMs,
    tocBytes: toc.uploadBytes,
    tocUploadMs,
    runsBytes: runs.uploadBytes,
    runsUploadMs,
    csrBytes: csr.uploadBytes,
    csrUploadMs,
    denseBytes: s.rows * s.cols * 4,
    denseUploadMs,
  };

  const random = rng(7);
  const specs = opSpecs(s.rows, s.cols);
  const prepared = specs.map((o) => {
    const data = Float32Array.from({ length: o.shape[0] * o.shape[1] }, () => random() * 2 - 1);
    const forms = byK.get(o.k)!;
    return {
      o,
      forms,
      // COPY_SRC as tfjs's own buffers have it (the runs kernels copy M into X = [M; H] when they can).
      m: storageBuffer(device, `bench.${o.op}.m`, data, GPUBufferUsage.COPY_SRC),
      mx: storageBuffer(
        device,
        `bench.${o.op}.mx`,
        Float32Array.from({ length: data.length + (o.transpose ? forms.layout.colCached : forms.layout.rowCached) * o.k }, (_, i) => data[i] ?? 0),
      ),
      out: device.createBuffer({ label: `bench.${o.op}.out`, size: Math.max(4, o.outLength * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC }),
      operand: denseTensor(data, o.shape),
    };
  });
  const denseOp = (p: (typeof prepared)[number]): tf.Tensor2D => p.o.dense(dense, p.operand);

  log(`${s.name}: checking TOC (runs, tree) and CSR against tf.matMul`);
  const checks: CheckResult[] = [];
  for (const p of prepared) {
    const sparseImpls: Record<SparseImpl, GpuMatrix> = {
      runs: p.forms.runs,
      runsPacked: p.forms.runsPacked,
      csr,
      runsBasic: p.forms.runsBasic,
      csrBasic,
      tree: toc,
    };
    const want = denseOp(p);
    const expected = await want.data();
    want.dispose();
    const errors = {} as Record<SparseImpl, number>;
    for (const [impl, a] of Object.entries(sparseImpls) as [SparseImpl, GpuMatrix][]) {
      const encoder = device.createCommandEncoder({ label: `bench.check.${p.o.op}` });
      record(encoder, a, p.o, p.m, p.out);
      device.queue.submit([encoder.finish()]);
      errors[impl] = maxRelError(await readBuffer(device, p.out), expected, p.o.outLength);
    }
    checks.push({ batch: s.name, op: p.o.op, errors });
    if (Object.values(errors).some((e) => !(e <= MAX_REL_ERROR))) {
      throw new Error(`${s.name} ${p.o.op}: errors against tf.matMul ${JSON.stringify(errors)} (limit ${MAX_REL_ERROR})`);
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
    const runners: Record<Impl, Runner> = {
      runs: ours(p.forms.runs),
      runsPacked: ours(p.forms.runsPacked),
      runsGather: (reps, spans) => {
        const encoder = device.createCommandEncoder({ label: `bench.${p.o.op}.gather` });
        spans?.mark(encoder, 0);
        for (let i = 0; i < reps; i++) record(encoder, p.forms.runsGather, p.o, p.mx, p.out);
        spans?.mark(encoder, 1);
        device.queue.submit([encoder.finish()]);
      },
      csr: ours(csr),
      runsBasic: ours(p.forms.runsBasic),
      csrBasic: ours(csrBasic),
      tree: ours(toc),
      dense: tfjs,
    };
    const timed = await timeSideBySide(
      device,
      timer,
      IMPLS.map((impl) => runners[impl]),
    );
    const per = <T>(f: (t: Timed) => T): Record<Impl, T> => Object.fromEntries(IMPLS.map((impl, i) => [impl, f(timed[i]!)])) as Record<Impl, T>;
    timings.push({
      batch: s.name,
      op: p.o.op,
      k: p.o.k,
      ms: per((t) => t.ms),
      gpu: timer ? per((t) => t.gpuMs!) : undefined,
      reps: per((t) => t.reps),
      trials: per((t) => t.trials),
      gpuTrials: timer ? per((t) => t.gpuTrials!) : undefined,
    });
  }

  // The lab's first layer forward (session 34): its bias (and ReLU) added as the gather stores, against the product and then
  // bias.wgsl's pass (the lab before). Checked to give the same bits first, then timed side by side like the products.
  const fusedBias: FusedBiasTiming[] = [];
  for (const p of prepared.filter((x) => x.o.op === 'A*v' || x.o.op === 'A*M')) {
    const relu = p.o.op === 'A*M';
    const op = relu ? 'relu(A*M+b)' : 'A*v+b';
    log(`${s.name}: timing ${op}, bias in the gather or in a pass`);
    const bias = storageBuffer(
      device,
      `bench.${op}.bias`,
      Float32Array.from({ length: p.o.k }, () => random() * 2 - 1),
    );
    const forward = (a: TocRunsGpuBatch | CsrGpuBatch, fused: boolean) => (encoder: GPUCommandEncoder) => {
      if (fused) a.timesAddBias(encoder, p.m, p.o.k, p.out, bias, relu);
      else {
        a.times(encoder, p.m, p.o.k, p.out);
        recordAddBias(device, encoder, p.out, bias, p.o.outLength / p.o.k, p.o.k, relu);
      }
    };
    const variants: Record<FusedVariant, (encoder: GPUCommandEncoder) => void> = {
      runsFused: forward(p.forms.runs, true),
      runsPass: forward(p.forms.runs, false),
      csrFused: forward(csr, true),
      csrPass: forward(csr, false),
    };
    const outputs: Float32Array[] = [];
    for (const v of FUSED_VARIANTS) {
      const encoder = device.createCommandEncoder({ label: `bench.check.${op}` });
      encoder.clearBuffer(p.out); // a variant that wrote nothing must not pass on the one before's output
      variants[v](encoder);
      device.queue.submit([encoder.finish()]);
      outputs.push(await readBuffer(device, p.out, p.o.outLength * 4));
    }
    // The same bits within each format (the gather's sum, then the same f32 add and select); runs and CSR sum alike here too.
    for (const [a, b] of [
      [0, 1],
      [2, 3],
    ] as const) {
      if (!outputs[a]!.every((x, i) => Object.is(x, outputs[b]![i]))) throw new Error(`${s.name} ${op}: ${FUSED_VARIANTS[a]} and ${FUSED_VARIANTS[b]} differ`);
    }
    const timed = await timeSideBySide(
      device,
      timer,
      FUSED_VARIANTS.map(
        (v): Runner =>
          (reps, spans) => {
            const encoder = device.createCommandEncoder({ label: `bench.${op}.${v}` });
            spans?.mark(encoder, 0);
            for (let i = 0; i < reps; i++) variants[v](encoder);
            spans?.mark(encoder, 1);
            device.queue.submit([encoder.finish()]);
          },
      ),
    );
    fusedBias.push({
      batch: s.name,
      op,
      k: p.o.k,
      trials: Object.fromEntries(FUSED_VARIANTS.map((v, i) => [v, timed[i]!.gpuTrials ?? timed[i]!.trials])) as Record<FusedVariant, number[]>,
      gpuSide: timer !== undefined,
    });
    bias.destroy();
  }

  for (const p of prepared) {
    p.m.destroy();
    p.mx.destroy();
    p.out.destroy();
    p.operand.dispose();
  }
  for (const f of byK.values()) for (const x of [f.runs, f.runsPacked, f.runsBasic, f.runsGather]) x.destroy();
  for (const x of [csr, csrBasic, toc]) x.destroy();
  dense.dispose();
  return { info, oneTime, checks, timings, fusedBias };
}

// ------------------------------------------------------------------ end to end

const HIDDEN = 64;

interface Trainer {
  name: E2eImpl;
  /** Trains one epoch over all batches, timed from an idle queue to the epoch's loss read-back. */
  epoch(): Promise<void>;
  /** Reads the trained first-layer weights, profiles one more step and frees the model. */
  finish(): Promise<Omit<TrainingRun, 'weightError'> & { weights: Float32Array }>;
}

/** Starting weights shared by every run of one model: Glorot-uniform, seeded. */
/** Each batch's labels as class ids (the lab's loss) and one-hot (tfjs's). */
interface BatchLabels {
  ids: tf.Tensor1D[];
  oneHot: tf.Tensor2D[];
}

interface StartWeights {
  w: Float32Array;
  /** MLP only: hidden x classes. */
  w2?: Float32Array;
}

function trainer(
  device: GPUDevice,
  name: E2eImpl,
  firstLayer: (i: number, w: tf.Tensor2D, b: tf.Tensor1D, activation: 'linear' | 'relu') => tf.Tensor2D,
  labels: BatchLabels,
  start: StartWeights,
  cols: number,
  units: number,
  gpuBytes: number,
  classes: number,
  timer?: ProductTimer,
): Trainer {
  const vars = tf.tidy(() => {
    const v = [tf.variable(tf.tensor2d(start.w, [cols, units])), tf.variable(tf.zeros([units]))];
    if (start.w2) v.push(tf.variable(tf.tensor2d(start.w2, [units, classes])), tf.variable(tf.zeros([classes])));
    return v;
  });
  const [w, b, w2, b2] = vars as [tf.Variable<tf.Rank.R2>, tf.Variable<tf.Rank.R1>, tf.Variable<tf.Rank.R2>?, tf.Variable<tf.Rank.R1>?];
  const logits = (i: number): tf.Tensor2D => {
    if (!w2) return firstLayer(i, w, b, 'linear');
    // The output layer as the lab computes it (thinDense) after a hidden layer with its ReLU fused (session 15), or as
    // tf.layers.dense did before session 13 (tf.relu, then a fused matMul with its bias).
    if (name === 'runsTfjsRest') return tf.fused.matMul({ a: tf.relu(firstLayer(i, w, b, 'linear')), b: w2, bias: b2 }) as tf.Tensor2D;
    return thinDense(firstLayer(i, w, b, 'relu'), w2, b2!);
  };
  const loss = (i: number): tf.Scalar =>
    name === 'runsTfjsRest' ? (tf.losses.softmaxCrossEntropy(labels.oneHot[i]!, logits(i)) as tf.Scalar) : softmaxCrossEntropy(logits(i), labels.ids[i]!);
  const step = (i: number) => optimizer.minimize(() => loss(i), true, vars)!;
  // The lab's Adam (one dispatch per variable, src/gpu/adam.ts) since session 14; the lab before it took tfjs's.
  const optimizer = name === 'runsTfjsRest' ? tf.train.adam(LEARNING_RATE) : adam(LEARNING_RATE);
  const epochMs: number[] = [];
  const losses: number[] = [];
  return {
    name,
    async epoch() {
      await settle(device);
      const t0 = performance.now();
      let sum = tf.scalar(0);
      for (let i = 0; i < labels.ids.length; i++) {
        const next = tf.tidy(() => {
          const cost = step(i);
          return sum.add(cost) as tf.Scalar;
        });
        sum.dispose();
        sum = next;
      }
      // One read per epoch: it waits for all the epoch's steps.
      const total = (await sum.data())[0]!;
      sum.dispose();
      epochMs.push(performance.now() - t0);
      losses.push(total / labels.ids.length);
      await timer?.endEpoch(); // after the wall clock stops: its read-back is not the epoch's
    },
    async finish() {
      const weights = (await w.data()) as Float32Array;
      const profile = await profileStep(device, () => step(0));
      tf.dispose(vars);
      optimizer.dispose();
      timer?.destroy();
      const products = timer && { forward: timer.forward, gradient: timer.gradient };
      return { name, epochMs, losses, gpuBytes, weights, profile, products };
    },
  };
}

/**
 * Trains `model` on the batches of `table` (ROWS rows each) with the first layer on
 * each representation (E2E_IMPLS), taking turns epoch by epoch.
 */
async function endToEnd(
  device: GPUDevice,
  model: 'logreg' | 'mlp',
  table: SparseRows,
  allLabels: Uint16Array,
  columnOrder: ColumnOrder,
  dataset: string,
  classes: number,
): Promise<EndToEnd> {
  const cols = table.cols;
  const batches = Math.min(Math.floor(E2E_EPOCH_ROWS / E2E_ROWS), Math.floor(table.rows / E2E_ROWS));
  const units = model === 'mlp' ? HIDDEN : classes;
  const chunks = Array.from({ length: batches }, (_, i) => sliceRows(table, i * E2E_ROWS, (i + 1) * E2E_ROWS));
  log(`end to end (${model}): encoding ${batches} batches`);
  let t0 = performance.now();
  const logicals = chunks.map((c) => encodeSparse(c));
  const encodeMs = performance.now() - t0;
  const frames: TocFrame[] = logicals.map((logical, i) => ({ labels: allLabels.slice(i * E2E_ROWS, (i + 1) * E2E_ROWS), logical }));
  const { bytes, entries } = writeTocRecord(frames);
  const entry = { file: 'train-00000.tocr', batches: entries };
  const readRecordMs = cpuMedian(3, () => readTocRecord(bytes, entry, { classes: classes, columns: cols }));
  // Train on what the record gives back, as the lab's pipeline does.
  const read = readTocRecord(bytes, entry, { classes: classes, columns: cols });
  t0 = performance.now();
  const built = read.map((f) => {
    const batch = toBatch(f.logical);
    return { batch, layout: tocGpuLayout(batch) };
  });
  const batchLayoutMs = performance.now() - t0;
  t0 = performance.now();
  // Laid out for the model's k (its first layer's units), as the lab's pipeline does (PipelineOptions.tocColumns).
  const runsLayouts = built.map(({ batch }) => layoutFor(batch, units));
  const runsLayoutMs = performance.now() - t0;
  const denseData = chunks.map(densify);

  log(`end to end (${model}): uploads`);
  const uploadMs = {} as Record<E2eImpl, number>;
  const upload = async <T>(impl: E2eImpl, make: () => T): Promise<T> => {
    await settle(device);
    const t = performance.now();
    const x = make();
    await settle(device);
    uploadMs[impl] = performance.now() - t;
    return x;
  };
  // The floor: a kept zero tensor as the layer's output (cloned, no upload per step) and zero gradients for W and b.
  const zeros = tf.zeros([E2E_ROWS, units]) as tf.Tensor2D;
  const skipLayer = tf.customGrad((w, b) => ({
    value: zeros.clone(),
    gradFunc: () => [tf.zerosLike(w as tf.Tensor), tf.zerosLike(b as tf.Tensor)],
  })) as (w: tf.Tensor2D, b: tf.Tensor1D) => tf.Tensor2D;
  const runs = await upload('runs', () => built.map(({ batch }, i) => new TocRunsGpuBatch(device, batch, runsLayouts[i])));
  uploadMs.runsTfjsRest = uploadMs.runs; // the same batches
  uploadMs.runsBiasPass = uploadMs.runs;
  // The runs batches without timesAddBias: tocMatMul then adds the bias by a pass of its own (the lab before session 34,
  // and before session 13 with tfjs's loss, output layer and Adam: runsTfjsRest).
  const biasPass = runs.map(
    (a): GpuSparseMatrix => ({
      rows: a.rows,
      cols: a.cols,
      times: (...args) => a.times(...args),
      transposeTimes: (...args) => a.transposeTimes(...args),
    }),
  );
  const csr = await upload('csr', () => chunks.map((s) => new CsrGpuBatch(device, s)));
  uploadMs.csrAgain = uploadMs.csr; // the same batches
  const dense = await upload('dense', () => denseData.map((d) => denseTensor(d, [E2E_ROWS, cols])));

  const ids = read.map((f) => tf.tensor1d(Int32Array.from(f.labels), 'int32'));
  const labels: BatchLabels = { ids, oneHot: ids.map((y) => tf.tidy(() => tf.oneHot(y, classes).toFloat() as tf.Tensor2D)) };
  const random = rng(99);
  const glorot = (fanIn: number, fanOut: number) => {
    const limit = Math.sqrt(6 / (fanIn + fanOut));
    return Float32Array.from({ length: fanIn * fanOut }, () => (random() * 2 - 1) * limit);
  };
  const start: StartWeights = { w: glorot(cols, units), w2: model === 'mlp' ? glorot(units, classes) : undefined };

  const tocInfo = built.map(({ batch, layout }, i) => {
    const { nnz, firstLayer, codes, nodes, levels, tocFileBytes } = batchInfo(`batch ${i}`, '', read[i]!.logical, batch, layout, runsLayouts[i]!);
    return { nnz, firstLayer, codes, nodes, levels, tocFileBytes };
  });
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const tensorsBefore = tf.memory().numTensors;
  const runsBytes = sum(runs.map((t) => t.uploadBytes));
  const fusedDense = (x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, activation: 'linear' | 'relu') =>
    tf.fused.matMul({ a: x, b: w, bias: b, activation }) as tf.Tensor2D;
  // The products' GPU time inside the epochs, where timestamp-query allows (TOC runs and CSR, the same passes around each).
  const timed = (batches: GpuSparseMatrix[]) => {
    const timer = device.features.has('timestamp-query') ? new ProductTimer(device) : undefined;
    return { timer, batches: timer ? batches.map((a) => timer.wrap(a)) : batches };
  };
  const [runsTimed, csrTimed, csrAgainTimed] = [timed(runs), timed(csr), timed(csr)];
  const csrBytes = sum(csr.map((c) => c.uploadBytes));
  const trainers = [
    trainer(device, 'runs', (i, w, b, act) => tocMatMul(runsTimed.batches[i]!, w, b, act), labels, start, cols, units, runsBytes, classes, runsTimed.timer),
    trainer(device, 'runsBiasPass', (i, w, b, act) => tocMatMul(biasPass[i]!, w, b, act), labels, start, cols, units, runsBytes, classes),
    trainer(device, 'runsTfjsRest', (i, w, b, act) => tocMatMul(biasPass[i]!, w, b, act), labels, start, cols, units, runsBytes, classes),
    trainer(device, 'csr', (i, w, b, act) => tocMatMul(csrTimed.batches[i]!, w, b, act), labels, start, cols, units, csrBytes, classes, csrTimed.timer),
    trainer(
      device,
      'csrAgain',
      (i, w, b, act) => tocMatMul(csrAgainTimed.batches[i]!, w, b, act),
      labels,
      start,
      cols,
      units,
      csrBytes,
      classes,
      csrAgainTimed.timer,
    ),
    trainer(device, 'dense', (i, w, b, act) => fusedDense(dense[i]!, w, b, act), labels, start, cols, units, batches * E2E_ROWS * cols * 4, classes),
    // The floor skips the first layer with its ReLU (relu(0) is 0).
    trainer(device, 'skip', (_, w, b) => skipLayer(w, b), labels, start, cols, units, 0, classes),
  ];
  // Epoch by epoch, each in turn, so they share the state of the machine; the order is shuffled (seeded) each round, since
  // a rotation keeps each trainer behind the same one (until session 34 TOC runs always followed the floor's short epoch
  // and CSR the tfjs-heavy one).
  const turns = rng(34);
  for (let e = 0; e < EPOCHS; e++) {
    for (const n of shuffledTurns(trainers.length, turns)) {
      const t = trainers[n]!;
      log(`end to end (${model}): epoch ${e + 1} of ${EPOCHS}, first layer on ${t.name}`);
      await t.epoch();
    }
  }
  const trained = [];
  for (const t of trainers) trained.push(await t.finish());
  const leakedTensors = tf.memory().numTensors - tensorsBefore;

  const denseWeights = trained.find((t) => t.name === 'dense')!.weights;
  const runsOut: TrainingRun[] = trained.map(({ weights, ...run }) => ({ ...run, weightError: maxRelError(weights, denseWeights, weights.length) }));
  for (const x of [...runs, ...csr]) x.destroy();
  tf.dispose([...dense, ...labels.ids, ...labels.oneHot, zeros]);
  return {
    model,
    units,
    columnOrder,
    batches,
    dataset,
    batchRows: E2E_ROWS,
    rows: batches * E2E_ROWS,
    cols,
    classes: classes,
    epochs: EPOCHS,
    learningRate: LEARNING_RATE,
    positiveRate: sum(Array.from(allLabels.subarray(0, batches * E2E_ROWS))) / (batches * E2E_ROWS),
    toc: tocInfo,
    runsScratchBytes: sum(runs.map((t) => t.extBytes)),
    models: runsLayouts.map((l) => l.model),
    encodeMs,
    recordBytes: bytes.length,
    readRecordMs,
    batchLayoutMs,
    runsLayoutMs,
    uploadMs,
    runs: runsOut,
    leakedTensors,
  };
}

// ------------------------------------------------------------------ main

/** The first record of a TOC dataset under public/ (bundled ones in datasets/), as one sparse table, with its labels. */
async function bundled(dir: string, under = 'datasets'): Promise<{ table: SparseRows; labels: Uint16Array; classes: number }> {
  const base = `/${under}/${dir}/`;
  const manifest = validateTocManifest(await (await fetch(`${base}manifest.json`)).json(), dir);
  const entry = manifest.splits.train.records[0]!;
  const bytes = new Uint8Array(await (await fetch(base + entry.file)).arrayBuffer());
  const frames = readTocRecord(bytes, entry, { classes: manifest.classes.length, columns: manifest.columns });
  const table = concatRows(frames.map((f) => sparseFromLogical(f.logical)));
  const labels = new Uint16Array(frames.flatMap((f) => Array.from(f.labels)));
  return { table, labels, classes: manifest.classes.length };
}

/** Batch sizes the encoding chooser considers. */
const CANDIDATE_ROWS = [250, 500, 1000, 2000];

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
  const flights = await bundled('flights-250k-toc');
  const birdstrikes = await bundled('birdstrikes-toc');
  const encodings: BenchResults['encodings'] = [];
  const subjects: Subject[] = [];
  for (const [name, data] of [
    ['flights', flights],
    ['birdstrikes', birdstrikes],
  ] as const) {
    const candidates = compareEncodings(data.table, CANDIDATE_ROWS);
    const chosen = chooseEncoding(candidates)!;
    encodings.push({ table: name, candidates, chosen });
    log(`${name}: chose ${chosen.batchRows} rows, ${chosen.columnOrder} order (work ratio ${chosen.workRatio.toFixed(3)})`);
    subjects.push(...realSubjects(name, data.table, chosen));
  }
  // Real Fashion-MNIST when the bench built it (bench/toc-kernels.ts: npm run data:toc:fashion): the first 250 training
  // images, pixels q/255 as the TOC build stores them, source column order (the lab's layout for images).
  const fashionDir = query.get('fashion');
  if (fashionDir) {
    const fashion = await bundled(fashionDir.split('/').pop()!, fashionDir.split('/').slice(0, -1).join('/'));
    subjects.push(fromSparse(`Fashion-MNIST ${ROWS}`, `first ${ROWS} training images, source column order`, sliceRows(fashion.table, 0, ROWS)));
  }
  subjects.push(...syntheticSubjects(!fashionDir));
  const results = {
    batches: [] as BatchInfo[],
    oneTime: [] as OneTimeCosts[],
    checks: [] as CheckResult[],
    kernels: [] as KernelTiming[],
    fusedBias: [] as FusedBiasTiming[],
  };
  for (const s of subjects.filter((x) => !ONLY.length || ONLY.some((prefix) => x.name.startsWith(prefix)))) {
    const r = await kernelBench(device, timer, s);
    results.batches.push(r.info);
    results.oneTime.push(r.oneTime);
    results.checks.push(...r.checks);
    results.kernels.push(...r.timings);
    results.fusedBias.push(...r.fusedBias);
  }
  // Per epoch on real flights (the first record of the bundled flights-250k TOC dataset), 250-row batches in frequency
  // column order, as sessions 4-6 ran it, so per-epoch figures compare across sessions (every representation trains on
  // the same matrix).
  const e2eData = E2E_DATA === 'birdstrikes' ? birdstrikes : { ...flights, classes: CLASSES };
  const e2eTable = E2E_ORDER === 'frequency' ? permuteColumns(e2eData.table, frequencyOrder(e2eData.table)) : e2eData.table;
  const endToEnds: EndToEnd[] = [];
  for (const model of E2E_MODELS) endToEnds.push(await endToEnd(device, model, e2eTable, e2eData.labels, E2E_ORDER, E2E_DATA, e2eData.classes));
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
    only: ONLY,
    layoutOptions: LAYOUT_OPTIONS,
    prices: LAYOUT_OPTIONS.sides === 'one' ? RUNS_PRICES_S8 : RUNS_PRICES,
    ...results,
    encodings,
    endToEnd: endToEnds,
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
