// GPU kernel conformance: every TOC kernel (and the CSR baseline) against the
// CPU reference in src/toc/ops.ts, and the lab's loss, thin dense layer and Adam against tfjs's, on the WebGPU device tfjs uses. Loaded by
// test/e2e/gpu-conformance.spec.ts; results are read from window.__conformance.
import * as tf from '@tensorflow/tfjs';
import { adam } from '../../src/gpu/adam.js';
import { recordAddBias } from '../../src/gpu/bias.js';
import { webgpuBackend } from '../../src/gpu/backend.js';
import { CsrGpuBatch } from '../../src/gpu/csr.js';
import { readBuffer, storageBuffer } from '../../src/gpu/pipelines.js';
import { thinDense } from '../../src/gpu/dense.js';
import { softmaxCrossEntropy } from '../../src/gpu/softmax-ce.js';
import { columnMajor, rowMajor, TocGpuBatch } from '../../src/gpu/toc/kernels.js';
import { TocRunsGpuBatch } from '../../src/gpu/toc/runs.js';
import { tocMatMul, type GpuSparseMatrix } from '../../src/gpu/toc/tfjs-op.js';
import { tocRunsLayout } from '../../src/toc/gpu-runs.js';
import {
  encodeDense,
  encodePairs,
  matrixTimes,
  sparseFromDense,
  sparseFromPairs,
  timesMatrix,
  timesVector,
  toBatch,
  vectorTimes,
  type ColumnValuePair,
  type SparseRows,
  type TocLogical,
} from '../../src/toc/index.js';
import { mnistLike, randomMatrix, rng } from '../unit/toc/generators.js';

export interface CaseResult {
  name: string;
  op: string;
  /** toc: tree kernels; toc-runs: resolved-runs kernels (toc-runs-packed: on session 10's packed items); tfjs-op(-runs): tocMatMul on either. */
  impl: 'toc' | 'toc-runs' | 'toc-runs-packed' | 'csr' | 'tfjs-op' | 'tfjs-op-runs' | 'loss' | 'dense' | 'adam';
  /** max |gpu - cpu| / (1 + |cpu|) over all outputs */
  maxRelError: number;
  /** the same operation run twice gave identical bits */
  deterministic: boolean;
  outputs: number;
}

declare global {
  interface Window {
    __conformance?: Promise<CaseResult[]>;
    /** WebGPU validation errors: these do not throw, so we collect them. */
    __gpuErrors?: string[];
  }
}

interface Case {
  name: string;
  rows: number;
  cols: number;
  /** Dense data; cases too large for it give their rows as pairs and skip the tfjs op (which needs the dense tensor). */
  data?: Float32Array;
  pairs?: ColumnValuePair[][];
}

/** An r x c row-major matrix as c x r row-major. */
function transposed(data: ArrayLike<number>, r: number, c: number): Float64Array {
  const t = new Float64Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) t[j * r + i] = data[i * c + j]!;
  return t;
}

/** The large case: 70,000 rows, one pair each in its own column, so the runs layout needs 32-bit indexes and two-word column items. */
const LARGE = 70_000;

function cases(): Case[] {
  const random = rng(11);
  const make = (name: string, rows: number, cols: number, spec: Partial<Parameters<typeof randomMatrix>[1]> = {}): Case => ({
    name,
    rows,
    cols,
    data: Float32Array.from(randomMatrix(random, { rows, cols, density: 0.3, distinctValues: 5, repeatRows: 0.4, emptyRows: 0.1, ...spec }, 'f32')),
  });
  const unitValues = (c: Case): Case => ({ ...c, data: c.data!.map((x) => (x === 0 ? 0 : 1)) });
  // Figure 3 of the TOC paper.
  const paper = new Float32Array([1.1, 2, 3, 1.4, 0, 2, 3, 0, 1.1, 2, 3, 1.4, 0, 1.1, 0, 1.4, 1.1, 2, 3, 0]);
  return [
    { name: 'paper example', rows: 5, cols: 4, data: paper },
    make('random 40x30', 40, 30),
    make('one row', 1, 17),
    make('one column', 25, 1, { density: 0.7 }),
    make('all zero', 12, 9, { density: 0 }),
    make('dense-ish 250x64', 250, 64, { density: 0.9, distinctValues: 3 }),
    { name: 'mnist-like 250x784', rows: 250, cols: 784, data: mnistLike(250, 3) },
    // One-hot rows (every value 1, as in flights): the kernels' no-value-load path, with cached codes.
    unitValues(make('one-hot 300x40', 300, 40, { density: 0.15, repeatRows: 0.5 })),
    // Identical rows after the first two: one cached code used by 38 rows.
    { name: 'repeated rows 40x12', rows: 40, cols: 12, data: Float32Array.from({ length: 40 * 12 }, (_, i) => ((i % 12) % 3 === 0 ? (i % 12) + 1 : 0)) },
    {
      name: `${LARGE} rows, one pair each`,
      rows: LARGE,
      cols: LARGE,
      pairs: Array.from({ length: LARGE }, (_, r): ColumnValuePair[] => [[(r * 7919) % LARGE, (r % 5) + 1]]),
    },
  ];
}

async function run(): Promise<CaseResult[]> {
  const device = await webgpuBackend();
  window.__gpuErrors = [];
  device.addEventListener('uncapturederror', (e) => window.__gpuErrors!.push((e as GPUUncapturedErrorEvent).error.message));
  const results: CaseResult[] = [];
  const random = rng(5);
  const vec = (n: number) => Float32Array.from({ length: n }, () => random() * 2 - 1);

  for (const c of cases()) {
    const logical: TocLogical = c.data ? encodeDense(c.data, c.rows, c.cols) : encodePairs(c.pairs!, c.cols, 'f32');
    const sparse: SparseRows = c.data ? sparseFromDense(c.data, c.rows, c.cols) : sparseFromPairs(c.pairs!, c.cols, 'f32');
    const batch = toBatch(logical);
    // The terms rule with any saving caching (minSavedShare 0), whatever the default cost rule picks, so the cached paths stay covered.
    // Plain sides in every batch ('all', session 11: the default 'unit' only in unit batches), so plain items with values
    // beside them are covered; and packed items everywhere ('none', session 10), which keeps the two-word items covered
    // (the batch that needs them caches nothing, so its sides are plain in the first layout).
    const runsLayout = tocRunsLayout(batch, { cache: 'terms', minSavedShare: 0, plainSides: 'all' });
    const packedLayout = tocRunsLayout(batch, { cache: 'terms', minSavedShare: 0, plainSides: 'none' });
    const impls = {
      toc: new TocGpuBatch(device, batch),
      'toc-runs': new TocRunsGpuBatch(device, batch, runsLayout),
      'toc-runs-packed': new TocRunsGpuBatch(device, batch, packedLayout),
      csr: new CsrGpuBatch(device, sparse),
    };
    // Which paths of the runs kernels this case exercises (the spec checks all of them are covered).
    for (const [impl, l] of [
      ['toc-runs', runsLayout],
      ['toc-runs-packed', packedLayout],
    ] as const) {
      results.push({
        name: c.name,
        op:
          `layout cached=${l.rowCached > 0 && l.colCached > 0} idx${l.indexBits} wide=${l.wideItems && !(l.rowPlain && l.colPlain)} ` +
          `unit=${l.unitValues} plain=${l.rowPlain || l.colPlain}`,
        impl,
        maxRelError: 0,
        deterministic: true,
        outputs: 0,
      });
    }
    const k = 5;
    const p = 3;
    const v = vec(c.cols);
    const u = vec(c.rows);
    const mRight = vec(c.cols * k); // cols x k, row-major
    const mLeft = vec(p * c.rows); // p x rows, row-major: M * A
    // k = 8, row-major: the quad entry points (4 output columns per invocation).
    const q = 8;
    const mQuad = vec(c.cols * q);
    const mQuadT = vec(c.rows * q); // rows x q: A^T * M, the gradient's layout
    const quadT = matrixTimes({ rows: q, cols: c.rows, data: transposed(mQuadT, c.rows, q) }, batch).data;
    const ops = [
      { op: 'A*v', m: v, k: 1, n: c.rows, ref: timesVector(batch, v), transpose: false, ms: rowMajor(1), rs: rowMajor(1) },
      { op: 'v*A', m: u, k: 1, n: c.cols, ref: vectorTimes(u, batch), transpose: true, ms: rowMajor(1), rs: rowMajor(1) },
      {
        op: 'A*M',
        m: mRight,
        k,
        n: c.rows * k,
        ref: timesMatrix(batch, { rows: c.cols, cols: k, data: mRight }).data,
        transpose: false,
        ms: rowMajor(k),
        rs: rowMajor(k),
      },
      // M * A = (A^T M^T)^T: read M column-major and write R column-major to get the p x cols row-major result.
      {
        op: 'M*A',
        m: mLeft,
        k: p,
        n: p * c.cols,
        ref: matrixTimes({ rows: p, cols: c.rows, data: mLeft }, batch).data,
        transpose: true,
        ms: columnMajor(c.rows),
        rs: columnMajor(c.cols),
      },
      {
        op: 'A*M k=8',
        m: mQuad,
        k: q,
        n: c.rows * q,
        ref: timesMatrix(batch, { rows: c.cols, cols: q, data: mQuad }).data,
        transpose: false,
        ms: rowMajor(q),
        rs: rowMajor(q),
      },
      { op: 'AT*M k=8', m: mQuadT, k: q, n: c.cols * q, ref: transposed(quadT, q, c.cols), transpose: true, ms: rowMajor(q), rs: rowMajor(q) },
    ];
    for (const o of ops) {
      for (const [impl, gpu] of Object.entries(impls) as [keyof typeof impls, GpuSparseMatrix][]) {
        const m = storageBuffer(device, 'conformance.m', o.m);
        const outs = [0, 1].map(() =>
          device.createBuffer({ label: 'conformance.out', size: Math.max(4, o.n * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC }),
        );
        const readings: Float32Array[] = [];
        for (const out of outs) {
          const encoder = device.createCommandEncoder({ label: `conformance.${o.op}` });
          if (o.transpose) gpu.transposeTimes(encoder, m, o.k, out, o.ms, o.rs);
          else gpu.times(encoder, m, o.k, out, o.ms, o.rs);
          device.queue.submit([encoder.finish()]);
          readings.push((await readBuffer(device, out)).subarray(0, o.n));
        }
        let maxRelError = 0;
        for (let i = 0; i < o.n; i++) maxRelError = Math.max(maxRelError, Math.abs(readings[0]![i]! - o.ref[i]!) / (1 + Math.abs(o.ref[i]!)));
        const deterministic = readings[0]!.every((x, i) => Object.is(x, readings[1]![i]));
        results.push({ name: c.name, op: o.op, impl, maxRelError, deterministic, outputs: o.n });
        if (!o.transpose && gpu.timesAddBias) results.push(...(await fusedBiasCases(device, c.name, o.op, impl, gpu, m, o.k, o.n / o.k, vec(o.k))));
        m.destroy();
        outs.forEach((b) => b.destroy());
      }
    }
    if (c.data) {
      results.push(...(await tfjsOpCases(c, c.data, impls.toc, 'tfjs-op', random, 7)));
      results.push(...(await tfjsOpCases(c, c.data, impls['toc-runs'], 'tfjs-op-runs', random, 7)));
      results.push(...(await tfjsOpCases(c, c.data, impls['toc-runs'], 'tfjs-op-runs', random, 8)));
    }
    for (const gpu of Object.values(impls)) gpu.destroy();
  }
  results.push(...(await lossCases(random)));
  results.push(...(await thinDenseCases(random)));
  results.push(...(await adamCases(random)));
  return results;
}

/**
 * A forward product with the bias (and the ReLU) added as the gather stores (timesAddBias) against the product followed by
 * bias.wgsl's pass, the lab's forward before session 34: the spec wants the same bits (maxRelError exactly 0).
 */
async function fusedBiasCases(
  device: GPUDevice,
  name: string,
  op: string,
  impl: CaseResult['impl'],
  gpu: GpuSparseMatrix,
  m: GPUBuffer,
  k: number,
  rows: number,
  biasValues: Float32Array,
): Promise<CaseResult[]> {
  const bias = storageBuffer(device, 'conformance.bias', biasValues);
  const results: CaseResult[] = [];
  for (const relu of [false, true]) {
    const read = async (fused: boolean): Promise<Float32Array> => {
      const out = device.createBuffer({ label: 'conformance.out', size: Math.max(16, rows * k * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
      const encoder = device.createCommandEncoder({ label: `conformance.${op}+b` });
      if (fused) gpu.timesAddBias!(encoder, m, k, out, bias, relu);
      else {
        gpu.times(encoder, m, k, out);
        recordAddBias(device, encoder, out, bias, rows, k, relu);
      }
      device.queue.submit([encoder.finish()]);
      const values = (await readBuffer(device, out)).subarray(0, rows * k);
      out.destroy();
      return values;
    };
    const [fused, separate, again] = [await read(true), await read(false), await read(true)];
    let maxRelError = 0;
    for (let i = 0; i < fused.length; i++) maxRelError = Math.max(maxRelError, Math.abs(fused[i]! - separate[i]!) / (1 + Math.abs(separate[i]!)));
    const bitwise = fused.every((x, i) => Object.is(x, separate[i]));
    results.push({
      name,
      op: relu ? `relu(${op}+b) fused` : `${op}+b fused`,
      impl,
      // Any difference in the bits counts, even one too small to show in the relative error (a -0 for a +0).
      maxRelError: bitwise ? 0 : Math.max(maxRelError, Number.MIN_VALUE),
      deterministic: fused.every((x, i) => Object.is(x, again[i])),
      outputs: fused.length,
    });
  }
  bias.destroy();
  return results;
}

/** max |got - want| / (1 + |want|), and whether a second run gave the same bits. */
async function agreement(
  got: tf.Tensor,
  want: tf.Tensor,
  again: tf.Tensor,
  scale = 1,
): Promise<{ maxRelError: number; deterministic: boolean; outputs: number }> {
  const [g, e, g2] = await Promise.all([got.data(), want.data(), again.data()]);
  let maxRelError = 0;
  for (let i = 0; i < e.length; i++) maxRelError = Math.max(maxRelError, (scale * Math.abs(g[i]! - e[i]!)) / (1 + scale * Math.abs(e[i]!)));
  return { maxRelError, deterministic: g.every((x, i) => Object.is(x, g2[i])), outputs: e.length };
}

/** The TOC MLP's output layer (thinDense, shaders/dense.wgsl) against tf.matMul(X, W).add(b): Z, and dL/dX, dL/dW, dL/db through tf.grads. */
async function thinDenseCases(random: () => number): Promise<CaseResult[]> {
  const out: CaseResult[] = [];
  for (const [rows, inner, units] of [
    [250, 64, 2],
    [2000, 64, 6],
    [37, 5, 3], // an inner size that is not a multiple of 4: the scalar entry points
    [50, 20, 10], // the quad entry points (vec4 X and dX) at other sizes than the lab's 64
  ] as const) {
    const values = (n: number) => Float32Array.from({ length: n }, () => random() * 2 - 1);
    const x = tf.tensor2d(values(rows * inner), [rows, inner]);
    const w = tf.tensor2d(values(inner * units), [inner, units]);
    const b = tf.tensor1d(values(units));
    const upstream = tf.tensor2d(values(rows * units), [rows, units]);
    const ours = (xs: tf.Tensor, ws: tf.Tensor, bs: tf.Tensor) =>
      thinDense(xs as tf.Tensor2D, ws as tf.Tensor2D, bs as tf.Tensor1D)
        .mul(upstream)
        .sum();
    const tfjs = (xs: tf.Tensor, ws: tf.Tensor, bs: tf.Tensor) =>
      tf
        .matMul(xs as tf.Tensor2D, ws as tf.Tensor2D)
        .add(bs)
        .mul(upstream)
        .sum();
    const name = `dense ${rows}x${inner} to ${units}`;
    const z = [thinDense(x, w, b), tf.matMul(x, w).add(b), thinDense(x, w, b)] as const;
    out.push({ name, op: 'X*W+b', impl: 'dense', ...(await agreement(...z)) });
    const [got, want, again] = [tf.grads(ours)([x, w, b]), tf.grads(tfjs)([x, w, b]), tf.grads(ours)([x, w, b])];
    for (const [i, op] of ['dL/dX', 'dL/dW', 'dL/db'].entries()) out.push({ name, op, impl: 'dense', ...(await agreement(got[i]!, want[i]!, again[i]!)) });
    tf.dispose([x, w, b, upstream, ...z, ...got, ...want, ...again]);
  }
  return out;
}

/**
 * The lab's Adam (LabAdam, shaders/adam.wgsl) against tf.train.adam: each variable and both moments after three
 * steps of the same gradients, the second at a lower learning rate (the lab's control changes it mid-run). Shapes of
 * the lab's weights, and one with more than 65,535 workgroups of elements (the dispatch's second dimension).
 */
async function adamCases(random: () => number): Promise<CaseResult[]> {
  const shapes = [[784, 128], [128], [3, 3, 1, 8], [65_535 * 64 + 3]];
  const values = (shape: number[]) => Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => random() * 2 - 1);
  const start = shapes.map(values);
  const steps = [0, 1, 2].map(() => shapes.map((shape) => values(shape).map((g) => g * 0.1)));
  const train = async (optimizer: tf.AdamOptimizer): Promise<tf.Tensor[][]> => {
    const variables = start.map((data, i) => tf.variable(tf.tensor(data, shapes[i])));
    for (const [k, gradients] of steps.entries()) {
      (optimizer as unknown as { learningRate: number }).learningRate = k === 1 ? 0.002 : 0.01;
      const named = variables.map((v, i) => ({ name: v.name, tensor: tf.tensor(gradients[i]!, shapes[i]) }));
      optimizer.applyGradients(named);
      tf.dispose(named.map((g) => g.tensor));
    }
    const [iterations, ...moments] = await optimizer.getWeights();
    iterations!.tensor.dispose();
    // Per variable: its value, its first moment, its second moment (getWeights lists all first moments, then all second).
    return variables.map((v, i) => [v, moments[i]!.tensor, moments[shapes.length + i]!.tensor]);
  };
  const [ours, tfjs, again] = [adam(0.01), tf.train.adam(0.01), adam(0.01)];
  const [got, want, repeat] = [await train(ours), await train(tfjs), await train(again)];
  const out: CaseResult[] = [];
  for (const [i, shape] of shapes.entries()) {
    for (const [j, op] of ['Adam value', 'Adam m', 'Adam v'].entries())
      out.push({ name: `adam [${shape}]`, op, impl: 'adam', ...(await agreement(got[i]![j]!, want[i]![j]!, repeat[i]![j]!)) });
  }
  tf.dispose([...got, ...want, ...repeat].flatMap((v) => v.slice(0, 1)));
  for (const o of [ours, tfjs, again]) o.dispose();
  return out;
}

/**
 * The lab's loss (softmaxCrossEntropy, shaders/softmax_ce.wgsl) against tf.losses.softmaxCrossEntropy on one-hot
 * labels: the mean loss and, through tf.grad with an upstream factor, dL/dlogits. Shapes of the lab's batches
 * (flights 250 x 2, birdstrikes 2000 x 6, images 32 x 10), logits far from 0 (the log-sum-exp must shift by the
 * row's largest), and a label outside the classes (tfjs's one-hot row is zero: the row adds no loss).
 */
async function lossCases(random: () => number): Promise<CaseResult[]> {
  const shapes: { name: string; rows: number; classes: number; scale: number; outside?: boolean }[] = [
    { name: 'loss 250x2', rows: 250, classes: 2, scale: 4 },
    { name: 'loss 2000x6', rows: 2000, classes: 6, scale: 4 },
    { name: 'loss 32x10', rows: 32, classes: 10, scale: 4 },
    { name: 'loss 100x5 logits to 200', rows: 100, classes: 5, scale: 200 },
    { name: 'loss 40x3 a label outside', rows: 40, classes: 3, scale: 4, outside: true },
  ];
  const out: CaseResult[] = [];
  for (const s of shapes) {
    const logits = tf.tensor2d(
      Float32Array.from({ length: s.rows * s.classes }, () => (random() * 2 - 1) * s.scale),
      [s.rows, s.classes],
    );
    const ids = Int32Array.from({ length: s.rows }, () => Math.floor(random() * s.classes));
    if (s.outside) ids[7] = s.classes;
    const labels = tf.tensor1d(ids, 'int32');
    const oneHot = tf.oneHot(labels, s.classes);
    const upstream = 0.5 + random();
    const ours = (x: tf.Tensor) => softmaxCrossEntropy(x as tf.Tensor2D, labels).mul(upstream);
    const tfjs = (x: tf.Tensor) => tf.losses.softmaxCrossEntropy(oneHot, x as tf.Tensor2D).mul(upstream);
    // The gradient's entries are O(1 / rows): compared times rows, so the tolerance bites as it does on O(1) values.
    for (const [op, got, want, again, scale] of [
      ['softmax CE', ours(logits), tfjs(logits), ours(logits), 1],
      ['dL/dlogits', tf.grad(ours)(logits), tf.grad(tfjs)(logits), tf.grad(ours)(logits), s.rows],
    ] as const) {
      out.push({ name: s.name, op, impl: 'loss', ...(await agreement(got, want, again, scale)) });
      tf.dispose([got, want, again]);
    }
    tf.dispose([logits, labels, oneHot]);
  }
  return out;
}

/** The tfjs operation against tf.matMul on the dense batch: forward, and the gradient through tf.grad. */
async function tfjsOpCases(
  c: Case,
  data: Float32Array,
  a: GpuSparseMatrix,
  impl: 'tfjs-op' | 'tfjs-op-runs',
  random: () => number,
  units: number,
): Promise<CaseResult[]> {
  const w = tf.tensor2d(
    Float32Array.from({ length: c.cols * units }, () => random() * 2 - 1),
    [c.cols, units],
  );
  const upstream = tf.tensor2d(
    Float32Array.from({ length: c.rows * units }, () => random() * 2 - 1),
    [c.rows, units],
  );
  const dense = tf.tensor2d(data, [c.rows, c.cols]);
  const compare = async (op: string, got: tf.Tensor, want: tf.Tensor, again: tf.Tensor): Promise<CaseResult> => {
    const [g, e, g2] = await Promise.all([got.data(), want.data(), again.data()]);
    let maxRelError = 0;
    for (let i = 0; i < e.length; i++) maxRelError = Math.max(maxRelError, Math.abs(g[i]! - e[i]!) / (1 + Math.abs(e[i]!)));
    return { name: c.name, op, impl, maxRelError, deterministic: g.every((x, i) => Object.is(x, g2[i])), outputs: e.length };
  };
  const lossToc = (x: tf.Tensor) =>
    tocMatMul(a, x as tf.Tensor2D)
      .mul(upstream)
      .sum();
  const lossDense = (x: tf.Tensor) =>
    tf
      .matMul(dense, x as tf.Tensor2D)
      .mul(upstream)
      .sum();
  // With a bias: Z = A * W + b, b added and db taken by our kernels (shaders/bias.wgsl).
  const b = tf.tensor1d(Float32Array.from({ length: units }, () => random() * 2 - 1));
  const biasToc = (x: tf.Tensor, y: tf.Tensor) =>
    tocMatMul(a, x as tf.Tensor2D, y as tf.Tensor1D)
      .mul(upstream)
      .sum();
  const biasDense = (x: tf.Tensor, y: tf.Tensor) =>
    tf
      .matMul(dense, x as tf.Tensor2D)
      .add(y)
      .mul(upstream)
      .sum();
  const [dwToc, dbToc] = tf.grads(biasToc)([w, b]);
  const [dwDense, dbDense] = tf.grads(biasDense)([w, b]);
  const [dwAgain, dbAgain] = tf.grads(biasToc)([w, b]);
  // A hidden layer: relu(A * W + b), the ReLU and its gradient by our kernels too (the TOC MLP's first layer).
  const reluToc = (x: tf.Tensor, y: tf.Tensor) =>
    tocMatMul(a, x as tf.Tensor2D, y as tf.Tensor1D, 'relu')
      .mul(upstream)
      .sum();
  const reluDense = (x: tf.Tensor, y: tf.Tensor) =>
    tf
      .relu(tf.matMul(dense, x as tf.Tensor2D).add(y))
      .mul(upstream)
      .sum();
  const [dwReluToc, dbReluToc] = tf.grads(reluToc)([w, b]);
  const [dwReluDense, dbReluDense] = tf.grads(reluDense)([w, b]);
  const [dwReluAgain, dbReluAgain] = tf.grads(reluToc)([w, b]);
  const out = [
    await compare(`tfjs A*W k=${units}`, tocMatMul(a, w), tf.matMul(dense, w), tocMatMul(a, w)),
    await compare(`tfjs dL/dW k=${units}`, tf.grad(lossToc)(w), tf.grad(lossDense)(w), tf.grad(lossToc)(w)),
    await compare(`tfjs A*W+b k=${units}`, tocMatMul(a, w, b), tf.matMul(dense, w).add(b), tocMatMul(a, w, b)),
    await compare(`tfjs dL/dW with b k=${units}`, dwToc!, dwDense!, dwAgain!),
    await compare(`tfjs dL/db k=${units}`, dbToc!, dbDense!, dbAgain!),
    await compare(`tfjs relu(A*W+b) k=${units}`, tocMatMul(a, w, b, 'relu'), tf.relu(tf.matMul(dense, w).add(b)), tocMatMul(a, w, b, 'relu')),
    await compare(`tfjs dL/dW through relu k=${units}`, dwReluToc!, dwReluDense!, dwReluAgain!),
    await compare(`tfjs dL/db through relu k=${units}`, dbReluToc!, dbReluDense!, dbReluAgain!),
  ];
  tf.dispose([w, b, upstream, dense]);
  return out;
}

window.__conformance = run();
window.__conformance
  .then(
    (r) =>
      (document.getElementById('out')!.textContent = r
        .map((x) => `${x.impl} ${x.op} ${x.name}: ${x.maxRelError.toExponential(2)} ${x.deterministic ? 'deterministic' : 'NOT deterministic'}`)
        .join('\n')),
  )
  .catch((e: Error) => (document.getElementById('out')!.textContent = `failed: ${e.message}`));
