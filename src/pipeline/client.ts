// Page side of the pipeline: starts a worker and returns its typed comlink proxy.
import * as Comlink from 'comlink';
import type { PipelineApi } from './api.js';

export interface PipelineHandle {
  api: Comlink.Remote<PipelineApi>;
  terminate(): void;
}

export function startPipelineWorker(name: string): PipelineHandle {
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name });
  const api = Comlink.wrap<PipelineApi>(worker);
  return {
    api,
    terminate() {
      api[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}
