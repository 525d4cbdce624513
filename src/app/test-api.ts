// The small typed API the page exposes as window.__lab, so end-to-end tests read
// numbers rather than scrape the DOM.
import type { CacheUsage } from '../storage/prefix-cache.js';
import type { DatasetInfo, FetchEvent, PipelineStats } from '../pipeline/api.js';
import type { RunRecord } from '../train/run-record.js';
import type { RunState } from '../train/run-state.js';
import type { EvalMetrics, StepMetrics } from '../train/trainer.js';

export interface LabSnapshot {
  backend: string;
  adapter: string;
  gpuError: string | undefined;
  state: RunState;
  dataset: DatasetInfo | undefined;
  /** The fidelity slider's value (a scan group for image datasets). */
  fidelity: number;
  echoFactor: number;
  steps: Pick<StepMetrics, 'step' | 'loss' | 'time' | 'examplesPerSecond' | 'bytesFetched' | 'batchKey' | 'examples' | 'echoed'>[];
  evals: EvalMetrics[];
  fetches: FetchEvent[];
  warnings: string[];
  /** The newest pipeline counters: of the latest step, or read from the readers since; once the run has ended, as it ended. */
  pipeline: PipelineStats | undefined;
}

/** A constant-size view of a run, for polling long runs. */
export interface LabProgress {
  state: RunState;
  adapter: string;
  /** Steps taken in the run (the history keeps only the newest). */
  steps: number;
  last: LabSnapshot['steps'][number] | undefined;
  first: LabSnapshot['steps'][number] | undefined;
  lastEval: EvalMetrics | undefined;
  warnings: number;
  /** How long the trainer has waited for its next batch (0 while it trains). */
  waitingForDataMs: number;
}

export interface LabTestApi {
  snapshot(): LabSnapshot;
  progress(): LabProgress;
  /** Runs not yet ended, and pipeline workers alive: one run at a time holds at most its own. */
  runs(): { open: number; workers: number };
  /** The marks on the charts where a control changed mid-run, as "step: label". */
  marks(): string[];
  /** The recorded runs the runs panel lists (this browser's, and the live one). */
  records(): RunRecord[];
  /** What the prefix cache holds (undefined where there is no IndexedDB); also refreshes the page's line. */
  cache(): Promise<CacheUsage | undefined>;
  /** tf.memory() (tensors alive on the page) and the TOC op's cached GPU buffers, to find leaks across runs. */
  memory(): { tensors: number; bytes: number; kernelBuffers: number };
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
