// Page side of the pipeline: starts a worker and returns its typed comlink proxy.
import * as Comlink from 'comlink';
import type { Batch, PipelineApi, PipelineStats } from './api.js';
import type { Rotation } from './rotation.js';

export interface PipelineHandle {
  api: Comlink.Remote<PipelineApi>;
  terminate(): void;
}

let live = 0;

/** Pipeline workers started and not yet terminated (the tests check that one run holds only its own). */
export function liveWorkerCount(): number {
  return live;
}

export function startPipelineWorker(name: string): PipelineHandle {
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name });
  const api = Comlink.wrap<PipelineApi>(worker);
  live++;
  let terminated = false;
  return {
    api,
    terminate() {
      if (terminated) return;
      terminated = true;
      live--;
      api[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}

/**
 * Several pipeline workers reading the shares of one split (PipelineOptions.partition)
 * as one stream: batches taken from each in turn (`rotation`), so the order is
 * deterministic. A worker whose stream ended, or that ran dry (NoReadableData),
 * leaves the turn and `onLeave` hears why; the last one's failure is the stream's.
 * Counters are summed over all of them; the epoch, the readers and the reads-in-flight limit are those still reading.
 */
export function takeInTurn(
  apis: Comlink.Remote<PipelineApi>[],
  rotation: Rotation,
  onLeave: (rank: number, reason: string) => void,
): { next(): Promise<Batch | null>; stats(): Promise<PipelineStats> } {
  return {
    async next() {
      // Set when a reader leaves: the batch then taken from the next was ready only as far as this wait goes (Batch.readyAt).
      let leftAt = 0;
      for (let rank = rotation.current; rank !== undefined; rank = rotation.current) {
        let batch: Batch | null;
        try {
          batch = await apis[rank]!.next();
        } catch (err) {
          if ((err as Error).name !== 'NoReadableData' || rotation.reading.length === 1) throw err;
          rotation.leave();
          leftAt = performance.timeOrigin + performance.now();
          onLeave(rank, (err as Error).message);
          continue;
        }
        if (!batch) {
          rotation.leave(true);
          continue;
        }
        rotation.took();
        if (leftAt) batch.readyAt = Math.max(batch.readyAt ?? 0, leftAt);
        return batch;
      }
      return null;
    },
    async stats() {
      const all = await Promise.all(apis.map((a) => a.stats()));
      const sum = { ...all[0]! };
      for (const s of all.slice(1)) {
        for (const key of Object.keys(sum) as (keyof PipelineStats)[]) if (key !== 'epoch') sum[key] += s[key];
      }
      // What is in force now comes from the readers still reading; the counts and clocks (stopped when a reader left) from all.
      const reading = (rotation.reading.length > 0 ? rotation.reading : apis.map((_, rank) => rank)).map((rank) => all[rank]!);
      sum.epoch = Math.min(...reading.map((s) => s.epoch));
      sum.readers = reading.length;
      sum.requestsInFlight = reading.reduce((n, s) => n + s.requestsInFlight, 0);
      return sum;
    },
  };
}
