// The run record the runs panel compares: curves against each x-axis, the time
// and bytes to a target accuracy, CSV export, and checks on imported files.
import { describe, expect, it } from 'vitest';
import { addMark, addStep, curve, freshAfterStep, runCsv, summarize, validateRunRecord, type RunRecord } from '../../../src/train/run-record.js';

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

  it("a diverged run's last losses (Infinity, NaN) are no points: the finite ones stay on the chart", () => {
    const r = run();
    r.steps.push([5, 2.5, Number.POSITIVE_INFINITY, 0.5, 160], [6, 3.0, Number.NaN, 0.6, 192]);
    expect(curve(r, 'loss', 'step')).toEqual({ xs: [1, 2, 3, 4], ys: [2.3, 2.0, 1.7, 1.5] });
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
    expect(lines[0]).toBe('step,time_s,loss,mib_read,fresh_examples_trained,test_accuracy,test_loss');
    expect(lines[2]).toBe('2,1.000,2,0.2000,64,0.55,1.9');
    expect(lines[3]).toBe('3,1.500,1.7,0.3000,96,,');
    // A record from before fresh examples trained were counted holds examples read (read-ahead included).
    expect(runCsv(run()).split('\n')[0]).toBe('step,time_s,loss,mib_read,fresh_examples_read,test_accuracy,test_loss');
  });

  it("counts each step's fresh examples from its batch: its examples less their echoed copies, on from a checkpoint's count", () => {
    // Echo 3: a batch of 24 holds 8 fresh examples and 16 copies on average; a batch echoed whole is all copies.
    const batches: [number, number][] = [
      [24, 0],
      [24, 24],
      [24, 16],
      [24, 17],
      [10, 3],
    ];
    expect(batches.reduce((n, [examples, echoed]) => freshAfterStep(n, examples, echoed), 0)).toBe(46);
    expect(freshAfterStep(5_000, 24, 0)).toBe(5_024); // a continued run, from its checkpoint's count
    expect(freshAfterStep(32, 5, 9)).toBe(32); // never fewer than before: a batch cannot hold more copies than examples
  });

  it('an imported run with the wrong shape is refused, naming what and where', () => {
    expect(validateRunRecord(run(), 'run 1').id).toBe('r1');
    // Full fidelity is Infinity, which JSON writes as null: it comes back as Infinity (a record, not "group null").
    const full = JSON.parse(JSON.stringify({ ...run(), settings: { ...run().settings, fidelity: Infinity } }));
    expect(validateRunRecord(full, 'run 1').settings.fidelity).toBe(Infinity);
    expect(() => validateRunRecord({ ...run(), evals: [[1, 2, 3]] }, 'run 2')).toThrow('run 2: evals are not');
    expect(() => validateRunRecord({ ...run(), id: '' }, 'run 3')).toThrow('run 3: no id');
    expect(() => validateRunRecord(null, 'run 4')).toThrow('run 4: not an object');
    expect(validateRunRecord({ ...run(), guess: { name: 'None', share: 0.895 } }, 'run 5').guess).toEqual({ name: 'None', share: 0.895 });
    expect(() => validateRunRecord({ ...run(), guess: { name: 'None' } }, 'run 6')).toThrow('run 6: guess is not { name, share }');
  });
});

describe('addMark', () => {
  it('keeps the last value of a control changed twice at one step, and every other mark', () => {
    const marks: [number, string][] = [];
    for (const label of ['group 4', 'group 3', 'echo 2', 'group 2', 'lr 0.01', 'lr 1e-4', 'echo batches', 'echo examples']) addMark(marks, 20, label);
    addMark(marks, 21, 'group 5');
    addMark(marks, 21, 'auto echo 2.5');
    addMark(marks, 22, 'auto echo 3');
    addMark(marks, 22, 'echo 4'); // auto echo and the person both set the echo factor
    expect(marks).toEqual([
      [20, 'echo 2'],
      [20, 'group 2'],
      [20, 'lr 1e-4'],
      [20, 'echo examples'],
      [21, 'group 5'],
      [21, 'auto echo 2.5'],
      [22, 'echo 4'],
    ]);
  });
});
