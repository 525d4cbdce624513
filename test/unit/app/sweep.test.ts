// Sweeps: the values are checked as their own fields are, each run trains its
// steps and is stopped before the next starts, and Stop sweep ends it mid-run.
import { describe, expect, it } from 'vitest';
import { runSweep, type SweepHooks } from '../../../src/app/sweep.js';
import { checkSweep } from '../../../src/app/validate.js';
import type { LabSession } from '../../../src/train/session.js';

/** A run that takes a step every few ms until stopped: only what the sweep reads of a session. */
function fakeRun(log: string[], label: string, deferred = false) {
  let step = 0;
  let ended = false;
  const timer = setInterval(() => step++, 2);
  // It evaluates every 4 steps, and the evaluation reports as the step does; a deferred run (evaluated at its stop) every 1000.
  const run = {
    config: deferred ? { evalEvery: 1000, evalMode: 'deferred' } : { evalEvery: 4 },
    steps: { last: () => ({ step }) },
    evals: { last: () => (deferred ? undefined : { step: step - (step % 4) }) },
    get ended() {
      return ended;
    },
  } as unknown as LabSession;
  return {
    run,
    stop: () => {
      clearInterval(timer);
      ended = true;
      log.push(`stop ${label} at ${step}`);
    },
  };
}

function hooks(log: string[], refuseAt = -1, deferred = false): SweepHooks {
  let current: ReturnType<typeof fakeRun> | undefined;
  let n = 0;
  return {
    apply: (kind, value) => log.push(`${kind} ${value}`),
    async start() {
      if (n++ === refuseAt) return undefined;
      current = fakeRun(log, String(n), deferred);
      return current.run;
    },
    async stop() {
      current?.stop();
    },
    progress() {},
  };
}

describe('sweeps', () => {
  it('checks the plan like the fields it sets', () => {
    expect(checkSweep('group', '6, 3,2', '50', 6)).toEqual({ ok: true, value: { kind: 'group', values: [6, 3, 2], steps: 50 } });
    expect(checkSweep('group', '7', '50', 6)).toMatchObject({ ok: false, reason: expect.stringContaining('scan group') });
    expect(checkSweep('echo', '1,2,x', '50', 6)).toMatchObject({ ok: false, reason: expect.stringContaining('"x"') });
    expect(checkSweep('echo', '', '50', 6)).toMatchObject({ ok: false, reason: expect.stringContaining('1 to 8 values') });
    expect(checkSweep('echo', '2', '0', 6)).toMatchObject({ ok: false, reason: expect.stringContaining('steps per run') });
    expect(checkSweep('lr', '2', '5', 6)).toMatchObject({ ok: false });
  });

  it('runs each value for its steps, one run after another', async () => {
    const log: string[] = [];
    expect(await runSweep({ kind: 'echo', values: [1, 2], steps: 5 }, hooks(log), () => false)).toBe('done');
    expect(log.map((l) => l.replace(/ at \d+/, ''))).toEqual(['echo 1', 'stop 1', 'echo 2', 'stop 2']);
    for (const l of log.filter((x) => x.startsWith('stop'))) expect(Number(l.split(' at ')[1])).toBeGreaterThanOrEqual(5);
  });

  it('a deferred run (evaluated when stopped) is stopped once it has trained its steps, not an interval later', async () => {
    const log: string[] = [];
    expect(await runSweep({ kind: 'echo', values: [1], steps: 5 }, hooks(log, -1, true), () => false)).toBe('done');
    const stoppedAt = Number(log.find((l) => l.startsWith('stop'))!.split(' at ')[1]);
    expect(stoppedAt).toBeGreaterThanOrEqual(5);
    expect(stoppedAt).toBeLessThan(1000);
  });

  it('Stop sweep stops the run under way and starts no other; a run the page refuses ends the sweep', async () => {
    const log: string[] = [];
    let cancel = false;
    setTimeout(() => (cancel = true), 30);
    expect(await runSweep({ kind: 'group', values: [6, 3, 2], steps: 1e9 }, hooks(log), () => cancel)).toBe('cancelled');
    expect(log.filter((l) => l.startsWith('stop'))).toHaveLength(1);
    const refused: string[] = [];
    expect(await runSweep({ kind: 'group', values: [6, 3], steps: 3 }, hooks(refused, 1), () => false)).toBe('refused');
    expect(refused.filter((l) => l.startsWith('group'))).toEqual(['group 6', 'group 3']);
  });
});
