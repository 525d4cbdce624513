// Long work in slices: the thread's queued tasks (in a worker, the trainer asking for a batch) run between slices, not after the work.
import { describe, expect, it } from 'vitest';
import { TimeSlice } from '../../../src/shared/time-slice.js';

const busyFor = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe('TimeSlice', () => {
  it('keeps the turn within a slice: a queued task waits', async () => {
    const slice = new TimeSlice(50);
    let ran = false;
    setImmediate(() => (ran = true));
    await slice.due();
    expect(ran).toBe(false);
  });

  it('gives the turn once a slice has run its time: a queued task runs before the work goes on', async () => {
    const slice = new TimeSlice(2);
    let ran = false;
    setImmediate(() => (ran = true));
    busyFor(3);
    await slice.due();
    expect(ran).toBe(true);
    // The next slice starts afresh.
    ran = false;
    setImmediate(() => (ran = true));
    await slice.due();
    expect(ran).toBe(false);
  });

  it("counts the work's own time, not the time the other tasks took while it gave the turn", async () => {
    const slice = new TimeSlice(2);
    busyFor(3);
    setImmediate(() => busyFor(40));
    await slice.due();
    busyFor(3);
    expect(slice.busyMs).toBeGreaterThanOrEqual(6);
    expect(slice.busyMs).toBeLessThan(30);
  });
});
