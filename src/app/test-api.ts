// The small typed API the page exposes as window.__lab, so end-to-end tests read
// numbers rather than scrape the DOM.
import type { DatasetInfo, FetchEvent, PipelineStats } from '../pipeline/api.js';
import type { EvalMetrics, StepMetrics, TrainerState } from '../train/trainer.js';

export interface LabSnapshot {
  backend: string;
  adapter: string;
  gpuError: string | undefined;
  state: TrainerState;
  dataset: DatasetInfo | undefined;
  scanGroup: number;
  echoFactor: number;
  steps: Pick<StepMetrics, 'step' | 'loss' | 'time' | 'imagesPerSecond' | 'bytesFetched'>[];
  evals: EvalMetrics[];
  fetches: FetchEvent[];
  warnings: string[];
  /** Pipeline counters as of the latest step. */
  pipeline: PipelineStats | undefined;
}

export interface LabTestApi {
  snapshot(): LabSnapshot;
  start(): Promise<void>;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

declare global {
  interface Window {
    __lab?: LabTestApi;
  }
}
