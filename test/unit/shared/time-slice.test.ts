// Long work in slices: the thread's queued tasks (in a worker, the trainer asking for a batch) run between slices, not after the work.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TimeSlice, yieldToTasks } from '../../../src/shared/time-slice.js';

const busyFor = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('TimeSlice', () => {
  it('keeps the turn within a slice: a queued task waits', async () => {
    const slice = new TimeSlice(50);
    let ran = false;
    setImmediate(() => (ran = true));
    await slice.yieldIfDue();
    expect(ran).toBe(false);
  });

  it('gives the turn once a slice has run its time: a queued task runs before the work goes on', async () => {
    const slice = new TimeSlice(40);
    let ran = false;
    setImmediate(() => (ran = true));
    busyFor(45);
    await slice.yieldIfDue();
    expect(ran).toBe(true);
    // The next slice starts afresh (40 ms leaves room for a loaded machine's pauses).
    ran = false;
    setImmediate(() => (ran = true));
    await slice.yieldIfDue();
    expect(ran).toBe(false);
  });

  it("counts the work's own time, not the time the other tasks took while it gave the turn", async () => {
    const slice = new TimeSlice(2);
    busyFor(3);
    setImmediate(() => busyFor(40));
    await slice.yieldIfDue();
    busyFor(3);
    expect(slice.busyMs).toBeGreaterThanOrEqual(6);
    expect(slice.busyMs).toBeLessThan(30);
  });
});

describe('yieldToTasks without setImmediate (a browser): a posted message', () => {
  it('lets a message already waiting be handled first, and goes on', async () => {
    vi.stubGlobal('setImmediate', undefined);
    const { port1, port2 } = new MessageChannel();
    let handled = false;
    const arrived = new Promise<void>((resolve) => {
      port1.onmessage = () => {
        handled = true;
        port1.close();
        resolve();
      };
    });
    port2.postMessage('ask');
    busyFor(5); // the ask waits while the thread works
    await yieldToTasks();
    expect(handled).toBe(true);
    await arrived;
  });
});
