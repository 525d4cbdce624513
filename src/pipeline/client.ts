// Page side of the pipeline: starts a worker and returns its typed comlink proxy.
import * as Comlink from 'comlink';
import type { PipelineApi } from './api.js';

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
