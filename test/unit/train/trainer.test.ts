// The Trainer's loop on the tfjs CPU backend, with a batch source of its own:
// what the loop asks the pipeline for, and when.
import * as tf from '@tensorflow/tfjs';
import { beforeAll, expect, it } from 'vitest';
import type { Batch } from '../../../src/pipeline/api.js';
import { adam } from '../../../src/gpu/adam.js';
import { emptyStats } from '../../../src/pipeline/base.js';
import { mlp } from '../../../src/train/models/mlp.js';
import { Trainer, type ModelState, type TrainerHooks } from '../../../src/train/trainer.js';
import { fakeInfo, SIDE } from './fake-pipeline.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
  await tf.ready();
});

it('asks for the next batch before it trains on this one, so the reply overlaps the step; a stream of n batches is asked n + 1 times', async () => {
  const total = 6;
  let asked = 0;
  const askedWhenTrained: number[] = [];
  const source = {
    async next(): Promise<Batch | null> {
      const index = asked++;
      if (index >= total) return null;
      const pixels = new Float32Array(4 * SIDE * SIDE).fill(index % 2);
      const batch = { kind: 'image' as const, y: Int32Array.from([0, 1, 0, 1]), ids: Int32Array.from([0, 1, 2, 3]), size: 4, index };
      // The model reads x when it trains on the batch: note how many batches had been asked for by then.
      return Object.defineProperty(batch, 'x', {
        enumerable: true,
        get: () => {
          askedWhenTrained.push(asked);
          return pixels;
        },
      }) as Batch;
    },
    stats: emptyStats,
  };
  const trainer = new Trainer(fakeInfo(64), { model: mlp, learningRate: 0.01, evalEvery: 1000 });
  await trainer.prepare(undefined, new AbortController().signal);
  const steps: number[] = [];
  const hooks: TrainerHooks = {
    signal: new AbortController().signal,
    gate: async () => undefined,
    phase: () => undefined,
    step: (m) => steps.push(m.step),
    eval: () => undefined,
  };
  expect(await trainer.run(source, hooks)).toBe('ended');
  expect(steps).toEqual([1, 2, 3, 4, 5, 6]);
  // Batch k (0-based) is trained once batch k + 1 has been asked for: k + 2 asks. Batch 0 is read twice: the warm-up's step first.
  expect(askedWhenTrained).toEqual([2, 2, 3, 4, 5, 6, 7]);
  expect(asked).toBe(total + 1);
  trainer.dispose();
});

it('the warm-up step leaves no trace: one step trains the model as one step of Adam from the seeded weights does', async () => {
  const info = fakeInfo(64);
  const pixels = new Float32Array(4 * SIDE * SIDE).map((_, i) => (i % 7) / 7);
  const batch: Batch = { kind: 'image', x: pixels, y: Int32Array.from([0, 1, 2, 1]), ids: Int32Array.from([0, 1, 2, 3]), size: 4, index: 0 };
  // By hand: the same seeded model, one step of the lab's Adam.
  const model = mlp.create(info, 7);
  const optimizer = adam(0.01);
  const input = model.prepare(batch);
  const loss = tf.tidy(() => optimizer.minimize(() => model.loss(model.logits(input), input, info.classes.length), true)!);
  const [expectedLoss] = await loss.data();
  const expected = await Promise.all(model.variables().map((v) => v.data()));
  tf.dispose([loss]);
  input.dispose();

  const trainer = new Trainer(info, { model: mlp, learningRate: 0.01, evalEvery: 1000, seed: 7 });
  await trainer.prepare(undefined, new AbortController().signal);
  let given = 0;
  const source = { next: async () => (given++ === 0 ? batch : null), stats: emptyStats };
  const losses: number[] = [];
  const hooks: TrainerHooks = {
    signal: new AbortController().signal,
    gate: async () => undefined,
    phase: () => undefined,
    step: (m) => losses.push(m.loss),
    eval: () => undefined,
  };
  expect(await trainer.run(source, hooks)).toBe('ended');
  const state = await (await trainer.capture())();
  // The step's loss is at the seeded weights (the warm-up's update was put back), and Adam has taken one step, not two.
  expect(losses).toEqual([expectedLoss]);
  expect(state.iterations).toBe(1);
  state.weights.forEach((w, i) => expect(Array.from(w.data)).toEqual(Array.from(expected[i]!)));
  trainer.dispose();
  model.dispose();
  optimizer.dispose();
});

it("the lab's Adam keeps tfjs's beta powers as numbers, bit for bit, and a restore sets them (the fused update reads them on WebGPU)", async () => {
  const ours = adam(0.01);
  const reference = tf.train.adam(0.01);
  const make = () => tf.variable(tf.tensor1d([0.5, -0.25, 2]));
  const [a, b] = [make(), make()];
  for (let step = 0; step < 40; step++) {
    const g = tf.tensor1d([0.1 * step, -0.3, 0.07]);
    ours.applyGradients([{ name: a.name, tensor: g }]);
    reference.applyGradients([{ name: b.name, tensor: g }]);
    g.dispose();
  }
  const acc = reference as unknown as { accBeta1: tf.Variable; accBeta2: tf.Variable };
  expect(ours.betaPowers).toEqual([(await acc.accBeta1.data())[0], (await acc.accBeta2.data())[0]]);
  // On the CPU backend the update is tfjs's own: the same values.
  expect(Array.from(await a.data())).toEqual(Array.from(await b.data()));
  const restored = adam(0.01);
  restored.betaPowers = ours.betaPowers;
  expect(restored.betaPowers).toEqual(ours.betaPowers);
  expect((await (restored as unknown as typeof acc).accBeta1.data())[0]).toBe(ours.betaPowers[0]);
  // tfjs's own restore (moments and iteration count) brings the powers along with the count.
  const fromWeights = adam(0.01);
  await fromWeights.setWeights(await ours.getWeights());
  expect(fromWeights.betaPowers).toEqual(ours.betaPowers);
  tf.dispose([a, b]);
  for (const o of [ours, reference, restored, fromWeights]) o.dispose();
});

it('examples/s is the examples of the last 8 steps over the time between their reports (when their losses came back)', async () => {
  const sizes = [4, 2, 4, 3, 4, 1, 4, 4, 2, 4, 3, 4];
  let asked = 0;
  const source = {
    async next(): Promise<Batch | null> {
      const index = asked++;
      if (index >= sizes.length) return null;
      // Steps of 10 ms or more: the meter's clock and this test's are read a few microtasks apart, which on steps of a
      // millisecond (a tiny MLP on the CPU) was a 5% difference on a loaded machine.
      await new Promise((r) => setTimeout(r, 10));
      const size = sizes[index]!;
      const x = new Float32Array(size * SIDE * SIDE).fill(index % 2);
      const y = Int32Array.from({ length: size }, (_, i) => i % 2);
      return { kind: 'image', x, y, ids: Int32Array.from({ length: size }, (_, i) => i), size, index } as Batch;
    },
    stats: emptyStats,
  };
  const trainer = new Trainer(fakeInfo(64), { model: mlp, learningRate: 0.01, evalEvery: 1000 });
  await trainer.prepare(undefined, new AbortController().signal);
  const reported: { step: number; time: number; examples: number; speed: number }[] = [];
  const hooks: TrainerHooks = {
    signal: new AbortController().signal,
    gate: async () => undefined,
    phase: () => undefined,
    step: (m) => reported.push({ step: m.step, time: performance.now(), examples: m.examples, speed: m.examplesPerSecond }),
    eval: () => undefined,
  };
  expect(await trainer.run(source, hooks)).toBe('ended');
  expect(reported.map((r) => r.step)).toEqual(sizes.map((_, i) => i + 1));
  // `time` here is the wall clock as each step was reported; no pause or evaluation, so all of it is training.
  for (const [i, r] of reported.entries()) {
    if (i < 8) continue; // the first windows run from the run's start, which the meter marks inside run()
    const examples = reported.slice(i - 7, i + 1).reduce((s, x) => s + x.examples, 0);
    expect(r.speed / ((1000 * examples) / (r.time - reported[i - 8]!.time))).toBeCloseTo(1, 1);
  }
  trainer.dispose();
});

it('a wait for a batch the pipeline had ready counts as delivery, not as waiting for data (dataWaitMs)', async () => {
  const run = async (readyLate: boolean) => {
    let index = 0;
    const source = {
      async next(): Promise<Batch | null> {
        if (index >= 6) return null;
        const made = performance.timeOrigin + performance.now();
        await new Promise((r) => setTimeout(r, 200)); // far longer than a step, also on a loaded machine: the trainer waits
        // Made as the reply comes (the pipeline was slow), or long before and held on the way (the page was busy).
        const readyAt = readyLate ? performance.timeOrigin + performance.now() : made;
        const x = new Float32Array(4 * SIDE * SIDE).fill(index % 2);
        return { kind: 'image', x, y: Int32Array.from([0, 1, 0, 1]), ids: Int32Array.from([0, 1, 2, 3]), size: 4, index: index++, readyAt };
      },
      stats: emptyStats,
    };
    const trainer = new Trainer(fakeInfo(64), { model: mlp, learningRate: 0.01, evalEvery: 1000 });
    await trainer.prepare(undefined, new AbortController().signal);
    const steps: { waitMs: number; dataWaitMs: number }[] = [];
    const hooks: TrainerHooks = {
      signal: new AbortController().signal,
      gate: async () => undefined,
      phase: () => undefined,
      step: (m) => steps.push(m),
      eval: () => undefined,
    };
    await trainer.run(source, hooks);
    trainer.dispose();
    return steps.slice(1); // the first step's wait began with the run
  };
  const late = await run(true);
  const early = await run(false);
  for (const m of late) {
    expect(m.waitMs).toBeGreaterThan(10);
    expect(m.dataWaitMs).toBeGreaterThan(m.waitMs - 5); // all of it a wait for data
  }
  for (const m of early) {
    expect(m.waitMs).toBeGreaterThan(10);
    expect(m.dataWaitMs).toBe(0); // the batch was ready before the trainer began to wait
  }
});

it('a test split past the GPU limit is kept on the CPU, uploaded per evaluation, with the same accuracy; past both, the rest is not read', async () => {
  const batches = (n: number) => {
    let i = 0;
    return {
      async next(): Promise<Batch | null> {
        if (i >= n) return null;
        const index = i++;
        const y = Int32Array.from({ length: 8 }, (_, k) => (k + index) % 2);
        const x = new Float32Array(8 * SIDE * SIDE).map((_, p) => (y[Math.floor(p / (SIDE * SIDE))] ? 0.8 : 0.2) + 0.01 * (p % 7));
        return { kind: 'image', x, y, ids: Int32Array.from({ length: 8 }, (_, k) => index * 8 + k), size: 8, index };
      },
      stats: emptyStats,
    };
  };
  const perBatch = 8 * SIDE * SIDE * 4 + 2 * 8 * 4; // x, y and ids
  const signal = new AbortController().signal;
  let weights: ModelState | undefined; // every trainer evaluates the first one's weights
  const evaluated = async (limits?: { gpu: number; cpu: number }) => {
    const trainer = new Trainer(fakeInfo(64), { model: mlp, learningRate: 0.01, evalEvery: 1000 });
    const tensors = tf.memory().numTensors;
    const kept = await trainer.prepare(batches(4), signal, weights, limits);
    weights ??= await (await trainer.capture())();
    const held = tf.memory().numTensors - tensors;
    const m = await trainer.evaluate(0, signal);
    const leaked = tf.memory().numTensors - tensors - held;
    trainer.dispose();
    return { kept, accuracy: m.accuracy, loss: m.loss, examples: m.examples, held, leaked };
  };
  const all = await evaluated();
  expect(all.kept).toEqual({ examples: 32, onCpu: 0, cut: false });
  const spilled = await evaluated({ gpu: 2 * perBatch, cpu: 10 * perBatch });
  expect(spilled.kept).toEqual({ examples: 32, onCpu: 16, cut: false });
  expect(spilled).toMatchObject({ examples: 32, accuracy: all.accuracy, loss: all.loss });
  expect(spilled.held).toBeLessThan(all.held); // two batches' tensors fewer held between evaluations
  expect(spilled.leaked).toBe(0); // the batches uploaded for the evaluation are freed after it
  const cut = await evaluated({ gpu: perBatch, cpu: perBatch });
  expect(cut.kept).toEqual({ examples: 16, onCpu: 8, cut: true });
  expect(cut.examples).toBe(16);
});

it('an evaluation that fails part way (a batch that cannot be uploaded) rejects and leaves no tensor behind', async () => {
  let i = 0;
  const source = {
    async next(): Promise<Batch | null> {
      if (i >= 2) return null;
      const index = i++;
      const y = Int32Array.from({ length: 8 }, (_, k) => k % 2);
      // The second batch's pixels are short of its 8 images: it is kept on the CPU, and its upload throws.
      const x = new Float32Array((index === 0 ? 8 : 5) * SIDE * SIDE).fill(0.5);
      return { kind: 'image', x, y, ids: Int32Array.from({ length: 8 }, (_, k) => index * 8 + k), size: 8, index };
    },
    stats: emptyStats,
  };
  const tensors = tf.memory().numTensors;
  const trainer = new Trainer(fakeInfo(64), { model: mlp, learningRate: 0.01, evalEvery: 1000 });
  const signal = new AbortController().signal;
  expect(await trainer.prepare(source, signal, undefined, { gpu: 1, cpu: 1e9 })).toEqual({ examples: 16, onCpu: 8, cut: false });
  await expect(trainer.evaluate(0, signal)).rejects.toThrow();
  trainer.dispose();
  expect(tf.memory().numTensors).toBe(tensors);
});
