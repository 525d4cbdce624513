import { describe, expect, it } from 'vitest';
import { emptyStats } from '../../../src/pipeline/base.js';
import { EchoAdvisor } from '../../../src/train/echo-advisor.js';
import type { StepMetrics } from '../../../src/train/trainer.js';

/** Steps of 32 examples, each fresh batch costing `upMs` upstream and each step `downMs` on the trainer. */
function steps(n: number, upMs: number, downMs: number, freshShare = 1): StepMetrics[] {
  return Array.from({ length: n }, (_, i) => ({
    step: i + 1,
    loss: 1,
    time: 0,
    examplesPerSecond: 0,
    waitFraction: Math.max(0, 1 - downMs / upMs),
    examples: 32,
    echoed: 0,
    batchKey: i,
    computeMs: downMs,
    waitMs: Math.max(0, upMs * freshShare - downMs),
    dataWaitMs: Math.max(0, upMs * freshShare - downMs),
    bytesFetched: 0,
    pipeline: { ...emptyStats(), examplesRead: Math.round(32 * freshShare * (i + 1)), loopBusyMs: upMs * freshShare * (i + 1) },
  }));
}

const last = (a: EchoAdvisor, ms: StepMetrics[]) => ms.map((m) => a.push(m)).at(-1);

describe('echo advisor', () => {
  it('reads R = upstream per fresh batch / downstream per step, and suggests e = R to the half', () => {
    const r = last(new EchoAdvisor(), steps(30, 30, 10))!;
    expect(r.upstreamMsPerBatch).toBeCloseTo(30);
    expect(r.downstreamMsPerStep).toBeCloseTo(10);
    expect(r.ratio).toBeCloseTo(3);
    expect(r.suggested).toBe(3);
    expect(last(new EchoAdvisor(), steps(30, 25, 10))!.suggested).toBe(2.5);
  });

  it('with echoing on, upstream time is per fresh batch, not per step', () => {
    // e = 2: half the steps' examples are fresh, and upstream works 30 ms per fresh batch.
    const r = last(new EchoAdvisor(), steps(30, 30, 10, 0.5))!;
    expect(r.upstreamMsPerBatch).toBeCloseTo(30);
    expect(r.ratio).toBeCloseTo(3);
  });

  it('weighs the waiting share by time: one long wait in eight steps counts as its time, not as one step in eight', () => {
    const ms = steps(30, 30, 10).map((m, i) => ({
      ...m,
      waitMs: i % 8 === 0 ? 160 : 0,
      dataWaitMs: i % 8 === 0 ? 160 : 0,
      waitFraction: i % 8 === 0 ? 160 / 170 : 0,
    }));
    const r = last(new EchoAdvisor(), ms)!;
    // 19 steps of 10 ms, 2 or 3 of them after a 160 ms wait: about two thirds of the time is waiting.
    expect(r.waitShare).toBeGreaterThan(0.6);
    expect(r.deliveryShare).toBe(0);
  });

  it('a wait for a batch the pipeline had ready is not a wait for data: it reads as the page being busy', () => {
    // Each step waits 6 ms, of which the batch was ready for the last 5: 1 ms for data, 5 ms on its way, 10 ms training.
    const ms = steps(30, 30, 10).map((m) => ({ ...m, waitMs: 6, dataWaitMs: 1 }));
    const r = last(new EchoAdvisor(), ms)!;
    expect(r.waitShare).toBeCloseTo(1 / 16);
    expect(r.deliveryShare).toBeCloseTo(5 / 16);
  });

  it('reads readers side by side: their summed clocks count once per reader', () => {
    // Two readers each busy 60 ms per fresh batch they read; together a fresh batch every 30 ms.
    const ms = steps(30, 60, 10).map((m) => {
      const { loopBusyMs, examplesRead } = m.pipeline;
      return { ...m, pipeline: { ...m.pipeline, readers: 2, loopBusyMs: 2 * loopBusyMs, examplesRead: 2 * examplesRead } };
    });
    const r = last(new EchoAdvisor(), ms)!;
    expect(r.upstreamMsPerBatch).toBeCloseTo(30); // summed clocks over all fresh batches would read 60
    expect(r.ratio).toBeCloseTo(3);
  });

  it('takes the slowest clock over the window, also when another clock led before it', () => {
    // The loop's clock ran ahead early (start-up); from step 10 on the link is busy 30 ms per batch and the loop only 5.
    const ms = steps(30, 30, 10).map((m, i) => ({
      ...m,
      pipeline: { ...m.pipeline, loopBusyMs: 1000 + 5 * (i + 1), linkBusyMs: 30 * (i + 1) },
    }));
    expect(last(new EchoAdvisor(), ms)!.upstreamMsPerBatch).toBeCloseTo(30);
  });

  it('holds steady while fresh examples come a record at a time', () => {
    // e = 3, records of 8 batches: 256 fresh examples land every 24 steps, while the link works on, 100 ms per fresh batch.
    const ms = steps(400, 100, 30).map((m, i) => {
      const records = Math.floor((i + 1) / 24);
      return { ...m, pipeline: { ...m.pipeline, examplesRead: 256 * records, recordsFetched: records, loopBusyMs: 0, linkBusyMs: (100 / 3) * (i + 1) } };
    });
    const advisor = new EchoAdvisor();
    const ratios = ms.map((m) => advisor.push(m)?.ratio).slice(150);
    // True R = 100 / 30: every reading within a record's share of it (a 20-step window read 0 or 2-3 times it).
    for (const r of ratios) expect(Math.abs(r! / (100 / 30) - 1)).toBeLessThan(0.25);
  });

  it('suggests 1 when the trainer is the slow side, and never more than 16', () => {
    expect(last(new EchoAdvisor(), steps(30, 5, 10))!.suggested).toBe(1);
    expect(last(new EchoAdvisor(), steps(30, 1000, 10))!.suggested).toBe(16);
  });

  it('says nothing before a few steps, or while no fresh data arrived', () => {
    expect(last(new EchoAdvisor(), steps(3, 30, 10))).toBeUndefined();
    expect(last(new EchoAdvisor(), steps(30, 30, 10, 0))).toBeUndefined();
  });
});
