// LabSession and Trainer in Node, on the tfjs CPU backend, with a fake pipeline
// (fake-pipeline.ts: the real worker and WebGPU only exist in the browser; the
// browser tests in test/e2e/runs.spec.ts cover those). What a person does to a
// run: start, pause while it waits for data, stop while it loads or evaluates,
// move controls before the pipeline is open, start again after a stop.
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { validateCheckpoint, type Checkpoint } from '../../../src/train/checkpoint.js';
import { mlp } from '../../../src/train/models/mlp.js';
import { TRANSITIONS, type RunState } from '../../../src/train/run-state.js';
import { LabSession, STALL_MS, stalledFor, testBatchSize, type SessionConfig, type SessionListener } from '../../../src/train/session.js';
import { freshOptimizerState } from '../../../src/train/model-file.js';
import { Trainer, type EvalMetrics, type ModelState, type StepMetrics } from '../../../src/train/trainer.js';
import { fakeInfo, fakePipelines, type FakeBehaviour } from './fake-pipeline.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
  await tf.ready();
});

const config = (over: Partial<SessionConfig> = {}): SessionConfig => ({
  manifestUrl: 'http://localhost/fake/manifest.json',
  model: mlp,
  batchSize: 16,
  learningRate: 0.01,
  fidelity: Infinity,
  echoFactor: 1,
  evalEvery: 10,
  seed: 1,
  checkpointAfterMs: Infinity, // checkpoints by steps alone: a test's count of them must not depend on the machine's speed
  ...over,
});

/** A listener that records everything, and checks each state change is one the table allows. */
function recorder() {
  const states: { state: RunState; detail?: string }[] = [];
  const steps: StepMetrics[] = [];
  const evals: EvalMetrics[] = [];
  const warnings: string[] = [];
  let previous: RunState = 'idle';
  const listener: SessionListener = {
    state(state, detail) {
      if (!TRANSITIONS[previous].includes(state)) throw new Error(`illegal ${previous} -> ${state}`);
      previous = state;
      states.push({ state, detail });
    },
    info() {},
    step: (m) => steps.push(m),
    eval: (m) => evals.push(m),
    fetch() {},
    warning: (m) => warnings.push(m),
  };
  return { listener, states, steps, evals, warnings, names: () => states.map((s) => s.state) };
}

function session(behaviour?: (name: string) => FakeBehaviour, over?: Partial<SessionConfig>) {
  const fakes = fakePipelines(behaviour);
  const rec = recorder();
  const s = new LabSession(config(over), rec.listener, fakes.start);
  return { s, rec, fakes };
}

/** A session whose training reader behaves as `train` says, checkpointed only when paused or stopped (or at step 1,000). */
function savingSession(train: FakeBehaviour) {
  const saved: Checkpoint[] = [];
  const made = session((name) => (name === 'pipeline-train' ? train : {}), { checkpointEvery: 1000, saveCheckpoint: async (c) => void saved.push(c) });
  return { ...made, saved };
}

async function until(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function timed<T>(p: Promise<T>): Promise<number> {
  const t0 = Date.now();
  await p;
  return Date.now() - t0;
}

describe('LabSession', () => {
  it('trains, reports steps in order, evaluates, and stops: every state change legal', async () => {
    const { s, rec, fakes } = session();
    const done = s.start();
    await until('20 steps and an evaluation', () => rec.steps.length >= 20 && rec.evals.length >= 1);
    expect(rec.steps.map((m) => m.step)).toEqual(rec.steps.map((_, i) => i + 1));
    expect(rec.steps.every((m) => Number.isFinite(m.loss))).toBe(true);
    expect(rec.evals[0]).toMatchObject({ step: 10, examples: 4 * 256 }); // the fake's test split: 4 batches of 256
    expect(rec.evals[0]!.accuracy).toBeGreaterThanOrEqual(0);
    expect(rec.names().slice(0, 4)).toEqual(['loading', 'running', 'evaluating', 'running']);
    await s.stop();
    await done;
    expect(s.state).toBe('stopped');
    expect(rec.names().slice(-2)).toEqual(['stopping', 'stopped']);
    expect(fakes.workers.every((w) => w.terminated)).toBe(true);
    // The test split's worker goes as soon as the split is on the model's side.
    expect(fakes.workers.find((w) => w.name === 'pipeline-test')!.calls).toEqual(['open test']);
    expect(fakes.workers.find((w) => w.name === 'pipeline-test')!.options!.batchSize).toBe(256);
  });

  it('test batches of large images hold fewer examples: one of 256 at 1024x1024x3 would be 3.2 GB', () => {
    expect(testBatchSize(fakeInfo(1))).toBe(256);
    expect(testBatchSize({ ...fakeInfo(1), inputShape: [224, 224, 3] })).toBe(111);
    expect(testBatchSize({ ...fakeInfo(1), inputShape: [1024, 1024, 3] })).toBe(5);
    expect(testBatchSize({ ...fakeInfo(1), inputShape: [8192, 8192, 3] })).toBe(1);
  });

  it('a pause while the trainer waits for a batch pauses the run; resume goes on', async () => {
    const { s, rec } = session((name) => (name === 'pipeline-train' ? { nextMs: 150 } : {}));
    void s.start();
    await until('3 steps', () => rec.steps.length >= 3);
    s.pause(); // the trainer is now waiting in next() for most of its time
    expect(s.state).toBe('paused');
    await sleep(600);
    const paused = rec.steps.length;
    await sleep(600);
    expect(s.state).toBe('paused'); // the run did not end
    expect(rec.steps.length).toBe(paused); // and took no step
    s.resume();
    expect(s.state).toBe('running');
    await until('steps after resume', () => rec.steps.length >= paused + 3);
    await s.stop();
    expect(s.state).toBe('stopped');
  });

  it('a pause in the middle of a step that ends in an evaluation: the evaluation runs, then the run pauses', async () => {
    // The pause lands inside step 3 (evalEvery 3), past the trainer's gate: as a click does during a slow step on the GPU.
    const testBatches = 4; // the fake's test split, prepared before the first step
    let s!: LabSession;
    const pausing: typeof mlp = {
      ...mlp,
      create(info) {
        const model = mlp.create(info);
        const prepare = model.prepare.bind(model);
        let calls = 0;
        model.prepare = (batch) => {
          if (++calls === testBatches + 1 + 3) s.pause(); // + 1: the warm-up's step on the first batch
          return prepare(batch);
        };
        return model;
      },
    };
    const saved: Checkpoint[] = [];
    const made = session(undefined, { evalEvery: 3, model: pausing, checkpointEvery: 1000, saveCheckpoint: async (c) => void saved.push(c) });
    s = made.s;
    const rec = made.rec;
    void s.start();
    await until('the pause', () => s.state === 'paused');
    await until('the evaluation of step 3', () => rec.evals.length === 1);
    await sleep(400);
    expect(s.state).toBe('paused'); // not failed: paused -> evaluating -> paused
    expect(rec.names().slice(-3)).toEqual(['paused', 'evaluating', 'paused']);
    expect(rec.steps.at(-1)!.step).toBe(3);
    expect(rec.evals[0]!.step).toBe(3);
    expect(saved.map((c) => c.step)).toEqual([3]); // the pause's checkpoint, with the evaluation in its history
    s.resume();
    await until('steps after resume', () => rec.steps.length >= 5);
    await s.stop();
    expect(s.state).toBe('stopped');
  });

  it('stop while the pipeline is opening ends at once and cancels the worker', async () => {
    const { s, rec, fakes } = session(() => ({ openMs: Infinity }));
    const done = s.start();
    await sleep(50);
    expect(s.state).toBe('loading');
    expect(await timed(s.stop())).toBeLessThan(1000);
    await done;
    expect(rec.names()).toEqual(['loading', 'stopping', 'stopped']);
    expect(fakes.workers[0]!.calls).toContain('cancel');
    expect(fakes.workers[0]!.terminated).toBe(true);
  });

  it('stop while the test split loads is not overwritten by "running"', async () => {
    const { s, rec } = session((name) => (name === 'pipeline-test' ? { nextMs: 400 } : {}));
    const done = s.start();
    await until('the test split to open', () => rec.states.length >= 1 && s.info !== undefined);
    await sleep(100);
    expect(await timed(s.stop())).toBeLessThan(1000);
    await done;
    await sleep(500); // the abandoned test batch arrives now
    expect(s.state).toBe('stopped');
    expect(rec.names()).toEqual(['loading', 'stopping', 'stopped']);
  });

  it('stop during an evaluation ends within the bound and reports no evaluation after it', async () => {
    const { s, rec } = session(undefined, { evalEvery: 5 });
    let stopping: Promise<void> | undefined;
    const listener = rec.listener.state;
    rec.listener.state = (state, detail) => {
      listener(state, detail);
      if (state === 'evaluating' && !stopping) stopping = s.stop();
    };
    const done = s.start();
    await until('the stop during evaluation', () => stopping !== undefined);
    expect(await timed(stopping!)).toBeLessThan(1000);
    await done;
    expect(rec.evals).toEqual([]);
    expect(rec.names()).toEqual(['loading', 'running', 'evaluating', 'stopping', 'stopped']);
  });

  it('a pause during evaluation takes effect when the evaluation ends', async () => {
    const { s, rec } = session(undefined, { evalEvery: 3 });
    const listener = rec.listener.state;
    rec.listener.state = (state, detail) => {
      listener(state, detail);
      if (state === 'evaluating' && rec.evals.length === 0) s.pause();
    };
    void s.start();
    await until('the pause', () => s.state === 'paused');
    expect(rec.evals.length).toBe(1);
    const steps = rec.steps.length;
    await sleep(300);
    expect(rec.steps.length).toBe(steps);
    s.resume();
    await until('more steps', () => rec.steps.length > steps + 2);
    await s.stop();
  });

  it('controls changed while the pipeline opens are applied once it is open, not lost or thrown', async () => {
    const { s, rec, fakes } = session((name) => (name === 'pipeline-train' ? { openMs: 200 } : {}));
    void s.start();
    await sleep(20);
    s.setFidelity(2);
    s.setEchoFactor(3);
    s.setRequestsInFlight(7);
    await until('running', () => s.state === 'running');
    const train = fakes.workers.find((w) => w.name === 'pipeline-train')!;
    expect(train.calls.slice(0, 3)).toEqual(['open train', 'setFidelity 2', 'setEchoFactor 3']);
    expect(train.calls).toContain('setRequestsInFlight 7');
    s.setFidelity(4); // after open: straight through
    s.setRequestsInFlight(2);
    await until('the live change', () => train.calls.includes('setFidelity 4') && train.calls.includes('setRequestsInFlight 2'));
    expect(rec.warnings).toEqual([]);
    await s.stop();
  });

  it('auto echo: with a slow pipeline the echo factor moves to the measured ratio, and the readings reach the listener', async () => {
    const readings: { ratio: number; factor: number }[] = [];
    const { s, fakes, rec } = session((name) => (name === 'pipeline-train' ? { nextMs: 60 } : {}), { autoEcho: true, evalEvery: 1000 });
    rec.listener.echo = (r, factor) => readings.push({ ratio: r.ratio, factor });
    void s.start();
    await until('an auto echo move', () => fakes.workers.some((w) => w.calls.some((c) => c.startsWith('setEchoFactor') && c !== 'setEchoFactor 1')));
    const train = fakes.workers.find((w) => w.name === 'pipeline-train')!;
    const moved = Number(
      train.calls
        .filter((c) => c.startsWith('setEchoFactor'))
        .at(-1)!
        .split(' ')[1],
    );
    // The fake spends 60 ms per batch upstream; the MLP on 16 examples takes a few ms a step: R and so e are well above 1.
    expect(moved).toBeGreaterThan(1);
    expect(s.echoFactor).toBe(moved);
    const last = readings.at(-1)!;
    expect(last.ratio).toBeGreaterThan(1);
    expect(moved).toBe(Math.min(16, Math.max(1, Math.round(readings.find((r) => r.factor === moved)!.ratio * 2) / 2)));
    await s.stop();
  });

  it('a checkpoint is due once checkpointAfterMs has passed since the last, whatever the step (a slow run keeps its first steps)', async () => {
    const saved: Checkpoint[] = [];
    const { s } = session(undefined, { checkpointEvery: 1000, checkpointAfterMs: 0, saveCheckpoint: async (c) => void saved.push(c) });
    void s.start();
    await until('3 checkpoints', () => saved.length >= 3);
    await s.stop();
    // Each due at the step after the last: none waits for step 1,000.
    expect(saved.slice(0, 3).map((c) => c.step)).toEqual([1, 2, 3]);
  });

  it("a share of the dataset (share=2/3: one of three tabs): its readers split the tab's records, disjoint from the other tabs'", async () => {
    const { s, fakes } = session(undefined, { readers: 2, share: { rank: 1, count: 3 }, checkpointEvery: 5, saveCheckpoint: async (c) => void saved.push(c) });
    const saved: Checkpoint[] = [];
    void s.start();
    await until('6 steps', () => s.steps.total >= 6);
    const readers = fakes.workers.filter((w) => w.name.startsWith('pipeline-train'));
    // Positions 1, 4, 7, ... of each epoch's order are this tab's; its readers take 1, 7, 13, ... and 4, 10, 16, ...
    expect(readers.map((w) => w.options!.partition)).toEqual([
      { count: 6, rank: 1 },
      { count: 6, rank: 4 },
    ]);
    await until('a checkpoint', () => saved.length > 0);
    expect(saved[0]!.config.share).toEqual({ rank: 1, count: 3 });
    await s.stop();
    // A resumed run keeps its own share, whatever the page asks now.
    const resumed = session(undefined, { resume: saved[0]!, share: { rank: 0, count: 2 } });
    void resumed.s.start();
    await until('resumed steps', () => resumed.s.steps.total >= 2);
    const again = resumed.fakes.workers.filter((w) => w.name.startsWith('pipeline-train'));
    expect(again.map((w) => w.options!.partition)).toEqual([
      { count: 6, rank: 1 },
      { count: 6, rank: 4 },
    ]);
    await resumed.s.stop();
    // A share past the records: 8 records, share 9 of 9 holds none.
    const empty = session(undefined, { share: { rank: 8, count: 9 } });
    await empty.s.start().catch(() => undefined);
    await until('failed', () => empty.s.state === 'failed');
    expect(empty.rec.states.at(-1)!.detail).toMatch(/share 9 of 9 holds no records: the training split has 8/);
  });

  it('two readers: each opens its share of the split, batches come from each in turn, controls reach both, stop cancels both', async () => {
    const { s, fakes } = session(undefined, { readers: 2 });
    void s.start();
    await until('10 steps', () => s.steps.total >= 10);
    s.setFidelity(3);
    const readers = fakes.workers.filter((w) => w.name.startsWith('pipeline-train'));
    expect(readers.map((w) => w.name)).toEqual(['pipeline-train', 'pipeline-train-1']);
    expect(readers.map((w) => w.options!.partition)).toEqual([
      { count: 2, rank: 0 },
      { count: 2, rank: 1 },
    ]);
    const served = readers.map((w) => w.stats.batchesEmitted);
    expect(Math.abs(served[0]! - served[1]!)).toBeLessThanOrEqual(s.config.readers! * 4 + 1); // in turn, give or take what each prefetched
    // The counters are summed: the last step saw more batches than either reader has served.
    expect(s.steps.last()!.pipeline.batchesEmitted).toBeGreaterThan(Math.max(...served));
    await until('the control on both', () => readers.every((w) => w.calls.includes('setFidelity 3')));
    await s.stop();
    expect(readers.every((w) => w.terminated || w.cancelled)).toBe(true);
  });

  it('the learning rate changes mid-run (set before the trainer exists too)', async () => {
    const { s } = session((name) => (name === 'pipeline-train' ? { openMs: 100 } : {}), { evalEvery: 1000 });
    void s.start();
    s.setLearningRate(0.02); // while opening
    await until('5 steps', () => s.steps.total >= 5);
    expect(s.learningRate).toBe(0.02);
    s.setLearningRate(0.001);
    expect(s.learningRate).toBe(0.001);
    await s.stop();
  });

  it('start after stop: the old run sends nothing more, the new run starts clean', async () => {
    const a = session((name) => (name === 'pipeline-train' ? { nextMs: 20 } : {}));
    void a.s.start();
    await until('steps in run A', () => a.rec.steps.length >= 5);
    await a.s.stop();
    const afterStop = { steps: a.rec.steps.length, states: a.rec.states.length };
    const b = session();
    void b.s.start();
    await until('steps in run B', () => b.rec.steps.length >= 5);
    await sleep(200);
    expect(a.rec.steps.length).toBe(afterStop.steps);
    expect(a.rec.states.length).toBe(afterStop.states);
    expect(b.rec.steps[0]!.step).toBe(1);
    await b.s.stop();
  });

  it('leaks no tensors across runs', async () => {
    const before = tf.memory().numTensors;
    for (let run = 0; run < 2; run++) {
      const { s, rec } = session(undefined, { evalEvery: 4 });
      void s.start();
      await until('steps and an evaluation', () => rec.steps.length >= 9 && rec.evals.length >= 2);
      await s.stop();
    }
    await sleep(100); // abandoned readbacks dispose their tensors when they land
    expect(tf.memory().numTensors).toBe(before);
  });

  it('a stream that ends evaluates once more and stops by itself', async () => {
    const { s, rec } = session((name) => (name === 'pipeline-train' ? { batches: 7 } : {}), { evalEvery: 5 });
    await s.start();
    expect(s.state).toBe('stopped');
    expect(rec.states.at(-1)).toEqual({ state: 'stopped', detail: 'the data stream ended' });
    expect(rec.steps.length).toBe(7);
    expect(rec.evals.map((e) => e.step)).toEqual([5, 7]);
  });

  it('a pipeline failure fails the run with its message and frees the workers', async () => {
    const { s, rec, fakes } = session((name) => (name === 'pipeline-train' ? { failAfter: { batches: 3, message: 'every record failed' } } : {}));
    await s.start();
    expect(s.state).toBe('failed');
    expect(rec.states.at(-1)!.detail).toContain('every record failed');
    expect(fakes.workers.every((w) => w.terminated)).toBe(true);
    await s.stop(); // harmless once ended
    expect(s.state).toBe('failed');
  });

  it('keeps running totals of what it fetched beside its bounded history', async () => {
    const { s } = session();
    void s.start();
    await until('a few fetches', () => s.fetchTotals.records >= 10);
    await s.stop();
    expect(s.fetches.length).toBe(Math.min(s.fetchTotals.records, s.fetches.capacity));
    expect(s.fetchTotals.bytes).toBe(s.fetches.toArray().reduce((sum, f) => sum + f.received, 0));
  });

  it('as the run ends, its counters are read once more: the records read ahead of the last step count, as in the fetch log', async () => {
    const { s, rec, fakes } = session();
    const told: [number, number][] = [];
    rec.listener.totals = (p, steps) => told.push([p.bytesFetched, steps]);
    void s.start();
    await until('a few steps', () => rec.steps.length >= 5);
    s.pause(); // the trainer holds; the stream's asks ahead are answered meanwhile
    await sleep(100);
    await s.stop();
    const train = fakes.workers.find((w) => w.name === 'pipeline-train')!;
    // The stream asks ahead, so the reader made more than the trainer took; the last step's counters miss those.
    expect(train.stats.bytesFetched).toBeGreaterThan(rec.steps.at(-1)!.bytesFetched);
    expect(told).toEqual([[train.stats.bytesFetched, rec.steps.at(-1)!.step]]);
    expect(s.totals!.bytesFetched).toBe(s.fetchTotals.bytes - 4 * 256 * 10); // all the fetch log's bytes but the test split's
  });
});

describe('a stall, as the page says it', () => {
  it('is a wait for data over 3 s and over twice the waits the run has had: a slow link is not stalled between its batches', () => {
    expect(stalledFor(2_000, [10])).toBe(0);
    expect(stalledFor(4_000, [0, 0, 10])).toBe(4_000);
    expect(stalledFor(60_000, [])).toBe(0); // before the first step: waiting for the first batch, not a stall
    // 5 s a batch (a throttled link): waits of 5 s are the run's pace; 8 s is not a stall yet, 12 s is.
    const slow = Array(20).fill(5_000);
    expect(stalledFor(8_000, slow)).toBe(0);
    expect(stalledFor(12_000, slow)).toBe(12_000);
    // A record's worth of batches at once, then a wait for the next record: that wait sets the bar, from the first record on.
    expect(stalledFor(4_000, [4_500, 0, 0, 0, 0, 0, 0, 0])).toBe(0);
    expect(stalledFor(9_500, [4_500, 0, 0, 0, 0, 0, 0, 0])).toBe(9_500);
  });
});

describe('counters between steps', () => {
  it('while the trainer waits for data, the counters are read from the readers each second: what arrives shows before the next batch', async () => {
    const { s, rec, fakes } = session((name) => (name === 'pipeline-train' ? { hangAfter: 4 } : {}));
    const told: number[] = [];
    rec.listener.counters = (p) => told.push(p.bytesFetched);
    void s.start();
    await until('the stall', () => s.waitingForDataMs > 0 && rec.steps.length >= 4); // all 4 batches served and trained
    const train = fakes.workers.find((w) => w.name === 'pipeline-train')!;
    const atStall = train.stats.bytesFetched;
    // A record arrives, but no batch yet (a slow link, a big record): the counters say so within about a second.
    train.stats.bytesFetched += 5_000;
    train.stats.recordsFetched++;
    await until('the counters read', () => told.includes(atStall + 5_000), 3_000);
    expect(s.counters!.bytesFetched).toBe(atStall + 5_000);
    expect(rec.steps.at(-1)!.pipeline.bytesFetched).toBeLessThan(atStall + 5_000); // the last step's counters are older
    await s.stop();
    expect(s.counters!.bytesFetched).toBe(s.totals!.bytesFetched);
  });

  it('counters read between steps are not replaced by an older step: the newest is kept', async () => {
    const { s, rec, fakes } = session((name) => (name === 'pipeline-train' ? { nextMs: 250 } : {}));
    void s.start();
    await until('a few steps', () => rec.steps.length >= 3);
    const train = fakes.workers.find((w) => w.name === 'pipeline-train')!;
    // Read ahead: the reader's counters, asked for between steps, count 1 MB more than any batch it hands over says.
    const api = train.api as unknown as { stats(): Promise<{ bytesFetched: number }> };
    const handedOver = api.stats.bind(api);
    api.stats = async () => ((st) => ({ ...st, bytesFetched: st.bytesFetched + 1_000_000 }))(await handedOver());
    await until('the counters read', () => (s.counters?.bytesFetched ?? 0) >= 1_000_000, 3_000);
    const steps = rec.steps.length;
    await until('two more steps', () => rec.steps.length >= steps + 2);
    expect(rec.steps.at(-1)!.pipeline.bytesFetched).toBeLessThan(1_000_000); // the steps' own counters are older
    expect(s.counters!.bytesFetched).toBeGreaterThanOrEqual(1_000_000);
    await s.stop();
  });
});

describe('checkpoints and exact resume', () => {
  /** Runs until `steps` steps are reported, saving checkpoints, and stops. */
  async function runTo(steps: number, over: Partial<SessionConfig>, behaviour?: (name: string) => FakeBehaviour) {
    const saved: Checkpoint[] = [];
    const { s, rec } = session(behaviour, { readers: 2, checkpointEvery: 10, saveCheckpoint: async (c) => void saved.push(structuredClone(c)), ...over });
    const done = s.start();
    await until(`${steps} steps`, () => rec.steps.length > 0 && rec.steps.at(-1)!.step >= steps);
    await s.stop();
    await done;
    return { saved, rec, s };
  }

  it('a run with a last step (a sweep run) ends after it, evaluated there; continued from a checkpoint, it ends there too', async () => {
    const saved: Checkpoint[] = [];
    const { s, rec, fakes } = session(undefined, {
      lastStep: 7,
      evalEvery: 5,
      checkpointEvery: 1,
      saveCheckpoint: async (c) => void saved.push(structuredClone(c)),
    });
    void s.start();
    await until('the first step', () => rec.steps.length > 0);
    // Its readers slow to give their last counters: the run winds down for a while after it has ended.
    const api = fakes.workers.find((w) => w.name === 'pipeline-train')!.api as unknown as { stats(): Promise<unknown> };
    const counters = api.stats.bind(api);
    api.stats = async () => {
      await sleep(300);
      return counters();
    };
    await until('the run ends', () => s.ended);
    // A stop (as a sweep's, or the next Start's) waits for the run to wind down: the next run does not open beside it.
    await s.stop();
    expect(fakes.workers.every((w) => w.terminated)).toBe(true);
    expect(rec.steps.map((m) => m.step)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(rec.evals.map((e) => e.step)).toEqual([5, 7]); // the last step's evaluation, though not due by evalEvery
    expect(rec.states.at(-1)).toEqual({ state: 'stopped', detail: 'trained its 7 steps' });
    const at5 = saved.find((c) => c.step === 5)!;
    expect(at5.config.lastStep).toBe(7);
    expect(at5.freshTrained).toBe(5 * 16); // the fake echoes nothing: every example trained is fresh
    const continued = session(undefined, { resume: at5 }); // the page's config has no last step: the saved run's holds
    await continued.s.start();
    expect(continued.rec.steps.map((m) => m.step)).toEqual([6, 7]);
    // Continued from its last step (a finished sweep run): Continue means more steps, not a run that ends at once.
    const again: Checkpoint[] = [];
    const past = session(undefined, { resume: saved.find((c) => c.step === 7)!, checkpointEvery: 1, saveCheckpoint: async (c) => void again.push(c) });
    void past.s.start();
    await until('steps past the last step', () => past.rec.steps.length >= 2);
    await past.s.stop();
    expect(past.rec.steps[0]!.step).toBe(8);
    expect(again.find((c) => c.step === 8)!.freshTrained).toBe(8 * 16); // counted on from the checkpoint's
  });

  it('a run continued from its checkpoint trains on the same batches and reaches the same losses as the run that was not interrupted', async () => {
    const a = await runTo(32, {});
    const at20 = a.saved.find((c) => c.step === 20)!;
    expect(at20, 'a checkpoint every 10 steps').toBeDefined();
    expect(at20.tapes).toHaveLength(2);
    expect(at20.history.steps.at(-1)![0]).toBeLessThanOrEqual(20);
    let restored: Checkpoint['history'] | undefined;
    const b = await runTo(32, { resume: at20, readers: 1, seed: 99 }); // the saved run's readers and seed win
    const bSteps = b.rec.steps;
    expect(bSteps[0]!.step).toBe(21);
    const loss = (steps: StepMetrics[], from: number, to: number) => steps.filter((m) => m.step >= from && m.step <= to).map((m) => m.loss);
    // Same weights, same Adam moments and step count, same batches from the same readers in the same turn: the same losses, bit for bit.
    expect(loss(bSteps, 21, 32)).toEqual(loss(a.rec.steps, 21, 32));
    expect(b.s.runId).toBe(a.s.runId);
    // The chart history comes back too.
    const c = new LabSession(config({ resume: at20 }), { ...recorder().listener, restored: (h) => (restored = h) }, fakePipelines().start);
    const done = c.start();
    await until('restored history', () => restored !== undefined);
    await c.stop();
    await done;
    expect(restored!.evals.map((e) => e[0])).toEqual([10, 20]);
  });

  it('a reader that runs dry leaves the turn and the others read on; a run continued after it left takes the same batches', async () => {
    const message = 'no readable data in split "train" (partition 2 of 3): its one record failed';
    const dry = (name: string): FakeBehaviour => (name === 'pipeline-train-1' ? { failAfter: { batches: 4, message, name: 'NoReadableData' } } : {});
    const a = await runTo(32, { readers: 3 }, dry);
    expect(a.s.state).toBe('stopped');
    expect(a.rec.warnings).toContain(`reader 2 of 3 left the run, the others read on: ${message}`);
    // Reader 2 gave batches 1, 4, 7 and 10, and left when batch 13 was asked for.
    const at10 = a.saved.find((c) => c.step === 10)!;
    const at20 = a.saved.find((c) => c.step === 20)!;
    expect(at10.readersLeft).toBeUndefined();
    expect(at20.readersLeft).toEqual([{ rank: 1, batch: 13 }]);
    const loss = (steps: StepMetrics[]) => steps.filter((m) => m.step >= 21 && m.step <= 32).map((m) => m.loss);
    // From before it left (the resumed run meets the dry reader itself) and from after (the checkpoint says it left): the same losses.
    const [before, after] = [await runTo(32, { resume: at10 }, dry), await runTo(32, { resume: at20 }, dry)];
    for (const b of [before, after]) expect(loss(b.rec.steps)).toEqual(loss(a.rec.steps));
    expect(after.rec.warnings).toContain('reader 2 of 3 left the saved run at step 13 and stays out');
    expect(before.rec.warnings).toContain(`reader 2 of 3 left the run, the others read on: ${message}`);
    // Reader 3 gives batches 2, 5, ..., 17 and leaves when batch 20 is asked for, while step 20 trains: the checkpoint at step 20 has it.
    const dry3 = (name: string): FakeBehaviour => (name === 'pipeline-train-2' ? { failAfter: { batches: 6, message, name: 'NoReadableData' } } : {});
    const c = await runTo(32, { readers: 3 }, dry3);
    const c20 = c.saved.find((k) => k.step === 20)!;
    expect(c20.readersLeft).toEqual([{ rank: 2, batch: 20 }]);
    expect(loss((await runTo(32, { resume: c20 }, dry3)).rec.steps)).toEqual(loss(c.rec.steps));
    // A checkpoint whose readers could not have left when it says is refused.
    expect(() => validateCheckpoint({ ...at20, readersLeft: [{ rank: 2, batch: 13 }] })).toThrow(
      "the saved run cannot be continued: reader 3 left at batch 13, when it was reader 2's turn",
    );
    expect(() => validateCheckpoint({ ...at20, readersLeft: [{ rank: 1, batch: 21 }] })).toThrow(/reader 2 left at batch 21, out of order/);
  });

  it('when the last reader runs dry the run fails with its reason; another failure of one reader fails the run at once', async () => {
    const dry = { failAfter: { batches: 2, message: 'no readable data in split "train"', name: 'NoReadableData' } };
    const a = session((name) => (name.startsWith('pipeline-train') ? dry : {}), { readers: 2 });
    await a.s.start();
    expect(a.s.state).toBe('failed');
    expect(a.rec.warnings.filter((w) => w.includes('left the run'))).toHaveLength(1);
    expect(a.rec.states.at(-1)!.detail).toContain('no readable data in split "train"');
    const b = session((name) => (name === 'pipeline-train-1' ? { failAfter: { batches: 2, message: 'decoder crashed' } } : {}), { readers: 2 });
    await b.s.start();
    expect(b.rec.states.at(-1)).toEqual({ state: 'failed', detail: 'decoder crashed' });
  });

  it('losses after a resume differ without the saved optimiser state: the test sees what a checkpoint must keep', async () => {
    const a = await runTo(26, {});
    const at20 = a.saved.find((c) => c.step === 20)!;
    const b = await runTo(26, { resume: { ...at20, model: { ...at20.model, iterations: 0, moments: [] } } });
    const loss = (steps: StepMetrics[]) => steps.filter((m) => m.step > 20 && m.step <= 26).map((m) => m.loss);
    expect(loss(b.rec.steps)).not.toEqual(loss(a.rec.steps));
  });

  it('each evaluation reports a confusion matrix that sums to the test split, its trace the accuracy', async () => {
    const { s, rec } = session();
    const done = s.start();
    await until('an evaluation', () => rec.evals.length >= 1);
    await s.stop();
    await done;
    const e = rec.evals[0]!;
    expect(e.confusion).toHaveLength(4); // 2 classes
    expect(e.confusion.reduce((a, b) => a + b, 0)).toBe(e.examples);
    expect((e.confusion[0]! + e.confusion[3]!) / e.examples).toBeCloseTo(e.accuracy, 6);
    // The mistakes shown are ones: their predicted class is not their label.
    for (const m of e.mistakes) expect(m.predicted).not.toBe(m.label);
  });

  it('a model captured after Stop starts a new run that evaluates to the same accuracy before its first step', async () => {
    const a = await runTo(15, {});
    const model = await a.s.captureModel();
    expect(model).toBeDefined();
    const { s, rec } = session(undefined, { initialModel: { ...model!, iterations: 0, moments: [], betaPowers: [0.9, 0.999] }, evalEvery: 1000 });
    const done = s.start();
    await until('the first evaluation', () => rec.evals.length >= 1);
    await s.stop();
    await done;
    expect(rec.evals[0]!.step).toBe(0);
    // The same weights on the same test split (the fake's test batches depend only on their index).
    const reference = session(undefined, { evalEvery: 1000, initialModel: { ...model!, iterations: 0, moments: [], betaPowers: [0.9, 0.999] } });
    const done2 = reference.s.start();
    await until('the reference evaluation', () => reference.rec.evals.length >= 1);
    await reference.s.stop();
    await done2;
    expect(rec.evals[0]!.accuracy).toBe(reference.rec.evals[0]!.accuracy);
    // Trained weights, not a fresh model's guess (2 classes: 0.5); a run stopped near step 15 has scored 0.597-0.7.
    expect(rec.evals[0]!.accuracy).toBeGreaterThan(0.55);
  });

  it('a stop takes a checkpoint at the step it stopped on, so Continue goes on from there', async () => {
    const saved: Checkpoint[] = [];
    const { s, rec } = session(undefined, { checkpointEvery: 1000, saveCheckpoint: async (c) => void saved.push(c) });
    const done = s.start();
    await until('5 steps', () => rec.steps.length >= 5);
    const stopped = Promise.all([s.stop(), s.stop()]); // a double click waits for the same stop
    expect(s.state).toBe('stopping'); // at once, while the step in hand finishes
    await stopped;
    await done;
    await s.checkpointsWritten();
    expect(saved).toHaveLength(1);
    expect(saved[0]!.step).toBe(rec.steps.at(-1)!.step);
    expect(s.state).toBe('stopped');
  });

  it('an image size reaches every pipeline it opens and the checkpoint; a continued run decodes at the saved size', async () => {
    const saved: Checkpoint[] = [];
    const size = { width: 32, height: 24 };
    const a = session(undefined, { imageSize: size, readers: 2, checkpointEvery: 1000, saveCheckpoint: async (c) => void saved.push(c) });
    const done = a.s.start();
    await until('5 steps', () => a.rec.steps.length >= 5);
    a.s.pause();
    await until('a checkpoint', () => saved.length > 0);
    await a.s.stop();
    await done;
    const opened = a.fakes.workers.filter((w) => w.options);
    expect(opened.map((w) => w.options!.split).sort()).toEqual(['test', 'train', 'train']);
    expect(opened.every((w) => w.options!.imageSize === size)).toBe(true);
    expect(saved[0]!.config.imageSize).toEqual(size);
    // Continued with another size asked for, or none: the saved one wins (a checkpoint without one: the manifest's).
    for (const [resume, want] of [
      [saved[0]!, size],
      [{ ...saved[0]!, config: { ...saved[0]!.config, imageSize: undefined } }, undefined],
    ] as const) {
      const b = session(undefined, { resume, imageSize: { width: 64, height: 64 } });
      const running = b.s.start();
      await until('a step', () => b.rec.steps.length > 0);
      await b.s.stop();
      await running;
      expect(b.fakes.workers.filter((w) => w.options).every((w) => w.options!.imageSize === want)).toBe(true);
    }
  });

  it("a TOC model's first-layer k (tocColumns) reaches every pipeline it opens; other models send none", async () => {
    for (const tocColumns of [64, 'classes', undefined] as const) {
      const base = config().model;
      const a = session(undefined, { model: { ...base, ...(tocColumns === undefined ? {} : { tocColumns }) } });
      const done = a.s.start();
      await until('a step', () => a.rec.steps.length > 0);
      await a.s.stop();
      await done;
      const opened = a.fakes.workers.filter((w) => w.options);
      expect(opened.map((w) => w.options!.split).sort()).toEqual(['test', 'train']);
      for (const w of opened) {
        if (tocColumns === undefined) expect(w.options).not.toHaveProperty('tocColumns');
        else expect(w.options!.tocColumns).toBe(tocColumns);
      }
    }
  });

  it('Pause then Stop while the trainer waits for data still saves the run where it paused', async () => {
    const { s, rec, saved } = savingSession({ nextMs: 600 });
    const done = s.start();
    await until('3 steps', () => rec.steps.length >= 3);
    s.pause(); // the trainer waits for its next batch, not yet at its gate: no checkpoint so far
    await sleep(50);
    await s.stop();
    await done;
    expect(saved.length).toBe(1); // before, the stop took none: Continue went back to the last periodic one
    expect(saved[0]!.step).toBe(rec.steps.at(-1)!.step);
  });

  it('Pause while the trainer waits for data that never comes saves the run at once: a reload then keeps it', async () => {
    const { s, rec, saved } = savingSession({ hangAfter: 6 });
    const done = s.start();
    await until('the last batch trained', () => rec.steps.length >= 6);
    await sleep(50);
    s.pause();
    expect(s.unsaved).toBe(true); // a reload now would lose the 6 steps: the page asks before leaving
    // Before, the pause's checkpoint waited for a gate the trainer reaches only with its next batch, which never came.
    await until('the pause saved', () => saved.length === 1, 2_000);
    expect(saved[0]!.step).toBe(6);
    await until('nothing left unsaved', () => !s.unsaved, 2_000);
    // Resumed and stopped: the stop saves the same step once more (nothing trained since), the run ends at once.
    s.resume();
    s.pause();
    await s.stop();
    await done;
    await s.checkpointsWritten();
    expect(saved.map((c) => c.step).every((step) => step === 6)).toBe(true);
  });

  it('a link that stalls after steps saves them once the stall shows, without a Pause: a reload then keeps them', async () => {
    const { s, rec, saved } = savingSession({ hangAfter: 6 });
    const done = s.start();
    await until('the last batch trained', () => rec.steps.length >= 6);
    expect(saved).toEqual([]); // checkpointEvery 1000: none yet
    // Before, nothing was saved until the next step (never, here), a Pause or a Stop: a reload lost the 6 steps.
    await until('the stall saved', () => saved.length === 1, STALL_MS + 3_000);
    expect(saved[0]!.step).toBe(6);
    expect(s.state).toBe('running'); // still waiting for data, not paused
    await sleep(2_500);
    expect(saved.length).toBe(1); // the stall goes on, nothing more to save
    // Pause then saves nothing new (the same step, the same controls), and has nothing unsaved.
    s.pause();
    await sleep(200);
    expect(saved.length).toBe(1);
    expect(s.unsaved).toBe(false);
    // A control changed since is kept: the next pause saves the step again, with it.
    s.resume();
    s.setEchoFactor(3);
    s.pause();
    await until('the pause saved the new echo factor', () => saved.length === 2, 2_000);
    expect(saved[1]!.step).toBe(6);
    expect(saved[1]!.controls.echoFactor).toBe(3);
    await s.stop();
    await done;
  });

  it('a link that stalls and comes back: the stall is saved, and training goes on after it', async () => {
    const { s, rec, saved } = savingSession({ stallAt: { batches: 5, ms: STALL_MS + 2_500 } });
    const done = s.start();
    await until('the stall saved', () => saved.length === 1, STALL_MS + 4_000);
    expect(saved[0]!.step).toBe(5);
    await until('steps after the stall', () => rec.steps.length >= 8, 5_000); // the gate closed for the copy opened again
    await s.stop();
    await done;
  });

  it('a Stop is unsaved until its checkpoint is written, and ends with it written', async () => {
    const { s, rec, saved } = savingSession({ nextMs: 20 });
    const done = s.start();
    await until('5 steps', () => rec.steps.length >= 5);
    const stopping = s.stop();
    expect(s.unsaved).toBe(true); // a reload now would lose the steps since the start: the page asks first
    await stopping;
    await done;
    expect(s.unsaved).toBe(false);
    expect(saved.at(-1)?.step).toBe(rec.steps.at(-1)!.step); // written by the time the run is stopped, not after
  });

  it('a run paused before its first step has nothing unsaved: leaving the page then is not asked about', async () => {
    const { s } = session((name) => (name === 'pipeline-train' ? { hangAfter: 0 } : {}), { saveCheckpoint: async () => undefined });
    const done = s.start();
    await until('running', () => s.state === 'running');
    await sleep(50);
    s.pause();
    await sleep(50);
    expect(s.unsaved).toBe(false); // before, true for the whole pause: every reload asked "Leave site?"
    await s.stop();
    await done;
  });

  it('Stop while the trainer waits for data that never comes (a stalled link) saves the run at its last step, at once', async () => {
    for (const pauseFirst of [false, true]) {
      const { s, rec, saved } = savingSession({ hangAfter: 6 });
      const done = s.start();
      await until('the last batch trained', () => rec.steps.length >= 6);
      await sleep(50);
      if (pauseFirst) s.pause();
      const stopMs = await timed(s.stop());
      await done;
      await s.checkpointsWritten();
      // Before, the stop waited 3 s for a gate the trainer never reached, and saved nothing: all 6 steps lost.
      expect(saved.map((c) => c.step)).toEqual([6]);
      expect(stopMs).toBeLessThan(2500); // the old path waited 3 s (STOP_CHECKPOINT_WAIT_MS) for a gate never reached
    }
  });

  it('the model asked for while the trainer waits for data comes at once, and the run goes on after', async () => {
    const { s, rec } = session((name) => (name === 'pipeline-train' ? { nextMs: 2000 } : {}));
    const done = s.start();
    await until('2 steps', () => rec.steps.length >= 2);
    await sleep(100); // the trainer waits for its next batch
    const t0 = Date.now();
    const model = await s.captureModel();
    expect(Date.now() - t0).toBeLessThan(1000); // it waited for the next step's gate, 1.9 s here (a stalled link: never)
    expect(model!.weights.length).toBeGreaterThan(0);
    await until('another step', () => rec.steps.length >= 3); // the gate closed for the copy opened again
    await s.stop();
    await done;
  });

  it("the model asked for while a stall's checkpoint is being taken comes at once, and that checkpoint is still saved", async () => {
    const { s, rec, saved } = savingSession({ hangAfter: 6 });
    const done = s.start();
    await until('the last batch trained', () => rec.steps.length >= 6);
    // The checkpoint first waits for the read-back of the last losses: held here for 1.5 s (a slow GPU), so the model
    // is asked for while the stall's checkpoint holds the gate.
    let holding = false;
    const held = vi.spyOn(Trainer.prototype, 'reportsDone').mockImplementation(() => {
      holding = true;
      return sleep(1_500).then(() => undefined);
    });
    try {
      await until("the stall's checkpoint began", () => holding, STALL_MS + 3_000);
      const t0 = Date.now();
      const model = await s.captureModel();
      expect(Date.now() - t0).toBeLessThan(1_000);
      expect(model!.weights.length).toBeGreaterThan(0);
      // Had the model's copy opened the gate, the checkpoint would see the run resumed and save nothing.
      await until('the stall saved', () => saved.length === 1, 3_000);
      expect(saved[0]!.step).toBe(6);
    } finally {
      held.mockRestore();
    }
    await s.stop();
    await done;
  });

  it("a slow device's losses trail a Stop by over 3 s, one every 1.2 s: the stop waits for them all, and saves the step the page shows", async () => {
    // A device that reads a loss back 1.2 s after the one before (the CNN on SwiftShader: 2 steps and 3 s behind).
    let device: Promise<unknown> = Promise.resolve();
    const data = tf.Tensor.prototype.data;
    const slow = vi.spyOn(tf.Tensor.prototype, 'data').mockImplementation(function (this: tf.Tensor) {
      if (this.size !== 1) return data.call(this);
      const read = data.call(this); // read now, before the caller disposes the tensor
      device = device.then(() => sleep(1200));
      return device.then(() => read);
    });
    try {
      const { s, rec, saved } = savingSession({});
      const done = s.start();
      await until('2 steps', () => rec.steps.length >= 2);
      const t0 = Date.now();
      await s.stop();
      const stopMs = Date.now() - t0;
      await done;
      await s.checkpointsWritten();
      expect(stopMs).toBeGreaterThan(3000); // the losses still to come took longer than one 3-s wait
      expect(saved).toHaveLength(1);
      expect(saved[0]!.step).toBe(rec.steps.at(-1)!.step); // before, the checkpoint held steps never reported
    } finally {
      slow.mockRestore();
    }
  });

  it('a pause takes a checkpoint at the step it paused on', async () => {
    const saved: Checkpoint[] = [];
    const { s, rec } = session(undefined, { checkpointEvery: 1000, saveCheckpoint: async (c) => void saved.push(c) });
    const done = s.start();
    await until('5 steps', () => rec.steps.length >= 5);
    s.pause();
    await until('a checkpoint', () => saved.length > 0);
    const paused = saved[0]!;
    await sleep(100);
    expect(rec.steps.at(-1)!.step).toBe(paused.step); // nothing trained after it
    expect(paused.model.weights.length).toBeGreaterThan(0);
    await s.stop();
    await done;
  });
});

describe('deferred evaluation (evalMode deferred)', () => {
  /** Weights of a briefly trained model, so both runs of a comparison start from the same ones (a new model's are random). */
  async function startingWeights(): Promise<ModelState> {
    const { s, rec } = session();
    const done = s.start();
    await until('3 steps', () => rec.steps.length >= 3);
    await s.stop();
    await done;
    return freshOptimizerState((await s.captureModel())!.weights);
  }

  it('evaluates the same weights live evaluation does: the same accuracies, losses and confusion at the same steps, with their times', async () => {
    const initialModel = await startingWeights();
    const train = (name: string): FakeBehaviour => (name === 'pipeline-train' ? { batches: 23 } : {});
    const runs = [];
    for (const evalMode of ['live', 'deferred'] as const) {
      const r = session(train, { initialModel, evalEvery: 5, evalMode });
      const stepsAtFirstEval: number[] = [];
      const listener = r.rec.listener;
      const eval0 = listener.eval;
      listener.eval = (m) => {
        stepsAtFirstEval.push(r.rec.steps.length);
        eval0(m);
      };
      await r.s.start();
      expect(r.s.state).toBe('stopped');
      runs.push({ ...r, evalMode, stepsAtFirstEval, model: await r.s.captureModel() });
    }
    const [live, deferred] = runs as [(typeof runs)[0], (typeof runs)[0]];
    // Same start, same batches, the CPU backend: the same training either way.
    expect(deferred.rec.steps.map((m) => m.loss)).toEqual(live.rec.steps.map((m) => m.loss));
    const steps = [0, 5, 10, 15, 20, 23]; // before the first step (a loaded model), every 5, and where the stream ended
    expect(live.rec.evals.map((e) => e.step)).toEqual(steps);
    expect(deferred.rec.evals.map((e) => e.step)).toEqual(steps);
    const seen = (e: EvalMetrics) => ({ step: e.step, accuracy: e.accuracy, loss: e.loss, confusion: e.confusion, examples: e.examples });
    expect(deferred.rec.evals.map(seen)).toEqual(live.rec.evals.map(seen));
    // The weights changed between evaluations (the comparison would pass vacuously otherwise).
    expect(new Set(live.rec.evals.map((e) => e.loss)).size).toBe(steps.length);
    // Deferred: none during training, each marked and reported with its own step's trainer clock.
    expect(deferred.stepsAtFirstEval[0]).toBe(23);
    expect(live.stepsAtFirstEval[1]).toBeLessThan(23);
    expect(deferred.rec.evals.every((e) => e.deferred)).toBe(true);
    expect(live.rec.evals.some((e) => e.deferred)).toBe(false);
    const timeAt = (r: typeof live, step: number) => (step === 0 ? 0 : r.rec.steps.find((m) => m.step === step)!.time);
    for (const r of runs) for (const e of r.rec.evals) expect(e.time).toBe(timeAt(r, e.step));
    // The model is left with its trained weights, not the last snapshot's.
    expect(deferred.model!.weights).toEqual(live.model!.weights);
  });

  it('a checkpoint keeps the evaluations still to make: a deferred run continued after a reload makes them, as the run would have', async () => {
    const saved: Checkpoint[] = [];
    const over = { evalEvery: 5, evalMode: 'deferred' as const, checkpointEvery: 10 };
    const a = session(undefined, { ...over, saveCheckpoint: async (c) => void saved.push(structuredClone(c)) });
    const aDone = a.s.start();
    await until('32 steps', () => (a.rec.steps.at(-1)?.step ?? 0) >= 32);
    await a.s.stop();
    await aDone;
    const at20 = saved.find((c) => c.step === 20)!;
    expect(at20.model.pending?.map((p) => p.step)).toEqual([5, 10, 15, 20]);
    expect(at20.history.evals).toEqual([]); // none made yet: without the pending weights they would be lost
    const before = tf.memory().numTensors;
    const pending: number[] = [];
    const b = session(undefined, { ...over, resume: at20 });
    b.rec.listener.pendingEvals = (n) => pending.push(n);
    const bDone = b.s.start();
    await until('32 steps', () => (b.rec.steps.at(-1)?.step ?? 0) >= 32);
    await b.s.stop();
    await bDone;
    expect(pending[0]).toBe(4); // the page shows them pending from the start
    // The same weights evaluated: the same figures; those saved keep their trainer clock (the later steps' is this run's own).
    const seen = (e: EvalMetrics) => ({ step: e.step, accuracy: e.accuracy, loss: e.loss, ...(e.step <= 20 ? { time: e.time } : {}) });
    const common = (r: typeof a) => r.rec.evals.filter((e) => e.step <= 30).map(seen);
    expect(common(b).map((e) => e.step)).toEqual([5, 10, 15, 20, 25, 30]);
    expect(common(b)).toEqual(common(a));
    await sleep(100);
    expect(tf.memory().numTensors).toBeLessThanOrEqual(before);
  });

  it('the stop’s checkpoint, taken before its snapshots are evaluated, is written again without them and with their accuracies', async () => {
    const saved: Checkpoint[] = [];
    const { s, rec } = session(undefined, { evalEvery: 4, evalMode: 'deferred', saveCheckpoint: async (c) => void saved.push(structuredClone(c)) });
    const done = s.start();
    await until('13 steps', () => rec.steps.length >= 13);
    await s.stop();
    await done;
    const last = saved.at(-1)!;
    const due = Array.from({ length: Math.floor(last.step / 4) }, (_, i) => 4 * (i + 1));
    expect(saved.at(-2)!.model.pending?.map((p) => p.step)).toEqual(due); // as the stop took it
    expect(last.step).toBe(saved.at(-2)!.step);
    expect(last.model.pending).toBeUndefined(); // a continued run does not evaluate them again
    expect(last.history.evals.map(([step]) => step)).toEqual(due);
    expect(last.history.evals.map(([, accuracy]) => accuracy)).toEqual(rec.evals.map((e) => e.accuracy));
    // The test split's examples per class, for the accuracy tile's baseline after a reload.
    const counts = last.history.classCounts!;
    expect(counts.reduce((a, b) => a + b, 0)).toBe(rec.evals.at(-1)!.examples);
  });

  it('a run that ends on its own evaluates its snapshots, and its last checkpoint is written again without them', async () => {
    const saved: Checkpoint[] = [];
    const { s, rec } = session(undefined, {
      evalEvery: 4,
      evalMode: 'deferred',
      checkpointEvery: 8,
      lastStep: 12,
      saveCheckpoint: async (c) => void saved.push(structuredClone(c)),
    });
    await s.start();
    expect(rec.evals.map((e) => e.step)).toEqual([4, 8, 12]);
    const at8 = saved.filter((c) => c.step === 8);
    expect(at8[0]!.model.pending?.map((p) => p.step)).toEqual([4, 8]);
    expect(at8.at(-1)!.model.pending).toBeUndefined();
    expect(at8.at(-1)!.history.evals.map(([step]) => step)).toEqual([4, 8]);
    expect(at8.at(-1)!.savedAt).toBe(at8[0]!.savedAt); // the same point of the run: it does not outrank a later checkpoint
  });

  it('a stopped run evaluates its snapshots during Stop, each once, and disposes them: no tensors leak', async () => {
    const before = tf.memory().numTensors;
    const pending: number[] = [];
    const { s, rec } = session(undefined, { evalEvery: 4, evalMode: 'deferred' });
    const done = s.start();
    rec.listener.pendingEvals = (n) => pending.push(n);
    await until('13 steps', () => rec.steps.length >= 13);
    expect(rec.evals).toHaveLength(0);
    expect(pending.slice(0, 3)).toEqual([1, 2, 3]);
    await s.stop();
    await done;
    expect(s.state).toBe('stopped');
    expect(rec.states.find((x) => x.state === 'stopping')!.detail).toMatch(/deferred evaluation/);
    const last = rec.steps.at(-1)!.step;
    const due = Array.from({ length: Math.floor(last / 4) }, (_, i) => 4 * (i + 1));
    expect(rec.evals.map((e) => e.step)).toEqual(due);
    expect(pending.at(-1)).toBe(0);
    await sleep(100); // abandoned readbacks dispose their tensors when they land
    expect(tf.memory().numTensors).toBe(before);
  });
});

describe('a run that diverges', () => {
  it('fails at the first step whose loss is not finite, saying so, and keeps the last checkpoint from before it', async () => {
    const saved: Checkpoint[] = [];
    // Adam moves each weight by about the learning rate a step: at 1e38 the weights overflow float32 within a few steps.
    const { s, rec } = session(undefined, { learningRate: 1e38, checkpointEvery: 1, saveCheckpoint: async (c) => void saved.push(structuredClone(c)) });
    await s.start();
    await s.checkpointsWritten();
    expect(s.state).toBe('failed');
    const bad = rec.steps.find((m) => !Number.isFinite(m.loss))!;
    expect(bad).toBeDefined();
    expect(rec.steps.at(-1)).toBe(bad); // no step reported after it
    expect(rec.states.at(-1)!.detail).toBe(
      `the loss is ${bad.loss} at step ${bad.step}: training diverged (a lower learning rate may help); the last checkpoint before it is kept`,
    );
    // Every checkpoint is from before it: Continue goes on from weights that are numbers.
    expect(saved.length).toBeGreaterThan(0);
    expect(saved.at(-1)!.step).toBe(bad.step - 1);
    for (const c of saved) expect(c.model.weights.every((w) => w.data.every(Number.isFinite))).toBe(true);
  });

  it('one that diverges before its first checkpoint does not speak of one', async () => {
    const { s, rec } = session(undefined, { learningRate: 1e38, checkpointEvery: 1000, saveCheckpoint: async () => undefined });
    await s.start();
    expect(s.state).toBe('failed');
    expect(rec.states.at(-1)!.detail).toMatch(/training diverged \(a lower learning rate may help\); it had no checkpoint yet$/);
  });
});
