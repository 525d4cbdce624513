// The thin dense layer's kernels (shaders/dense.wgsl, src/gpu/dense.ts thinDense: the TOC MLP's output layer), scalar
// entry points against the quad ones that read X and write dX as vec4, on the WebGPU device tfjs uses. Per shape
// rows x inner -> units it makes random X, W, b and dZ once, checks that each quad entry point gives the scalar one's
// output (and the scalar one a float64 CPU reference's), then times each operation with either entry point on the same
// buffers: a trial records R dispatches into one compute pass and waits for onSubmittedWorkDone, R picked per entry
// point so a trial takes about the target time; a warm-up round, then the rounds, the two taking turns (the order
// alternating from round to round). Opened by bench/dense.ts; results on window.__denseBench.
// Query options: rounds (default 9), target (ms per trial, default 50), shapes (default 2000x64x6,250x64x2,250x64x10),
// timestamps=0 (no GPU-side times).
import biasWgsl from '../../shaders/bias.wgsl?raw';
import denseWgsl from '../../shaders/dense.wgsl?raw';
import { adapterDescription, webgpuBackend } from '../../src/gpu/backend.js';
import { dispatch, readBuffer, shapeParams, storageBuffer, type KernelProgram } from '../../src/gpu/pipelines.js';
import { SpanTimer } from './step-profile.js';

export type OpName = 'forward' | 'input gradient' | 'weight gradient' | 'bias + ReLU' | 'ReLU gradient' | 'bias gradient';
export type Variant = 'scalar' | 'quad';
export type Shape = [rows: number, inner: number, units: number];

export interface DenseCheck {
  shape: Shape;
  op: OpName;
  elements: number;
  /** max over elements of |scalar − reference| / max(|reference|, 1), the reference in float64 on the CPU. */
  scalarVsCpu: number;
  /** max over elements of |quad − scalar| / max(|scalar|, 1). */
  quadVsScalar: number;
  /** Elements where the quad output has the scalar one's bits. */
  identical: number;
}

export interface DenseTiming {
  shape: Shape;
  op: OpName;
  /** Dispatches per trial (R) of each entry point. */
  reps: Record<Variant, number>;
  /** Wall-clock ms per dispatch, one per round: from recording the trial to onSubmittedWorkDone, divided by R. */
  wall: Record<Variant, number[]>;
  /** GPU-side ms per dispatch, one per round: timestamp span of the trial's pass, divided by R (with timestamp-query). */
  gpu?: Record<Variant, number[]>;
}

export interface DenseResults {
  adapter: string;
  timestampQuery: boolean;
  /** Whether GPU-side times were taken (timestamp-query present and not turned off with ?timestamps=0). */
  gpuTimes: boolean;
  userAgent: string;
  config: { rounds: number; targetMs: number; maxReps: number; seed: number; shapes: Shape[] };
  checks: DenseCheck[];
  timings: DenseTiming[];
  totalMs: number;
}

declare global {
  interface Window {
    __denseBench?: DenseResults | { error: string };
  }
}

const T0 = performance.now();
const q = new URLSearchParams(location.search);
const ROUNDS = Number(q.get('rounds') ?? 9);
const TARGET_MS = Number(q.get('target') ?? 50);
const MAX_REPS = 5000;
const SEED = 20261129;
const SHAPES = (q.get('shapes') ?? '2000x64x6,250x64x2,250x64x10').split(',').map((s) => s.split('x').map(Number) as Shape);
/** Largest allowed |quad − scalar| / max(|scalar|, 1); and |scalar − reference| / max(|reference|, 1). */
const QUAD_TOLERANCE = 1e-5;
const CPU_TOLERANCE = 1e-4;
const out = document.getElementById('out')!;

function log(line: string): void {
  out.textContent += `\n${line}`;
  console.info(line); // bench/dense.ts prints it as the bench goes
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Uniform in [-1, 1), mulberry32. */
function randoms(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * 2 - 1;
  });
}

const program = (entryPoint: string, wgsl = denseWgsl, constants?: Record<string, number>): KernelProgram => ({
  label: `bench.${wgsl === denseWgsl ? 'Dense' : 'Bias'}.${entryPoint}`,
  wgsl,
  entryPoint,
  workgroupSize: 64,
  layout: 'grid',
  constants,
});

interface Kernel {
  program: KernelProgram;
  bindings: Record<number, GPUBuffer>;
  grid: [number, number];
  out: GPUBuffer;
}

interface Operation {
  op: OpName;
  kernels: Record<Variant, Kernel>;
  /** The float64 CPU reference of the output. */
  reference(): Float64Array;
}

/**
 * The operations of a shape, each with both entry points, on one set of random buffers: the dense layer's three, and
 * the bias and ReLU passes (shaders/bias.wgsl) of the hidden layer before it, rows x inner (the TOC MLP's first layer).
 */
function operations(device: GPUDevice, [rows, inner, units]: Shape, seed: number): { ops: Operation[]; destroy(): void } {
  const x = randoms(rows * inner, seed);
  const w = randoms(inner * units, seed + 1);
  const bias = randoms(units, seed + 2);
  const dz = randoms(rows * units, seed + 3);
  const hiddenBias = randoms(inner, seed + 4);
  const y = x.map((v) => Math.max(v, 0)); // a ReLU's output
  const dy = randoms(rows * inner, seed + 5);
  const made: GPUBuffer[] = [];
  const input = (label: string, data: Float32Array, usage = 0) => {
    const b = storageBuffer(device, `bench.dense.${label}`, data, usage);
    made.push(b);
    return b;
  };
  const output = (label: string, n: number) => {
    const b = device.createBuffer({ label: `bench.dense.${label}`, size: 4 * n, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    made.push(b);
    return b;
  };
  const [X, W, B, dZ] = [input('X', x), input('W', w), input('b', bias), input('dZ', dz)];
  const [hb, Y, dY] = [input('hidden b', hiddenBias), input('Y', y), input('dY', dy)];
  const params = shapeParams(device, rows, inner, units);
  const kernel = (entryPoint: string, bindings: Record<number, GPUBuffer>, outBinding: number, grid: [number, number]): Kernel => ({
    program: program(entryPoint),
    bindings: { 0: params, ...bindings },
    grid,
    out: bindings[outBinding]!,
  });
  // The bias passes' params count the columns they step over: inner, or its quads.
  const biasKernel = (entryPoint: string, relu: boolean, bindings: Record<number, GPUBuffer>, outBinding: number, quad: boolean): Kernel => {
    const width = quad ? inner / 4 : inner;
    return {
      program: program(entryPoint, biasWgsl, relu ? { RELU: 1 } : undefined),
      bindings: { 0: shapeParams(device, rows, width), ...bindings },
      grid: entryPoint.startsWith('column_sums') ? [width, 1] : [rows, width],
      out: bindings[outBinding]!,
    };
  };
  const ops: Operation[] = [
    {
      op: 'forward',
      kernels: {
        scalar: kernel('forward', { 1: X, 2: W, 3: B, 4: output('Z.scalar', rows * units) }, 4, [rows, units]),
        quad: kernel('forward4', { 5: X, 2: W, 3: B, 4: output('Z.quad', rows * units) }, 4, [rows, units]),
      },
      reference: () => {
        const z = new Float64Array(rows * units);
        for (let i = 0; i < rows; i++)
          for (let j = 0; j < units; j++) {
            let s = bias[j]!;
            for (let t = 0; t < inner; t++) s += x[i * inner + t]! * w[t * units + j]!;
            z[i * units + j] = s;
          }
        return z;
      },
    },
    {
      op: 'input gradient',
      kernels: {
        scalar: kernel('input_gradient', { 1: dZ, 2: W, 4: output('dX.scalar', rows * inner) }, 4, [rows, inner]),
        quad: kernel('input_gradient4', { 1: dZ, 2: W, 6: output('dX.quad', rows * inner) }, 6, [rows, inner / 4]),
      },
      reference: () => {
        const dx = new Float64Array(rows * inner);
        for (let i = 0; i < rows; i++)
          for (let t = 0; t < inner; t++) {
            let s = 0;
            for (let j = 0; j < units; j++) s += dz[i * units + j]! * w[t * units + j]!;
            dx[i * inner + t] = s;
          }
        return dx;
      },
    },
    {
      op: 'weight gradient',
      kernels: {
        scalar: kernel('weight_gradient', { 1: X, 2: dZ, 4: output('dW.scalar', inner * units) }, 4, [inner, units]),
        quad: kernel('weight_gradient4', { 5: X, 2: dZ, 4: output('dW.quad', inner * units) }, 4, [inner / 4, units]),
      },
      reference: () => {
        const dw = new Float64Array(inner * units);
        for (let t = 0; t < inner; t++)
          for (let j = 0; j < units; j++) {
            let s = 0;
            for (let i = 0; i < rows; i++) s += x[i * inner + t]! * dz[i * units + j]!;
            dw[t * units + j] = s;
          }
        return dw;
      },
    },
    {
      // In place: Z += b, then relu. The check reads one dispatch on Z as made; timed trials go on adding b, clamped at 0.
      op: 'bias + ReLU',
      kernels: {
        scalar: biasKernel('add_bias', true, { 1: hb, 2: input('Z hidden.scalar', x, GPUBufferUsage.COPY_SRC) }, 2, false),
        quad: biasKernel('add_bias4', true, { 4: hb, 5: input('Z hidden.quad', x, GPUBufferUsage.COPY_SRC) }, 5, true),
      },
      reference: () => Float64Array.from(x, (v, at) => Math.max(v + hiddenBias[at % inner]!, 0)),
    },
    {
      op: 'ReLU gradient',
      kernels: {
        scalar: biasKernel('relu_mask', false, { 1: dY, 2: output('dZ hidden.scalar', rows * inner), 3: Y }, 2, false),
        quad: biasKernel('relu_mask4', false, { 4: dY, 5: output('dZ hidden.quad', rows * inner), 6: Y }, 5, true),
      },
      reference: () => Float64Array.from(dy, (v, at) => (y[at]! > 0 ? v : 0)),
    },
    {
      op: 'bias gradient',
      kernels: {
        scalar: biasKernel('column_sums', false, { 1: dY, 2: output('db hidden.scalar', inner) }, 2, false),
        quad: biasKernel('column_sums4', false, { 4: dY, 5: output('db hidden.quad', inner) }, 5, true),
      },
      reference: () => {
        const db = new Float64Array(inner);
        for (let at = 0; at < dy.length; at++) db[at % inner]! += dy[at]!;
        return db;
      },
    },
  ];
  return { ops, destroy: () => made.forEach((b) => b.destroy()) };
}

/** One trial: R dispatches of `k` in one compute pass (between the timer's marks), submitted, then the queue drained. Wall ms per dispatch. */
async function trial(device: GPUDevice, k: Kernel, reps: number, timer?: SpanTimer): Promise<{ wall: number; gpu?: number }> {
  const t0 = performance.now();
  const encoder = device.createCommandEncoder({ label: k.program.label });
  if (timer) timer.mark(encoder, 0);
  const pass = encoder.beginComputePass({ label: k.program.label });
  for (let r = 0; r < reps; r++) dispatch(device, pass, k.program, k.bindings, ...k.grid);
  pass.end();
  if (timer) timer.mark(encoder, 1);
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  const wall = (performance.now() - t0) / reps;
  return timer ? { wall, gpu: (await timer.spanMs()) / reps } : { wall };
}

/**
 * R so that a trial takes about TARGET_MS: trials of growing R until one takes a quarter of it, then two trials at the R
 * that predicts, the faster of them setting R (one trial slowed by another process on the machine would make R too small).
 */
async function calibrate(device: GPUDevice, k: Kernel): Promise<number> {
  const repsFor = (msPerDispatch: number) => Math.min(MAX_REPS, Math.max(1, Math.round(TARGET_MS / Math.max(msPerDispatch, 1e-4))));
  let reps = 1;
  for (; reps * 4 <= MAX_REPS; reps *= 4) if ((await trial(device, k, reps)).wall * reps >= TARGET_MS / 4) break;
  let best = (await trial(device, k, reps)).wall;
  reps = repsFor(best);
  for (let i = 0; i < 2; i++) best = Math.min(best, (await trial(device, k, reps)).wall);
  return repsFor(best);
}

function maxRelError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  let e = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i]! - want[i]!) / Math.max(Math.abs(want[i]!), 1);
    e = Math.max(e, Number.isNaN(d) ? Infinity : d);
  }
  return e;
}

/** Runs both entry points of `o` once (`once` dispatches and reads back) and compares them; throws past the tolerances. */
async function check(once: (k: Kernel) => Promise<Float32Array>, o: Operation, shape: Shape): Promise<DenseCheck> {
  const scalar = await once(o.kernels.scalar);
  const quad = await once(o.kernels.quad);
  let identical = 0;
  for (let i = 0; i < scalar.length; i++) if (Object.is(scalar[i], quad[i])) identical++;
  const result: DenseCheck = {
    shape,
    op: o.op,
    elements: scalar.length,
    scalarVsCpu: maxRelError(scalar, o.reference()),
    quadVsScalar: maxRelError(quad, scalar),
    identical,
  };
  const name = `${shape.join('x')} ${o.op}`;
  const [quadError, cpuError] = [result.quadVsScalar.toExponential(2), result.scalarVsCpu.toExponential(2)];
  log(`${name}: quad vs scalar ${quadError}, scalar vs CPU ${cpuError}, ${identical}/${scalar.length} identical`);
  if (!(result.quadVsScalar <= QUAD_TOLERANCE))
    throw new Error(`${name}: the quad output differs from the scalar one by ${result.quadVsScalar} (> ${QUAD_TOLERANCE})`);
  if (!(result.scalarVsCpu <= CPU_TOLERANCE))
    throw new Error(`${name}: the scalar output differs from the CPU reference by ${result.scalarVsCpu} (> ${CPU_TOLERANCE})`);
  return result;
}

async function main(): Promise<DenseResults> {
  const device = await webgpuBackend();
  const gpuErrors: string[] = [];
  device.addEventListener('uncapturederror', (e) => gpuErrors.push((e as GPUUncapturedErrorEvent).error.message));
  const failOnGpuErrors = async () => {
    await device.queue.onSubmittedWorkDone();
    if (gpuErrors.length) throw new Error(`WebGPU errors:\n  ${gpuErrors.join('\n  ')}`);
  };
  const timer = device.features.has('timestamp-query') && q.get('timestamps') !== '0' ? new SpanTimer(device) : undefined;
  log(`adapter ${await adapterDescription(device)}; ${ROUNDS} rounds of ~${TARGET_MS} ms trials; GPU-side times ${timer ? 'on' : 'off'}`);
  /** One dispatch of `k`, its output read back. */
  const once = async (k: Kernel): Promise<Float32Array> => {
    const encoder = device.createCommandEncoder({ label: k.program.label });
    const pass = encoder.beginComputePass({ label: k.program.label });
    dispatch(device, pass, k.program, k.bindings, ...k.grid);
    pass.end();
    device.queue.submit([encoder.finish()]);
    const result = await readBuffer(device, k.out);
    await failOnGpuErrors();
    return result;
  };

  const checks: DenseCheck[] = [];
  const timings: DenseTiming[] = [];
  for (const [s, shape] of SHAPES.entries()) {
    if (shape.length !== 3 || shape.some((d) => !(d > 0 && Number.isInteger(d))) || shape[1] % 4)
      throw new Error(`bad shape ${shape.join('x')}: inner % 4 != 0`);
    const { ops, destroy } = operations(device, shape, SEED + 10 * s);
    for (const o of ops) checks.push(await check(once, o, shape));
    for (const o of ops) {
      const reps = { scalar: await calibrate(device, o.kernels.scalar), quad: await calibrate(device, o.kernels.quad) };
      const t: DenseTiming = { shape, op: o.op, reps, wall: { scalar: [], quad: [] }, gpu: timer ? { scalar: [], quad: [] } : undefined };
      for (let round = -1; round < ROUNDS; round++) {
        const order: Variant[] = round % 2 ? ['scalar', 'quad'] : ['quad', 'scalar'];
        for (const v of order) {
          const r = await trial(device, o.kernels[v], reps[v], timer);
          if (round < 0) continue; // the warm-up round
          t.wall[v].push(r.wall);
          if (t.gpu && r.gpu !== undefined) t.gpu[v].push(r.gpu);
        }
      }
      await failOnGpuErrors();
      timings.push(t);
      const med = (v: Variant, side: 'wall' | 'gpu') => median(t[side]![v]).toFixed(3);
      log(
        `${shape.join('x')} ${o.op}: wall ${med('scalar', 'wall')} -> ${med('quad', 'wall')} ms` +
          `${timer ? `, GPU ${med('scalar', 'gpu')} -> ${med('quad', 'gpu')} ms` : ''} (R ${reps.scalar}, ${reps.quad})`,
      );
    }
    destroy();
  }
  return {
    adapter: await adapterDescription(device),
    timestampQuery: device.features.has('timestamp-query'),
    gpuTimes: timer !== undefined,
    userAgent: navigator.userAgent,
    config: { rounds: ROUNDS, targetMs: TARGET_MS, maxReps: MAX_REPS, seed: SEED, shapes: SHAPES },
    checks,
    timings,
    totalMs: performance.now() - T0,
  };
}

main().then(
  (r) => (window.__denseBench = r),
  (err: Error) => {
    log(`failed: ${err.message}`);
    window.__denseBench = { error: err.stack ?? err.message };
  },
);
