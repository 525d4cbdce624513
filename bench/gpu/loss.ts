// The lab's loss (softmaxCrossEntropy, our kernels) against tfjs's
// tf.losses.softmaxCrossEntropy, per training step of the lab's image models:
// the same model, batch and Adam step with one loss or the other. Blocks of
// steps take turns within each round, in alternating order. The inputs are
// random values of a batch's shape (a step's time does not depend on them).
// Opened by bench/loss.ts.
import * as tf from '@tensorflow/tfjs';
import { adapterDescription, webgpuBackend } from '../../src/gpu/backend.js';
import type { DatasetInfo } from '../../src/pipeline/api.js';
import { modelsFor, type Model, type ModelInput } from '../../src/train/models/registry.js';
import { profileStep, settle, type StepProfile } from './step-profile.js';

export type LossImpl = 'lab' | 'tfjs';

export interface LossRun {
  model: string;
  round: number;
  /** ms per step of each loss, over one block of steps from an idle queue to the last loss read back. */
  msPerStep: Record<LossImpl, number>;
}

export interface LossResults {
  adapter: string;
  config: { rounds: number; steps: number; batch: number; classes: number; shape: number[] };
  runs: LossRun[];
  /** One more step of each, under tf.profile. */
  profiles: { model: string; impl: LossImpl; profile: StepProfile }[];
}

declare global {
  interface Window {
    __lossBench?: LossResults | { error: string };
  }
}

const q = new URLSearchParams(location.search);
const config = { rounds: Number(q.get('rounds') ?? 7), steps: Number(q.get('steps') ?? 20), batch: 32, classes: 10, shape: [28, 28, 1] };
const out = document.getElementById('out')!;

const info: DatasetInfo = {
  kind: 'image',
  name: 'random 28x28x1',
  classes: Array.from({ length: config.classes }, (_, i) => `class ${i}`),
  inputShape: config.shape,
  image: { width: 28, height: 28, channels: 1 },
  fidelityLevels: 1,
  examples: config.batch,
  records: 1,
  bytesPerLevel: [0],
};

interface Subject {
  model: Model;
  input: ModelInput;
  step(): tf.Scalar;
  dispose(): void;
}

/** A model, a batch and an Adam optimiser training with one loss. */
function subject(create: (info: DatasetInfo) => Model, impl: LossImpl, x: Float32Array, y: Int32Array): Subject {
  const model = create(info);
  const input = model.prepare({ kind: 'image', x, y, ids: new Int32Array(y.length), size: y.length, index: 0 } as Parameters<Model['prepare']>[0]);
  const optimizer = tf.train.adam(0.001);
  const loss = (logits: tf.Tensor2D): tf.Scalar =>
    impl === 'lab' ? model.loss(logits, input, config.classes) : (tf.losses.softmaxCrossEntropy(tf.oneHot(input.labels, config.classes), logits) as tf.Scalar);
  return {
    model,
    input,
    step: () => tf.tidy(() => optimizer.minimize(() => loss(model.logits(input)), true)!),
    dispose: () => {
      input.dispose();
      optimizer.dispose();
      model.dispose();
    },
  };
}

async function timeBlock(device: GPUDevice, s: Subject): Promise<number> {
  await settle(device);
  const t0 = performance.now();
  for (let i = 1; i < config.steps; i++) s.step().dispose();
  const last = s.step();
  await last.data();
  last.dispose();
  return (performance.now() - t0) / config.steps;
}

async function main(): Promise<void> {
  const device = await webgpuBackend();
  const runs: LossRun[] = [];
  const profiles: LossResults['profiles'] = [];
  const size = config.batch * config.shape.reduce((a, b) => a * b, 1);
  const x = Float32Array.from({ length: size }, (_, i) => ((i * 2654435761) % 1000) / 1000);
  const y = Int32Array.from({ length: config.batch }, (_, i) => (i * 7) % config.classes);
  for (const spec of modelsFor('image')) {
    const subjects = { lab: subject(spec.create, 'lab', x, y), tfjs: subject(spec.create, 'tfjs', x, y) };
    for (const s of Object.values(subjects)) await timeBlock(device, s); // compiles the pipelines
    for (let round = 0; round < config.rounds; round++) {
      const order: LossImpl[] = round % 2 ? ['tfjs', 'lab'] : ['lab', 'tfjs'];
      const msPerStep = {} as Record<LossImpl, number>;
      for (const impl of order) msPerStep[impl] = await timeBlock(device, subjects[impl]);
      runs.push({ model: spec.id, round, msPerStep });
      const line = `${spec.id} round ${round}: lab ${msPerStep.lab.toFixed(1)} ms, tfjs ${msPerStep.tfjs.toFixed(1)} ms per step`;
      out.textContent += `\n${line}`;
      console.info(line); // bench/loss.ts prints it as the bench goes
    }
    for (const impl of ['lab', 'tfjs'] as const) profiles.push({ model: spec.id, impl, profile: await profileStep(device, subjects[impl].step) });
    for (const s of Object.values(subjects)) s.dispose();
  }
  window.__lossBench = { adapter: await adapterDescription(device), config, runs, profiles };
}

main().catch((err: Error) => (window.__lossBench = { error: err.stack ?? err.message }));
