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
    batchKey: i,
    computeMs: downMs,
    waitMs: Math.max(0, upMs * freshShare - downMs),
    bytesFetched: 0,
    pipeline: { ...emptyStats(), examplesRead: Math.round(32 * freshShare * (i + 1)), upstreamBusyMs: upMs * freshShare * (i + 1) },
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
    const ms = steps(30, 30, 10).map((m, i) => ({ ...m, waitMs: i % 8 === 0 ? 160 : 0, waitFraction: i % 8 === 0 ? 160 / 170 : 0 }));
    const r = last(new EchoAdvisor(), ms)!;
    // 19 steps of 10 ms, 2 or 3 of them after a 160 ms wait: about two thirds of the time is waiting.
    expect(r.waitShare).toBeGreaterThan(0.6);
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
