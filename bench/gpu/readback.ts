// Trainer steps/s with the loss read back every step before the next (depth 0,
// the old loop) and asynchronously (depth 2, the lab's loop), on the bundled
// Fashion-MNIST subset with the real pipeline workers. Variants take turns
// within each round, in alternating order. Opened by bench/trainer-readback.ts.
import { webgpuBackend, adapterDescription } from '../../src/gpu/backend.js';
import { startPipelineWorker } from '../../src/pipeline/client.js';
import { modelById } from '../../src/train/models/registry.js';
import { LabSession } from '../../src/train/session.js';

export interface ReadbackRun {
  model: string;
  depth: number;
  round: number;
  stepsPerSecond: number;
  /** Mean share of step time spent waiting for data over the timed steps. */
  wait: number;
  finalLoss: number;
}

export interface ReadbackResults {
  adapter: string;
  config: { rounds: number; warmup: number; steps: number; batch: number; echo: number };
  runs: ReadbackRun[];
}

declare global {
  interface Window {
    __readbackBench?: ReadbackResults | { error: string };
  }
}

const q = new URLSearchParams(location.search);
const config = { rounds: Number(q.get('rounds') ?? 5), warmup: 10, steps: Number(q.get('steps') ?? 60), batch: 32, echo: Number(q.get('echo') ?? 4) };
const out = document.getElementById('out')!;

/** One run of `steps` timed steps after `warmup` steps; wall time between the reports of the first and last. */
async function timeRun(model: string, depth: number, round: number): Promise<ReadbackRun> {
  let t0 = 0;
  let t1 = 0;
  let waits = 0;
  let finalLoss = NaN;
  let reached: () => void;
  const done = new Promise<void>((r) => (reached = r));
  const session = new LabSession(
    {
      manifestUrl: new URL('/datasets/fashion-mnist-mini/manifest.json', location.href).href,
      model: modelById(model),
      batchSize: config.batch,
      learningRate: 0.005,
      fidelity: Infinity,
      echoFactor: config.echo,
      evalEvery: 1e9,
      seed: round + 1,
      readbackDepth: depth,
    },
    {
      state: () => undefined,
      info: () => undefined,
      fetch: () => undefined,
      eval: () => undefined,
      warning: (m) => console.warn(m),
      step(m) {
        if (m.step === config.warmup) t0 = performance.now();
        if (m.step > config.warmup) waits += m.waitFraction;
        if (m.step === config.warmup + config.steps) {
          t1 = performance.now();
          finalLoss = m.loss;
          reached();
        }
      },
    },
    startPipelineWorker,
  );
  const ended = session.start();
  await Promise.race([done, ended]);
  await session.stop();
  if (!t1) throw new Error(`${model} depth ${depth}: the run ended before ${config.warmup + config.steps} steps (${session.warnings.toArray().join('; ')})`);
  return { model, depth, round, stepsPerSecond: (1000 * config.steps) / (t1 - t0), wait: waits / config.steps, finalLoss };
}

async function main(): Promise<void> {
  const device = await webgpuBackend();
  const runs: ReadbackRun[] = [];
  for (let round = 0; round < config.rounds; round++) {
    for (const model of ['tiny-cnn', 'mlp']) {
      const depths = round % 2 ? [2, 0] : [0, 2]; // alternate which goes first
      for (const depth of depths) {
        const r = await timeRun(model, depth, round);
        runs.push(r);
        out.textContent += `\n${model} depth ${depth} round ${round}: ${r.stepsPerSecond.toFixed(1)} steps/s, waiting ${(100 * r.wait).toFixed(0)}%`;
      }
    }
  }
  window.__readbackBench = { adapter: await adapterDescription(device), config, runs };
}

main().catch((err: Error) => (window.__readbackBench = { error: err.stack ?? err.message }));
