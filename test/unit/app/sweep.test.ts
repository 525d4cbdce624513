// Sweeps: the values are checked as their own fields are, each run trains its
// steps (the session ends it there) before the next starts, and Stop sweep ends it mid-run.
import { describe, expect, it } from 'vitest';
import { runSweep, type SweepHooks } from '../../../src/app/sweep.js';
import { checkSweep } from '../../../src/app/validate.js';
import type { LabSession } from '../../../src/train/session.js';

/** A run that takes a step every few ms until it has trained `lastStep` steps (then ends, as the session does) or is stopped. */
function fakeRun(log: string[], label: string, lastStep: number) {
  let step = 0;
  let ended = false;
  const end = (why: string) => {
    clearInterval(timer);
    if (!ended) log.push(`${why} ${label} at ${step}`);
    ended = true;
  };
  const timer = setInterval(() => (++step >= lastStep ? end('ended') : undefined), 2);
  const run = {
    get ended() {
      return ended;
    },
  } as unknown as LabSession;
  return { run, stop: () => end('stop') };
}

function hooks(log: string[], refuseAt = -1): SweepHooks {
  let current: ReturnType<typeof fakeRun> | undefined;
  let n = 0;
  return {
    apply: (kind, value) => log.push(`${kind} ${value}`),
    async start(lastStep) {
      if (n++ === refuseAt) return undefined;
      current = fakeRun(log, String(n), lastStep);
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
    for (const loose of ['1,,2', '6,', ',3'])
      expect(checkSweep('group', loose, '50', 6)).toMatchObject({ ok: false, reason: expect.stringContaining('empty one') });
    expect(checkSweep('echo', '2', '0', 6)).toMatchObject({ ok: false, reason: expect.stringContaining('steps per run') });
    expect(checkSweep('lr', '2', '5', 6)).toMatchObject({ ok: false });
  });

  it('runs each value for its steps, one run after another: each run ends itself at its last step', async () => {
    const log: string[] = [];
    expect(await runSweep({ kind: 'echo', values: [1, 2], steps: 5 }, hooks(log), () => false)).toBe('done');
    expect(log).toEqual(['echo 1', 'ended 1 at 5', 'echo 2', 'ended 2 at 5']);
  });

  it('Stop sweep stops the run under way and starts no other; a run the page refuses ends the sweep', async () => {
    const log: string[] = [];
    let cancel = false;
    setTimeout(() => (cancel = true), 30);
    expect(await runSweep({ kind: 'group', values: [6, 3, 2], steps: 1e9 }, hooks(log), () => cancel)).toBe('cancelled');
    expect(log.filter((l) => l.startsWith('stop') || l.startsWith('ended'))).toHaveLength(1);
    const refused: string[] = [];
    expect(await runSweep({ kind: 'group', values: [6, 3], steps: 3 }, hooks(refused, 1), () => false)).toBe('refused');
    expect(refused.filter((l) => l.startsWith('group'))).toEqual(['group 6', 'group 3']);
  });
});
