// Page side of the pipeline: starts a worker and returns its typed comlink proxy.
import * as Comlink from 'comlink';
import type { Batch, PipelineApi, PipelineStats } from './api.js';

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
 * as one stream: batches taken from each in turn, so the order is deterministic;
 * a worker whose stream ended is passed over. Counters are summed (epoch: the lowest).
 * A resumed run starts with the reader whose turn it was (`firstTurn`).
 */
export function takeInTurn(apis: Comlink.Remote<PipelineApi>[], firstTurn = 0): { next(): Promise<Batch | null>; stats(): Promise<PipelineStats> } {
  const live = [...apis];
  let turn = firstTurn;
  return {
    async next() {
      while (live.length > 0) {
        turn %= live.length;
        const batch = await live[turn]!.next();
        if (batch) {
          turn++;
          return batch;
        }
        live.splice(turn, 1);
      }
      return null;
    },
    async stats() {
      const all = await Promise.all(apis.map((a) => a.stats()));
      const sum = { ...all[0]! };
      for (const s of all.slice(1)) {
        for (const key of Object.keys(sum) as (keyof PipelineStats)[]) sum[key] = key === 'epoch' ? Math.min(sum[key], s[key]) : sum[key] + s[key];
      }
      return sum;
    },
  };
}
