// One training run: two pipeline workers (train and test split), a Trainer, and
// the history the page draws and the tests read. No DOM here.
import * as Comlink from 'comlink';
import type { DatasetInfo, FetchEvent, PipelineEvent, PipelineOptions } from '../pipeline/api.js';
import { startPipelineWorker, type PipelineHandle } from '../pipeline/client.js';
import type { ModelSpec } from './models/registry.js';
import { Trainer, type EvalMetrics, type StepMetrics, type TrainerState } from './trainer.js';

export interface SessionConfig {
  manifestUrl: string;
  model: ModelSpec;
  batchSize: number;
  learningRate: number;
  scanGroup: number;
  echoFactor: number;
  evalEvery: number;
  seed: number;
}

export interface SessionListener {
  state(state: TrainerState, detail?: string): void;
  info(train: DatasetInfo): void;
  step(m: StepMetrics): void;
  eval(m: EvalMetrics): void;
  fetch(e: FetchEvent): void;
  warning(message: string): void;
}

export class LabSession {
  readonly steps: StepMetrics[] = [];
  readonly evals: EvalMetrics[] = [];
  readonly fetches: FetchEvent[] = [];
  readonly warnings: string[] = [];
  info: DatasetInfo | undefined;
  private trainer: Trainer | undefined;
  private workers: PipelineHandle[] = [];
  private train: PipelineHandle | undefined;
  private done: Promise<void> | undefined;

  constructor(
    readonly config: SessionConfig,
    private readonly listener: SessionListener,
  ) {}

  get state(): TrainerState {
    return this.trainer?.current ?? 'idle';
  }

  async start(): Promise<void> {
    const c = this.config;
    const base: Omit<PipelineOptions, 'split'> = {
      manifestUrl: new URL(c.manifestUrl, location.href).href,
      batchSize: c.batchSize,
      scanGroup: c.scanGroup,
      echoFactor: c.echoFactor,
      seed: c.seed,
      shuffleBuffer: 512,
      epochs: Infinity,
      augment: true,
      prefetch: 4,
    };
    this.train = startPipelineWorker('pipeline-train');
    this.workers.push(this.train);
    const onEvent = Comlink.proxy((e: PipelineEvent) => this.onPipelineEvent(e));
    const info = await this.train.api.open({ ...base, split: 'train' }, onEvent);
    this.info = info;
    this.listener.info(info);

    // The test split is read once, at full fidelity, in order.
    let test: PipelineHandle | undefined = startPipelineWorker('pipeline-test');
    this.workers.push(test);
    try {
      await test.api.open({ ...base, split: 'test', batchSize: 256, scanGroup: info.scanGroups, echoFactor: 1, shuffleBuffer: 0, epochs: 1, augment: false }, onEvent);
    } catch (err) {
      this.onWarning(`no test split, accuracy will not be shown: ${(err as Error).message}`);
      test = undefined;
    }

    this.trainer = new Trainer(this.train.api, test?.api, info, { model: c.model, learningRate: c.learningRate, evalEvery: c.evalEvery }, {
      state: (s, d) => this.listener.state(s, d),
      step: (m) => {
        this.steps.push(m);
        this.listener.step(m);
      },
      eval: (m) => {
        this.evals.push(m);
        this.listener.eval(m);
      },
    });
    this.done = this.trainer.run().finally(() => this.terminateWorkers());
    this.done.catch((err: Error) => this.onWarning(`training failed: ${err.message}`));
  }

  pause(): void {
    this.trainer?.pause();
  }

  resume(): void {
    this.trainer?.unpause();
  }

  async stop(): Promise<void> {
    this.trainer?.stop();
    await this.done?.catch(() => undefined);
    this.terminateWorkers();
  }

  setScanGroup(group: number): void {
    void this.train?.api.setScanGroup(group);
  }

  setEchoFactor(factor: number): void {
    void this.train?.api.setEchoFactor(factor);
  }

  samples(n: number) {
    return this.train?.api.samples(n);
  }

  private onPipelineEvent(e: PipelineEvent): void {
    if (e.type === 'fetch') {
      this.fetches.push(e);
      this.listener.fetch(e);
    } else if (e.type === 'warning') {
      this.onWarning(e.message);
    }
  }

  private onWarning(message: string): void {
    this.warnings.push(message);
    this.listener.warning(message);
  }

  private terminateWorkers(): void {
    for (const w of this.workers) w.terminate();
    this.workers = [];
  }
}
