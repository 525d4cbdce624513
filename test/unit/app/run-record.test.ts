// The run record the runs panel compares: curves against each x-axis, the time
// and bytes to a target accuracy, CSV export, and checks on imported files.
import { describe, expect, it } from 'vitest';
import { addStep, curve, FreshTrained, runCsv, summarize, validateRunRecord, type RunRecord } from '../../../src/train/run-record.js';

function run(): RunRecord {
  return {
    id: 'r1',
    name: 'group 3',
    startedAt: 0,
    updatedAt: 0,
    dataset: 'mini',
    model: 'tiny',
    settings: { batchSize: 32, seed: 1, learningRate: 0.005, fidelity: 3, echoFactor: 1, echoMode: 'examples', readers: 1 },
    state: 'stopped',
    // [step, time, loss, MiB, fresh]
    steps: [
      [1, 0.5, 2.3, 0.1, 32],
      [2, 1.0, 2.0, 0.2, 64],
      [3, 1.5, 1.7, 0.3, 96],
      [4, 2.0, 1.5, 0.4, 128],
    ],
    // [step, time, accuracy, loss, MiB, fresh]
    evals: [
      [2, 1.0, 0.55, 1.9, 0.2, 64],
      [4, 2.0, 0.72, 1.4, 0.4, 128],
    ],
    marks: [[3, 'group 2']],
  };
}

describe('run record', () => {
  it('draws accuracy from evaluations and loss from steps, against each x-axis', () => {
    expect(curve(run(), 'accuracy', 'step')).toEqual({ xs: [2, 4], ys: [0.55, 0.72] });
    expect(curve(run(), 'accuracy', 'time').xs).toEqual([1, 2]);
    expect(curve(run(), 'accuracy', 'mib').xs).toEqual([0.2, 0.4]);
    expect(curve(run(), 'accuracy', 'fresh').xs).toEqual([64, 128]);
    expect(curve(run(), 'loss', 'fresh')).toEqual({ xs: [32, 64, 96, 128], ys: [2.3, 2.0, 1.7, 1.5] });
  });

  it('time, bytes and fresh examples to a target are those of the first evaluation that reaches it', () => {
    expect(summarize(run(), 0.7)).toEqual({ steps: 4, bestAccuracy: 0.72, finalLoss: 1.5, toTarget: { step: 4, time: 2, mib: 0.4, fresh: 128 } });
    expect(summarize(run(), 0.5).toTarget?.step).toBe(2);
    expect(summarize(run(), 0.8).toTarget).toBeUndefined();
  });

  it('keeps long runs bounded by thinning old steps, keeping the latest', () => {
    const r = run();
    for (let s = 5; s < 10_000; s++) addStep(r, [s, s, 1, 0, s]);
    expect(r.steps.length).toBeLessThanOrEqual(4_000);
    expect(r.steps.at(-1)![0]).toBe(9_999);
  });

  it('exports steps with their evaluations as CSV, the fresh column named for what the record counts', () => {
    const lines = runCsv({ ...run(), fresh: 'trained' })
      .trim()
      .split('\n');
    expect(lines[0]).toBe('step,time_s,loss,mib_fetched,fresh_examples_trained,test_accuracy,test_loss');
    expect(lines[2]).toBe('2,1.000,2,0.2000,64,0.55,1.9');
    expect(lines[3]).toBe('3,1.500,1.7,0.3000,96,,');
    // A record from before fresh examples trained were counted holds examples read (read-ahead included).
    expect(runCsv(run()).split('\n')[0]).toBe('step,time_s,loss,mib_fetched,fresh_examples_read,test_accuracy,test_loss');
  });

  // Birdstrikes: one TOC record holds the whole training split (9,058 rows), read whole before the first batch, in batches
  // of 250 rows; 4 batches are queued ahead of the trainer and the shuffle buffer holds 4 more.
  const batch = 250;
  /** The counters step `k` (from 1) comes with at echo factor `e` (a whole number: each fresh batch e times in all). */
  const counters = (k: number, e: number) => {
    const emitted = (k + 4) * batch; // handed out and queued
    const passedEcho = emitted + 4 * batch; // and in the shuffle buffer
    return { examplesRead: 9_058, examplesEmitted: emitted, examplesEchoed: Math.round((passedEcho * (e - 1)) / e) };
  };
  const countTo = (steps: number, e: number) => {
    const fresh = new FreshTrained();
    const out: number[] = [];
    for (let k = 1; k <= steps; k++) out.push(fresh.step(batch, counters(k, e)));
    return out;
  };

  it('counts fresh examples trained, not the records read ahead: an echo sweep on one record tells the factors apart', () => {
    // Echo 1 echoes nothing: every example trained is fresh, exactly, though the pipeline read 9,058 and queued 4 batches more.
    expect(countTo(10, 1).at(-1)).toBe(10 * batch);
    const at10 = [1, 2, 3].map((e) => countTo(10, e).at(-1)!);
    expect(at10[1]).toBeLessThan(at10[0]!);
    expect(at10[2]).toBeLessThan(at10[1]!);
    for (const e of [1, 2, 3]) {
      const xs = countTo(40, e);
      xs.forEach((x, i) => {
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual((i + 1) * batch); // never more than trained
        if (i > 0) expect(x).toBeGreaterThanOrEqual(xs[i - 1]!); // never less than before
      });
      // Long after the buffers filled, within their size of trained / e.
      expect(Math.abs(xs.at(-1)! - (40 * batch) / e)).toBeLessThanOrEqual(4 * batch);
    }
  });

  it("a continued run goes on from its checkpoint's count, by what its own counters add from its first step", () => {
    const fresh = new FreshTrained(5_000, true);
    // The resumed pipeline counts from 0, less the copies of the batches it worked out without handing them over.
    // Its first step's batch is in its counters already, and is counted (whole: exact at echo 1, as an uninterrupted run counts).
    const first = fresh.step(batch, { examplesEmitted: 5 * batch, examplesEchoed: 9 * batch });
    expect(first).toBe(5_000 + batch);
    expect(fresh.step(batch, { examplesEmitted: 6 * batch, examplesEchoed: 9.5 * batch })).toBe(5_000 + 1.5 * batch);
    expect(fresh.step(batch, { examplesEmitted: 7 * batch, examplesEchoed: 10 * batch })).toBe(5_000 + 2 * batch);
  });

  it('at echo 1 a continued run counts as the run that was not interrupted', () => {
    const whole = new FreshTrained();
    const counters = (n: number) => ({ examplesEmitted: n * batch, examplesEchoed: 0 });
    for (let s = 1; s <= 6; s++) whole.step(batch, counters(s));
    const continued = new FreshTrained(3 * batch, true); // checkpoint at step 3; its pipeline counts from 0
    let last = 0;
    for (let s = 1; s <= 3; s++) last = continued.step(batch, counters(s));
    expect(last).toBe(whole.step(0, counters(6)));
  });

  it('an imported run with the wrong shape is refused, naming what and where', () => {
    expect(validateRunRecord(run(), 'run 1').id).toBe('r1');
    expect(() => validateRunRecord({ ...run(), evals: [[1, 2, 3]] }, 'run 2')).toThrow('run 2: evals are not');
    expect(() => validateRunRecord({ ...run(), id: '' }, 'run 3')).toThrow('run 3: no id');
    expect(() => validateRunRecord(null, 'run 4')).toThrow('run 4: not an object');
  });
});
