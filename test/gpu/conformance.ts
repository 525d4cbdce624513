// GPU kernel conformance: every TOC kernel (and the CSR baseline) against the
// CPU reference in src/toc/ops.ts, on the WebGPU device tfjs uses. Loaded by
// test/e2e/gpu-conformance.spec.ts; results are read from window.__conformance.
import * as tf from '@tensorflow/tfjs';
import { webgpuBackend } from '../../src/gpu/backend.js';
import { CsrGpuBatch } from '../../src/gpu/csr.js';
import { readBuffer, storageBuffer } from '../../src/gpu/pipelines.js';
import { columnMajor, rowMajor, TocGpuBatch } from '../../src/gpu/toc/kernels.js';
import { tocMatMul } from '../../src/gpu/toc/tfjs-op.js';
import { encodeDense, matrixTimes, sparseFromDense, timesMatrix, timesVector, toBatch, vectorTimes } from '../../src/toc/index.js';
import { mnistLike, randomMatrix, rng } from '../unit/toc/generators.js';

export interface CaseResult {
  name: string;
  op: string;
  impl: 'toc' | 'csr' | 'tfjs-op';
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
  data: Float32Array;
}

function cases(): Case[] {
  const random = rng(11);
  const make = (name: string, rows: number, cols: number, spec: Partial<Parameters<typeof randomMatrix>[1]> = {}): Case => ({
    name,
    rows,
    cols,
    data: Float32Array.from(randomMatrix(random, { rows, cols, density: 0.3, distinctValues: 5, repeatRows: 0.4, emptyRows: 0.1, ...spec }, 'f32')),
  });
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
    const batch = toBatch(encodeDense(c.data, c.rows, c.cols));
    const impls = { toc: new TocGpuBatch(device, batch), csr: new CsrGpuBatch(device, sparseFromDense(c.data, c.rows, c.cols)) };
    const k = 5;
    const p = 3;
    const v = vec(c.cols);
    const u = vec(c.rows);
    const mRight = vec(c.cols * k); // cols x k, row-major
    const mLeft = vec(p * c.rows); // p x rows, row-major: M * A
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
    ];
    for (const o of ops) {
      for (const [impl, gpu] of Object.entries(impls) as ['toc' | 'csr', TocGpuBatch | CsrGpuBatch][]) {
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
        m.destroy();
        outs.forEach((b) => b.destroy());
      }
    }
    results.push(...(await tfjsOpCases(c, impls.toc, random)));
    impls.toc.destroy();
    impls.csr.destroy();
  }
  return results;
}

/** The tfjs operation against tf.matMul on the dense batch: forward, and the gradient through tf.grad. */
async function tfjsOpCases(c: Case, a: TocGpuBatch, random: () => number): Promise<CaseResult[]> {
  const units = 7;
  const w = tf.tensor2d(
    Float32Array.from({ length: c.cols * units }, () => random() * 2 - 1),
    [c.cols, units],
  );
  const upstream = tf.tensor2d(
    Float32Array.from({ length: c.rows * units }, () => random() * 2 - 1),
    [c.rows, units],
  );
  const dense = tf.tensor2d(c.data, [c.rows, c.cols]);
  const compare = async (op: string, got: tf.Tensor, want: tf.Tensor, again: tf.Tensor): Promise<CaseResult> => {
    const [g, e, g2] = await Promise.all([got.data(), want.data(), again.data()]);
    let maxRelError = 0;
    for (let i = 0; i < e.length; i++) maxRelError = Math.max(maxRelError, Math.abs(g[i]! - e[i]!) / (1 + Math.abs(e[i]!)));
    return { name: c.name, op, impl: 'tfjs-op', maxRelError, deterministic: g.every((x, i) => Object.is(x, g2[i])), outputs: e.length };
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
  const out = [
    await compare('tfjs A*W', tocMatMul(a, w), tf.matMul(dense, w), tocMatMul(a, w)),
    await compare('tfjs dL/dW', tf.grad(lossToc)(w), tf.grad(lossDense)(w), tf.grad(lossToc)(w)),
  ];
  tf.dispose([w, upstream, dense]);
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
