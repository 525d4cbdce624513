import { describe, expect, it } from 'vitest';
import { describeEchoReading } from '../../../src/app/echo-reading.js';

const reading = (ratio: number, suggested: number, deliveryShare = 0) => ({
  upstreamMsPerBatch: 30 * ratio,
  downstreamMsPerStep: 30,
  ratio,
  waitShare: 0.5,
  deliveryShare,
  suggested,
});

describe('the echo reading in words', () => {
  it('gives the times, R and the waiting share', () => {
    expect(describeEchoReading(reading(3, 3), 1)).toMatch(
      /^Upstream \(fetch, decode, augment\) 90 ms per batch · trainer 30 ms per step · R = 3\.0 · waiting for data 50%/,
    );
  });

  it('says apart the wait for batches already made (their hand-over) when it is 5% or more', () => {
    expect(describeEchoReading(reading(0.2, 1, 0.32), 1)).toMatch(
      /waiting for data 50% of the time, for batches already made 32% \(their hand-over from the worker\)\. The trainer is the slow side/,
    );
    expect(describeEchoReading(reading(0.2, 1, 0.04), 1)).not.toMatch(/already made/);
  });

  it('advises by where the factor stands against R', () => {
    expect(describeEchoReading(reading(3, 3), 1)).toMatch(/Echo 3 would keep the trainer busy\.$/);
    expect(describeEchoReading(reading(0.04, 1), 1)).toMatch(/R = 0\.04 · .*The trainer is the slow side: echoing cannot help\.$/);
    expect(describeEchoReading(reading(2, 2), 4)).toMatch(/Echo above 2 only adds repeats\.$/);
    expect(describeEchoReading(reading(2, 2), 2)).toMatch(/Echo matches R\.$/);
  });
});
