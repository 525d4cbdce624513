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

/** A constant-size view of a run, for polling long runs. */
export interface LabProgress {
  state: TrainerState;
  adapter: string;
  steps: number;
  last: LabSnapshot['steps'][number] | undefined;
  first: LabSnapshot['steps'][number] | undefined;
  lastEval: EvalMetrics | undefined;
  warnings: number;
}

export interface LabTestApi {
  snapshot(): LabSnapshot;
  progress(): LabProgress;
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
