// The echo panel's reading, in words: where the time goes and what echo factor
// to use (src/train/echo-advisor.ts measures it).
import type { EchoReading } from '../train/echo-advisor.js';

export function describeEchoReading(r: EchoReading, factor: number): string {
  const advice =
    r.suggested > factor
      ? `Echo ${r.suggested} would keep the trainer busy.`
      : r.ratio < 1
        ? 'The trainer is the slow side: echoing cannot help.'
        : factor > r.suggested
          ? `Echo above ${r.suggested} only adds repeats.`
          : 'Echo matches R.';
  return (
    `Upstream (fetch, decode, augment) ${r.upstreamMsPerBatch.toFixed(0)} ms per batch · trainer ${r.downstreamMsPerStep.toFixed(0)} ms per step · ` +
    `R = ${r.ratio.toFixed(r.ratio < 1 ? 2 : 1)} · waiting for data ${(100 * r.waitShare).toFixed(0)}% of the time` +
    // Batches that were made and still on their way from the worker: not upstream's time, so not in R either.
    (r.deliveryShare >= 0.05 ? `, for batches already made ${(100 * r.deliveryShare).toFixed(0)}% (their hand-over from the worker)` : '') +
    `. ${advice}`
  );
}
