// One training run: two pipeline workers (train and test split), a Trainer, and
// the history the page draws and the tests read. The session owns the run's
// state machine (run-state.ts): every start, pause, stop and phase change goes
// through it, and once the run is final nothing it started reaches a listener.
// No DOM here, so the tests drive it in Node with a fake pipeline.
import * as Comlink from 'comlink';
import {
  DEFAULT_REQUESTS_IN_FLIGHT,
  type DatasetInfo,
  type EchoMode,
  type FetchEvent,
  type PipelineEvent,
  type PipelineOptions,
  type PipelineStats,
  type SampleImages,
} from '../pipeline/api.js';
import { takeInTurn, type PipelineHandle } from '../pipeline/client.js';
import { Rotation } from '../pipeline/rotation.js';
import { abortable } from './abort.js';
import { CHECKPOINT_VERSION, type Checkpoint, type LiveControls } from './checkpoint.js';
import { EchoAdvisor, type EchoReading } from './echo-advisor.js';
import { nonFinite } from './model-file.js';
import type { ModelSpec } from './models/registry.js';
import { RingBuffer } from './ring-buffer.js';
import { RunStateMachine, type RunState } from './run-state.js';
import {
  TEST_ON_CPU_BYTES,
  TEST_ON_GPU_BYTES,
  Trainer,
  classTotals,
  type EvalMetrics,
  type EvalMode,
  type ModelState,
  type RunStart,
  type StepMetrics,
} from './trainer.js';

/** Below this many test examples, each is over 2% of the accuracy: the log says so. */
const FEW_TEST_EXAMPLES = 50;

export interface SessionConfig {
  /** Absolute URL of the dataset's manifest (or PCR_index.pb). */
  manifestUrl: string;
  model: ModelSpec;
  batchSize: number;
  learningRate: number;
  /** Fidelity level to start at; Infinity means the dataset's full fidelity. */
  fidelity: number;
  echoFactor: number;
  evalEvery: number;
  /**
   * live (default): evaluate every evalEvery steps as the run goes. deferred: keep the weights at those steps and evaluate
   * them when the run ends or is stopped (Stop then waits for them), each reported with its own step and time.
   */
  evalMode?: EvalMode;
  seed: number;
  /** Loss readbacks in flight (see TrainConfig); the benchmark compares 0 with the default. */
  readbackDepth?: number;
  /** The run ends after this step, evaluated once more (a sweep's runs); a run continued from its checkpoint ends there too. */
  lastStep?: number;
  /** Size limit of the prefix cache the pipeline workers share (0: no cache). */
  cacheLimitBytes?: number;
  /** What echoing repeats (default examples, before augmentation). */
  echoMode?: EchoMode;
  /** Examples the training split's shuffle buffer holds (default 512). */
  shuffleBuffer?: number;
  /** The echo factor follows the suggestion from the measured upstream/downstream ratio. */
  autoEcho?: boolean;
  /** Image datasets: decode to this size rather than the manifest's, and train the model at it (PipelineOptions.imageSize). */
  imageSize?: { width: number; height: number };
  /** Pipeline workers that read (fetch and decode) the training split, each its own share (default 1; at most the split's records). */
  readers?: number;
  /** Range requests each reader has out at once (default 4). */
  requestsInFlight?: number;
  /**
   * This run's share of the training records when several tabs or machines train on one dataset: rank of count (0-based),
   * each reading disjoint records, its readers splitting its share among them. Left out: the whole split.
   */
  share?: { rank: number; count: number };
  /** Continue this saved run exactly (checkpoint.ts): its settings and controls replace the ones above. */
  resume?: Checkpoint;
  /** Start from these weights (a loaded model, model-file.ts) with a new optimiser; evaluated before the first step. */
  initialModel?: ModelState;
  /** Where checkpoints go (IndexedDB on the page); none are taken without it. */
  saveCheckpoint?: (checkpoint: Checkpoint) => Promise<void>;
  /** Steps between two checkpoints (default 50); a pause takes one too. */
  checkpointEvery?: number;
  /**
   * A checkpoint also once this long has passed since the last (or since training began or resumed), if that comes first
   * (default 30 s): a reload loses no more than that of a slow run (a slow link's steps can take a second each).
   */
  checkpointAfterMs?: number;
  /** The run's id in checkpoints (default: a new one, or the resumed run's). */
  runId?: string;
}

export interface SessionListener {
  state(state: RunState, detail?: string): void;
  info(train: DatasetInfo): void;
  step(m: StepMetrics): void;
  eval(m: EvalMetrics): void;
  fetch(e: FetchEvent): void;
  warning(message: string): void;
  /** Where the time goes over the last steps, and the echo factor in use (set by the person, or by auto echo). */
  echo?(reading: EchoReading, factor: number): void;
  /** A resumed run's history up to its checkpoint, for the charts (before its first new step). */
  restored?(history: Checkpoint['history']): void;
  /** A checkpoint was written (or could not be). */
  checkpoint?(step: number, error?: string): void;
  /** The test split as opened (undefined: the dataset has none, or it could not be read), before the first step. */
  testSplit?(info: DatasetInfo | undefined, why?: 'none' | 'unreadable'): void;
  /** Deferred evaluation: how many saved steps wait to be evaluated (told as one is saved or evaluated). */
  pendingEvals?(count: number): void;
  /** The pipeline's counters as the run ended, with its last step reported (told once, as or after it ends). */
  totals?(pipeline: PipelineStats, steps: number): void;
  /**
   * Newer counters than the last step's, read from the readers while the run goes (every COUNTERS_EVERY_MS): what they read
   * ahead of the trainer, and what arrives while it waits for data. `session.counters` is the newest of these and the steps'.
   */
  counters?(pipeline: PipelineStats, steps: number): void;
}

/** Starts one pipeline worker; the page passes startPipelineWorker, tests a fake. */
export type StartPipeline = (name: string) => PipelineHandle;

/** History kept per run: bounded, so a run of days does not grow the page's memory. */
const HISTORY = { steps: 10_000, evals: 2_000, fetches: 2_000, warnings: 500 };

/** Examples the training split's shuffle buffer holds unless the person sets it. */
const DEFAULT_SHUFFLE_BUFFER = 512;
/** Steps between two moves of auto echo: the reading looks back 20 steps, so it has changed by then. */
const AUTO_ECHO_EVERY = 10;

/** Steps and evaluations a checkpoint keeps for the charts. */
const HISTORY_SAVED = 2_000;

/** Steps between checkpoints unless the config says otherwise. */
const DEFAULT_CHECKPOINT_EVERY = 50;
/** Milliseconds after which a checkpoint is due whatever the step, unless the config says otherwise. */
const DEFAULT_CHECKPOINT_AFTER_MS = 30_000;

/** The least wait for data that counts as a stall (stalledForMs). */
export const STALL_MS = 3000;

/** How often a running session reads the readers' counters between steps (SessionListener.counters). */
const COUNTERS_EVERY_MS = 1000;

/**
 * How long a stop's or a pause's checkpoint waits with nothing reported: for the trainer to reach its gate, and for the
 * next of the last steps' losses (whileReporting: it waits on while they keep coming). Also the bound on writing it.
 */
const STOP_CHECKPOINT_WAIT_MS = 3000;
/** How long stop() waits for the run to wind down before it tears the workers down regardless. */
const STOP_GRACE_MS = 5_000;
/** After a stop, deferred evaluations go on as long as each comes within this (a wedged device still ends the stop). */
const DEFERRED_EVAL_WAIT_MS = 30_000;

export class LabSession {
  readonly steps = new RingBuffer<StepMetrics>(HISTORY.steps);
  readonly evals = new RingBuffer<EvalMetrics>(HISTORY.evals);
  readonly fetches = new RingBuffer<FetchEvent>(HISTORY.fetches);
  readonly warnings = new RingBuffer<string>(HISTORY.warnings);
  /** Record reads of the run: how many, bytes off the wire, and those the prefix cache answered (wholly: hits; bytes: cachedBytes). */
  readonly fetchTotals = { records: 0, bytes: 0, hits: 0, cachedBytes: 0 };
  /** The pipeline's counters as the run ended (SessionListener.totals); undefined until then. */
  totals: PipelineStats | undefined;
  /** The newest counters known: from the last step's batch, or read from the readers since (SessionListener.counters). */
  counters: PipelineStats | undefined;
  info: DatasetInfo | undefined;

  private readonly machine: RunStateMachine;
  private readonly abort = new AbortController();
  /** Ends deferred evaluation after a stop: only a stop that is forced (the evaluations stalled) aborts it. */
  private readonly evalAbort = new AbortController();
  /** Evaluations reported so far: a stop waiting for deferred evaluation sees them progress. */
  private evalsReported = 0;
  /** True while the snapshots of a deferred run are evaluated after a stop. */
  private evaluatingDeferred = false;
  /** Live controls: what the person chose last, applied as soon as the pipeline is open. */
  private readonly controls: Required<LiveControls>;
  private trainer: Trainer | undefined;
  private readonly advisor = new EchoAdvisor();
  /** The training split's readers, each a pipeline worker with its share of the records. */
  private train: PipelineHandle[] = [];
  /** Whose turn it is among the training readers, and which have left it. */
  private rotation: Rotation | undefined;
  private workers: PipelineHandle[] = [];
  private pauseAfterEval = false;
  /** The run's id in its checkpoints. */
  readonly runId: string;
  /** Asked for the model (captureModel) while the trainer was mid-step: answered at its next wait between steps. */
  private modelRequests: ((state: ModelState | undefined) => void)[] = [];
  /** The model as the run ended (captured before the trainer is freed), for saving after Stop. */
  private finalModel: ModelState | undefined;
  /** Set when the run pauses: the trainer's next wait at the gate (between steps) takes a checkpoint. */
  private checkpointAtGate = false;
  /** Checkpoints are written one after another, in step order. */
  private saving: Promise<void> = Promise.resolve();
  /** The checkpoint last written: a stopped deferred run's is written again once the steps it kept are evaluated. */
  private lastWritten: Checkpoint | undefined;
  /** Bytes fetched and fresh examples read before a resume, added to the pipeline's own counts. */
  private readonly carried: { bytes: number; examples: number };
  private resumeGate: { promise: Promise<void>; release: () => void } | undefined;
  private finished: Promise<void> | undefined;

  constructor(
    readonly config: SessionConfig,
    private readonly listener: SessionListener,
    private readonly startPipeline: StartPipeline,
  ) {
    this.controls = config.resume
      ? {
          ...config.resume.controls,
          // Absent from runs saved before it was a control.
          requestsInFlight: config.resume.controls.requestsInFlight ?? config.requestsInFlight ?? DEFAULT_REQUESTS_IN_FLIGHT,
        }
      : {
          fidelity: config.fidelity,
          echoFactor: config.echoFactor,
          echoMode: config.echoMode ?? 'examples',
          shuffleBuffer: config.shuffleBuffer ?? DEFAULT_SHUFFLE_BUFFER,
          autoEcho: config.autoEcho ?? false,
          learningRate: config.learningRate,
          requestsInFlight: config.requestsInFlight ?? DEFAULT_REQUESTS_IN_FLIGHT,
        };
    this.runId = config.runId ?? config.resume?.runId ?? newRunId();
    this.carried = { bytes: config.resume?.bytesFetched ?? 0, examples: config.resume?.examplesRead ?? 0 };
    this.freshTrained = config.resume ? config.resume.freshTrained : 0;
    this.machine = new RunStateMachine((state, detail) => listener.state(state, detail));
  }

  get state(): RunState {
    return this.machine.state;
  }

  /** True once the run has ended (stopped or failed) and holds nothing. */
  get ended(): boolean {
    return this.machine.isFinal;
  }

  /** Starts the run; the promise settles when the run has ended (it never rejects: failures are a state). */
  start(): Promise<void> {
    if (this.finished) return this.finished;
    this.machine.to('loading');
    this.finished = this.run();
    return this.finished;
  }

  pause(): void {
    if (this.state === 'running') {
      this.closeGate();
      this.checkpointAtGate = true;
      this.machine.to('paused');
      // Waiting for data (a slow or stalled link): the next batch, and the checkpoint at the gate after it, may be long in
      // coming, and a reload meanwhile would lose the run; so it is taken now.
      const trainer = this.trainer;
      if (trainer?.waitingSince !== undefined) {
        const taking: Promise<void> = this.checkpointWhileWaiting(trainer).finally(() => {
          if (this.takingAtPause === taking) this.takingAtPause = undefined; // not a later pause's
        });
        this.takingAtPause = taking;
      }
    } else if (this.state === 'evaluating') {
      this.pauseAfterEval = true; // the evaluation finishes first, then the run pauses
    }
  }

  /** A pause asked for during an evaluation, taken once it ends. */
  /** Steps trained so far, reported or not (a slow device reads losses back seconds after its steps). */
  get stepsTrained(): number {
    return this.trainer?.position.step ?? 0;
  }

  get pausing(): boolean {
    return this.pauseAfterEval && this.state === 'evaluating';
  }

  resume(): void {
    this.pauseAfterEval = false;
    this.checkpointAtGate = false;
    if (this.state !== 'paused') return;
    this.resumedAt = performance.now();
    this.lastCheckpointAt = this.resumedAt; // a pause has its checkpoint: the time paused is not time to save
    this.machine.to('running');
    this.openGate();
  }

  /**
   * Stops the run and resolves once it has ended: within STOP_GRACE_MS whatever it
   * was doing, after a checkpoint at the step it stopped on (waited for while the
   * last steps' losses keep coming, see whileReporting), so Continue later goes on
   * from there. Every call waits for the same stop.
   */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private stopping: Promise<void> | undefined;

  private async stopOnce(): Promise<void> {
    // Ended on its own (its data, its last step, a failure): it may still be winding down (the last model, the counters,
    // the workers); what comes next (a sweep's next run) waits for that.
    if (this.machine.isFinal) return void (await settlesWithin(this.finished, STOP_GRACE_MS));
    if (this.state === 'idle') {
      this.machine.to('stopped');
      return;
    }
    const checkpoint = this.checkpointBeforeStop(); // decides from the state the run was in
    const pending = this.trainer?.pendingEvaluations ?? 0;
    this.machine.to('stopping', pending ? 'then evaluating the saved steps (deferred evaluation)' : undefined);
    await checkpoint;
    // Written while the run is still 'stopping' (the page holds a reload meanwhile: unsaved), and while the workers, which
    // answer for the checkpoint's tapes, are still up.
    await settlesWithin(this.saving, STOP_CHECKPOINT_WAIT_MS);
    if (!this.machine.isFinal) {
      this.abort.abort();
      this.openGate();
      for (const w of this.workers) void w.api.cancel().catch(() => undefined);
    }
    let ended = await settlesWithin(this.finished, STOP_GRACE_MS);
    // A deferred run evaluates its snapshots after the stop: the wait goes on while evaluations keep coming.
    while (!ended && this.evaluatingDeferred) {
      const before = this.evalsReported;
      ended = await settlesWithin(this.finished, DEFERRED_EVAL_WAIT_MS);
      if (this.evalsReported === before) break;
    }
    if (!this.machine.isFinal) {
      // The run did not wind down in time (a wedged worker or device): end it regardless.
      this.evalAbort.abort();
      this.terminateWorkers();
      this.machine.to('stopped', 'forced after a wait');
    }
  }

  setFidelity(level: number): void {
    this.controls.fidelity = level;
    this.sendControl((api) => api.setFidelity(level));
  }

  setEchoFactor(factor: number): void {
    this.controls.echoFactor = factor;
    this.sendControl((api) => api.setEchoFactor(factor));
  }

  setEchoMode(mode: EchoMode): void {
    this.controls.echoMode = mode;
    this.sendControl((api) => api.setEchoMode(mode));
  }

  setShuffleBuffer(size: number): void {
    this.controls.shuffleBuffer = size;
    this.sendControl((api) => api.setShuffleBuffer(size));
  }

  /** The training split's readers this run opened (0 before they are open); PipelineStats.readers counts those still reading. */
  get readers(): number {
    return this.train.length;
  }

  /** This run's share of the training records: a resumed run's own, else the config's. */
  get share(): { rank: number; count: number } | undefined {
    return this.config.resume ? this.config.resume.config.share : this.config.share;
  }

  setRequestsInFlight(n: number): void {
    this.controls.requestsInFlight = n;
    this.sendControl((api) => api.setRequestsInFlight(n));
  }

  /** From the next step on; before the trainer exists, it starts with this rate. */
  setLearningRate(lr: number): void {
    this.controls.learningRate = lr;
    this.trainer?.setLearningRate(lr);
  }

  /** How long the running trainer has waited for its next batch (0 while it trains, evaluates or is paused). */
  get waitingForDataMs(): number {
    const since = this.state === 'running' ? this.trainer?.waitingSince : undefined;
    return since === undefined ? 0 : performance.now() - Math.max(since, this.resumedAt); // a pause is not a wait for data
  }

  /**
   * The wait for data, once it is longer than waits for data have been: over STALL_MS, and over twice the longest wait of
   * the last 20 steps (or two records' worth, if more), the first step's included (a link that takes 5 s a batch, or a
   * record's worth of batches at a time, is slow, not stalled). 0 otherwise, and before the first step (the page says it
   * waits for the first batch).
   */
  get stalledForMs(): number {
    // At least two records' worth of steps: a record of many batches comes with one long wait for the next.
    const perRecord = this.info ? Math.ceil(this.info.examples / Math.max(1, this.info.records) / this.config.batchSize) : 0;
    return stalledFor(
      this.waitingForDataMs,
      this.steps.latest(Math.max(20, 2 * perRecord)).map((m) => m.dataWaitMs),
    );
  }

  /** When the run last resumed from a pause (performance.now()). */
  private resumedAt = 0;

  /** The learning rate the optimiser uses now. */
  get learningRate(): number {
    return this.trainer?.learningRate ?? this.controls.learningRate;
  }

  /** Auto echo: every few steps the echo factor follows the advisor's suggestion (e = R). */
  setAutoEcho(on: boolean): void {
    this.controls.autoEcho = on;
  }

  get echoFactor(): number {
    return this.controls.echoFactor;
  }

  /** Sample images of the latest record; undefined for tables (no images), before the first record, and once the run has ended. */
  async samples(n: number): Promise<SampleImages | undefined> {
    const reader = this.train[this.rotation?.reading[0] ?? 0]; // one still reading: one that left shows nothing new
    if (!reader || this.ended || this.info?.kind !== 'image') return undefined;
    return reader.api.samples(n);
  }

  private async run(): Promise<void> {
    const resume = this.config.resume;
    // A resumed run keeps its own settings: the same seed, batch size and readers give the same stream.
    const c = resume ? { ...this.config, ...resume.config } : this.config;
    const signal = this.abort.signal;
    let trainer: Trainer | undefined;
    let stream: ReturnType<typeof takeInTurn> | undefined;
    let counterPoll: ReturnType<typeof setInterval> | undefined;
    try {
      if (resume && c.model.id !== resume.config.modelId) throw new Error(`the saved run trained ${resume.config.modelId}, not ${c.model.id}`);
      // A resumed run decodes at the size it trained at (a checkpoint without one: the manifest's).
      const imageSize = resume ? resume.config.imageSize : c.imageSize;
      const base: Omit<PipelineOptions, 'split'> = {
        manifestUrl: c.manifestUrl,
        batchSize: c.batchSize,
        fidelity: this.controls.fidelity,
        echoFactor: this.controls.echoFactor,
        seed: c.seed,
        shuffleBuffer: this.controls.shuffleBuffer,
        echoMode: this.controls.echoMode,
        requestsInFlight: this.controls.requestsInFlight,
        epochs: Infinity,
        augment: true,
        prefetch: 4,
        cacheLimitBytes: c.cacheLimitBytes ?? 0,
        ...(imageSize ? { imageSize } : {}),
        // A TOC model's first-layer k: the pipeline lays batches out for it.
        ...(c.model.tocColumns !== undefined ? { tocColumns: c.model.tocColumns } : {}),
      };
      const onEvent = Comlink.proxy((e: PipelineEvent) => this.onPipelineEvent(e));
      const first = this.spawn('pipeline-train');
      let info = await abortable(first.api.open({ ...base, split: 'train' }, onEvent), signal);
      // More readers: each opens the split with its share; the first reopens with its own (it had to learn the record count).
      // A resumed run reopens each reader with its tape and the batches it had handed out.
      // This run's share (several tabs or machines on one dataset): records at positions rank, rank + count, ... of each
      // epoch's order; its readers take turns within it, reader r at rank + count * r of count * readers partitions.
      const { rank: shareRank, count: shares } = this.share ?? { rank: 0, count: 1 };
      const ours = Math.ceil((info.records - shareRank) / shares);
      if (ours < 1) throw new Error(`share ${shareRank + 1} of ${shares} holds no records: the training split has ${info.records}`);
      const readers = resume ? resume.config.readers : Math.max(1, Math.min(c.readers ?? 1, ours));
      if (readers > ours) throw new Error(`the saved run read with ${readers} readers; its share of the split now has ${ours} records`);
      const train = [first, ...Array.from({ length: readers - 1 }, (_, r) => this.spawn(`pipeline-train-${r + 1}`))];
      // Whose turn it is: a resumed run's as it stood at its step, with the readers that had run dry left out.
      // A reader that had left is opened with its tape but never read: the next checkpoint keeps the tape it gives then (its
      // stream was never rebuilt, so that tape is thinner), which is enough, as a reader that left is never read again.
      const rotation = resume ? Rotation.replay(readers, resume.readersLeft ?? [], resume.step) : new Rotation(readers);
      if (readers > 1 || shares > 1 || resume) {
        const share = (rank: number): Partial<PipelineOptions> => ({
          partition: { count: shares * readers, rank: shareRank + shares * rank },
          ...(resume ? { resume: { tape: resume.tapes[rank]!, batches: rotation.taken[rank]! } } : {}),
        });
        const opened = await abortable(Promise.all(train.map((w, rank) => w.api.open({ ...base, split: 'train', ...share(rank) }, onEvent))), signal);
        info = opened[0]!;
      }
      this.train = train;
      this.rotation = rotation;
      // Controls changed while the pipeline was opening are applied now, not lost.
      const k = this.controls;
      await abortable(
        Promise.all(
          train.flatMap(({ api }) => [
            api.setFidelity(k.fidelity),
            api.setEchoFactor(k.echoFactor),
            api.setEchoMode(k.echoMode),
            api.setShuffleBuffer(k.shuffleBuffer),
            api.setRequestsInFlight(k.requestsInFlight),
          ]),
        ),
        signal,
      );
      this.info = info;
      this.listener.info(info);
      trainer = new Trainer(info, {
        model: c.model,
        learningRate: this.controls.learningRate,
        evalEvery: c.evalEvery,
        readbackDepth: c.readbackDepth,
        evalMode: c.evalMode ?? 'live',
        seed: c.seed,
      });
      this.trainer = trainer;

      // The test split is read once, at full fidelity, in order, then its worker goes.
      const test = this.spawn('pipeline-test');
      let testInfo: DatasetInfo | undefined;
      let noTest: 'none' | 'unreadable' | undefined;
      try {
        testInfo = await abortable(
          test.api.open(
            {
              ...base,
              split: 'test',
              batchSize: testBatchSize(info),
              fidelity: info.fidelityLevels,
              echoFactor: 1,
              shuffleBuffer: 0,
              epochs: 1,
              augment: false,
            },
            onEvent,
          ),
          signal,
        );
      } catch (err) {
        if (signal.aborted) throw err;
        // Named by its name: a dataset built in this browser is known to the person by it, not by its idb:// address.
        noTest = (err as Error).name === 'NoSuchSplit' ? 'none' : 'unreadable'; // the name crosses the worker boundary
        this.onWarning(
          noTest === 'none'
            ? `${info.name} has no test split: accuracy will not be shown`
            : `the test split could not be read, accuracy will not be shown: ${(err as Error).message}`,
        );
      }
      this.listener.testSplit?.(testInfo, noTest);
      const kept = await trainer.prepare(testInfo ? test.api : undefined, signal, resume?.model ?? c.initialModel);
      this.retire(test);
      if (testInfo && kept.cut) {
        const limit = `${((TEST_ON_GPU_BYTES + TEST_ON_CPU_BYTES) / 1024 ** 3).toFixed(1)} GiB`;
        const measured = `accuracy is measured on its first ${kept.examples} of ${testInfo.examples} examples`;
        this.onWarning(`the test split is larger than the ${limit} the page keeps of it: ${measured}`);
      }
      // A handful of test examples makes accuracy jump by whole percents (one image: 0% or 100%): said, not hidden.
      if (testInfo && kept.examples > 0 && kept.examples < FEW_TEST_EXAMPLES) {
        const n = kept.examples;
        this.onWarning(`the test split has only ${n} example${n === 1 ? '' : 's'}: accuracy moves in steps of ${(100 / n).toFixed(1)}% and says little`);
      }
      if (resume) this.listener.restored?.(resume.history);
      // Said again, or a continued run would not show why a reader sits out (its failed records were logged before the reload).
      for (const { rank, batch } of rotation.left) {
        const when = batch === 0 ? 'before its first step' : `at step ${batch}`; // batch `batch` was asked for while step `batch` trained
        this.onWarning(`reader ${rank + 1} of ${readers} left the saved run ${when} and stays out`);
      }

      this.machine.to('running');
      const every = c.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY;
      const afterMs = c.checkpointAfterMs ?? DEFAULT_CHECKPOINT_AFTER_MS;
      this.lastCheckpointAt = performance.now();
      const from = resume ? { step: resume.step, time: resume.time } : undefined;
      this.checkpointQueuedStep = from?.step ?? 0;
      // A saved run continued at or past its last step (a finished sweep run) trains on: Continue means more steps.
      const lastStep = c.lastStep !== undefined && c.lastStep > (from?.step ?? 0) ? c.lastStep : undefined;
      stream = takeInTurn(
        train.map((w) => w.api),
        rotation,
        (rank, reason) => this.onWarning(`reader ${rank + 1} of ${readers} left the run, the others read on: ${reason}`),
      );
      const reading = stream;
      const training = trainer;
      // Between steps, every second: what the readers have read since the last batch, and whether the run has stalled.
      counterPoll = setInterval(() => {
        void this.readCounters(reading);
        void this.checkpointStalled(training);
      }, COUNTERS_EVERY_MS);
      const outcome = await trainer.run(
        stream,
        {
          signal,
          gate: () => this.gate(trainer!),
          phase: (p) => this.onPhase(p),
          checkpointDue: (step) => c.saveCheckpoint !== undefined && (step % every === 0 || performance.now() - this.lastCheckpointAt >= afterMs),
          ...(lastStep !== undefined ? { lastStep } : {}),
          checkpoint: (state, at) => this.writeCheckpoint(state, at),
          step: (raw) => {
            if (this.machine.isFinal) return;
            const pipeline = this.withCarried(raw.pipeline);
            const m = { ...raw, bytesFetched: pipeline.bytesFetched, pipeline };
            this.steps.push(m);
            this.stepsReported++;
            if (this.freshTrained !== undefined) this.freshTrained += m.examples - Math.min(m.echoed, m.examples);
            this.noteCounters(pipeline);
            this.listener.step(m);
            this.adviseEcho(m);
            if (!Number.isFinite(m.loss)) this.diverged(m);
          },
          eval: (m) => this.onEval(m),
          pending: (n) => this.listener.pendingEvals?.(n),
        },
        from,
        c.initialModel !== undefined,
      );
      if (outcome === 'ended') {
        const done = lastStep !== undefined && trainer.position.step >= lastStep;
        this.trainedAllSteps = done;
        this.machine.to('stopped', done ? `trained its ${lastStep.toLocaleString('en-US')} steps` : 'the data stream ended');
      }
    } catch (err) {
      // A reader's warnings come on a port of their own (its event callback), so the last can trail the error that ended
      // its stream: they are let in first, so the log names every record a "no readable data" failure counts.
      if (!signal.aborted && !this.machine.isFinal) await this.flushEvents();
      if (!signal.aborted && !this.machine.isFinal) {
        const message = (err as Error).message;
        this.warnings.push(`training failed: ${message}`); // kept for the record; listeners hear it as the failed state
        this.machine.to('failed', message);
      }
    } finally {
      clearInterval(counterPoll);
      // A deferred run that was stopped evaluates its snapshots now (a failed one does not).
      if (trainer?.pendingEvaluations && this.state === 'stopping') await this.evaluateDeferred(trainer);
      // Evaluated at the stop, or by the trainer at the end of the data: the checkpoint no longer keeps them for later.
      if (c.evalMode === 'deferred') await this.forgetEvaluated();
      this.lastWritten = undefined;
      if (trainer && trainer.position.step > 0) this.finalModel = await captureBounded(trainer);
      for (const answer of this.modelRequests.splice(0)) answer(this.finalModel);
      trainer?.dispose();
      if (stream && trainer && trainer.position.step > 0) {
        await this.readTotals(stream, this.steps.last()?.step ?? trainer.position.step).catch(() => undefined); // never keeps the workers
      }
      this.terminateWorkers();
      if (signal.aborted && !this.machine.isFinal) this.machine.to('stopped');
    }
  }

  /** A resumed run's counters include what the run before the reload read. */
  private withCarried(p: PipelineStats): PipelineStats {
    if (!this.config.resume) return p;
    const { bytes, examples } = this.carried;
    return { ...p, bytesFetched: p.bytesFetched + bytes, examplesRead: p.examplesRead + examples };
  }

  /**
   * The counters as the run ends, told once: the last step's miss the records read ahead of it. Readers that do not
   * answer within a second leave them as they were.
   */
  private async readTotals(stream: ReturnType<typeof takeInTurn>, steps: number): Promise<void> {
    const totals = await withinASecond(stream.totals());
    if (!totals) return;
    this.totals = this.withCarried(totals);
    this.noteCounters(this.totals);
    this.listener.totals?.(this.totals, steps);
  }

  /** Fresh examples trained by the last step reported (Checkpoint.freshTrained); unknown for a run continued from an older checkpoint. */
  private freshTrained: number | undefined = 0;

  /** A read of the counters in flight: a slow reader (decoding) answers late, and the next tick does not ask again meanwhile. */
  private readingCounters = false;

  /** The readers' counters now, told if they are newer than the last step's (a step may have brought newer meanwhile). */
  private async readCounters(stream: ReturnType<typeof takeInTurn>): Promise<void> {
    if (this.readingCounters || this.state !== 'running') return;
    this.readingCounters = true;
    try {
      const now = await withinASecond(stream.totals());
      if (now && this.state === 'running' && this.noteCounters(this.withCarried(now))) {
        this.listener.counters?.(this.counters!, this.trainer?.position.step ?? 0); // a continued run's steps before its first new one
      }
    } finally {
      this.readingCounters = false;
    }
  }

  /**
   * Takes `p` into the counters kept: each count the larger of the two (the counts only grow, and with several readers
   * either reading may be the newer for one of them), what is in force now (IN_FORCE) from the reading that has come
   * further. Says whether anything changed.
   */
  private noteCounters(p: PipelineStats): boolean {
    const was = this.counters;
    if (!was) {
      this.counters = p;
      return true;
    }
    const merged = { ...(progressOf(p) >= progressOf(was) ? p : was) };
    for (const k of Object.keys(merged) as (keyof PipelineStats)[]) if (!IN_FORCE.has(k)) merged[k] = Math.max(p[k], was[k]);
    this.counters = merged;
    return (Object.keys(merged) as (keyof PipelineStats)[]).some((k) => merged[k] !== was[k]);
  }

  private onEval(m: EvalMetrics): void {
    if (this.machine.isFinal) return;
    this.evalsReported++;
    this.evals.push({ ...m, mistakes: [] }); // the latest evaluation's images are shown, not kept for every one
    this.listener.eval(m);
  }

  /** Evaluates a stopped deferred run's snapshots, each reported with its step and time; a failure is a warning. */
  private async evaluateDeferred(trainer: Trainer): Promise<void> {
    this.evaluatingDeferred = true;
    try {
      await trainer.evaluatePending(this.evalAbort.signal, { eval: (m) => this.onEval(m), pending: (n) => this.listener.pendingEvals?.(n) });
    } catch (err) {
      if (!this.evalAbort.signal.aborted) this.onWarning(`the deferred evaluations failed: ${(err as Error).message}`);
    } finally {
      this.evaluatingDeferred = false;
    }
  }

  /**
   * A deferred run's checkpoint (its last, or the one it continued) keeps the weights of the steps not yet evaluated. Once
   * the stop or the end of the data has evaluated them, it is written again without them and with their accuracies in its
   * history, so a continued run neither evaluates them twice nor starts with an empty chart. Its savedAt is kept (it is
   * the same point of the run), and the wait is bounded: a write that never ends must not keep the run from ending.
   */
  private async forgetEvaluated(): Promise<void> {
    const save = this.config.saveCheckpoint;
    const evaluated = new Set(this.evals.toArray().map((m) => m.step));
    if (!save || evaluated.size === 0) return;
    const rewrite = this.saving.then(async () => {
      const last = this.lastWritten ?? this.config.resume;
      const pending = last?.model.pending;
      if (!last || !pending?.some((p) => evaluated.has(p.step))) return;
      const left = pending.filter((p) => !evaluated.has(p.step));
      const { pending: _, ...model } = last.model;
      await save({ ...last, model: left.length ? { ...model, pending: left } : model, history: this.historyUpTo(last.step) });
    });
    this.saving = rewrite.catch((err: Error) => this.onWarning(`could not save the evaluated steps with the checkpoint: ${err.message}`));
    await settlesWithin(this.saving, STOP_GRACE_MS);
  }

  private onPhase(phase: 'training' | 'evaluating'): void {
    if (this.abort.signal.aborted || this.state === 'stopping') return;
    if (phase === 'evaluating') {
      if (this.state === 'paused') {
        // Paused in the middle of a step that ends in an evaluation: it runs now, then the run pauses, as after a pause during one.
        this.openGate();
        this.checkpointAtGate = false;
        this.pauseAfterEval = true;
      }
      this.machine.to('evaluating');
    } else if (this.pauseAfterEval) {
      this.pauseAfterEval = false;
      this.closeGate();
      this.checkpointAtGate = true;
      this.machine.to('paused');
    } else {
      this.machine.to('running');
    }
  }

  /**
   * A run that trains (or evaluates) when Stop is pressed takes a checkpoint at
   * the trainer's next wait between steps (a paused run has one already), waiting
   * for it while steps are still being reported (STOP_CHECKPOINT_WAIT_MS without one
   * ends the wait: an evaluation under way that long is not waited for).
   */
  private async checkpointBeforeStop(): Promise<void> {
    // Paused while the trainer waited for data: the pause's checkpoint is being taken.
    if (this.takingAtPause && this.state === 'paused') {
      await settlesWithin(this.takingAtPause, STOP_CHECKPOINT_WAIT_MS);
      return;
    }
    const step = this.trainer?.position.step ?? 0;
    // A paused run has its checkpoint once the trainer has reached its gate; until then (mid-step, or waiting for data) it waits for it too.
    const pausedWithout = this.state === 'paused' && this.checkpointAtGate;
    if (!this.config.saveCheckpoint || step === 0 || (this.state !== 'running' && this.state !== 'evaluating' && !pausedWithout)) return;
    const trainer = this.trainer!;
    if (trainer.waitingSince !== undefined) {
      // Waiting for data (a slow or stalled link, a server gone): the batch may never come.
      await this.checkpointWhileWaiting(trainer);
      return;
    }
    const reached = new Promise<void>((resolve) => (this.atGate = resolve));
    this.closeGate();
    this.checkpointAtGate = true;
    // Then the steps up to it are reported, so the charts end where the saved run will go on.
    await this.whileReporting(reached.then(() => this.trainer && this.reportsSettled(this.trainer)));
  }

  /** The run ended on its own at its last step (a sweep's run): there is nothing of it to continue. */
  trainedAllSteps = false;

  /** Steps reported to the listener so far (the ring of steps keeps only the last ones). */
  private stepsReported = 0;

  /**
   * A step whose loss is not finite: the weights are NaN or infinite from there on, so the run fails at once, and being
   * final it writes no checkpoint after it (it trained on in NaN, and its checkpoints replaced the last good one).
   */
  private diverged(m: StepMetrics): void {
    // checkpointQueuedStep: the last checkpoint asked for (or the one continued from); none before the first.
    const kept = this.checkpointQueuedStep > 0 ? 'the last checkpoint before it is kept' : 'it had no checkpoint yet';
    const message = `the loss is ${m.loss} at step ${m.step}: training diverged (a lower learning rate may help); ${kept}`;
    this.warnings.push(`training failed: ${message}`);
    this.machine.to('failed', message);
    this.abort.abort();
    this.openGate();
    for (const w of this.workers) void w.api.cancel().catch(() => undefined);
  }

  /**
   * Waits for `p` as long as step reports keep coming: at most STOP_CHECKPOINT_WAIT_MS without one (then false). A slow
   * device reads its losses back seconds after the steps (the CNN on SwiftShader: 2 steps and 3 s behind at a Stop);
   * before, a fixed 3 s left them out, and the checkpoint held steps the page never showed. A wedged one sends none.
   */
  private async whileReporting(p: Promise<unknown>): Promise<boolean> {
    for (;;) {
      const before = this.stepsReported;
      if (await settlesWithin(p, STOP_CHECKPOINT_WAIT_MS)) return true;
      if (this.stepsReported === before) return false;
    }
  }

  /** Until every step trained so far has been reported (whileReporting's bound). */
  private reportsSettled(trainer: Trainer): Promise<boolean> {
    return this.whileReporting(trainer.reportsDone());
  }

  /** When the last checkpoint was taken (performance.now()), or training began or resumed: the next is due checkpointAfterMs on. */
  private lastCheckpointAt = 0;

  /**
   * The checkpoint of a run whose trainer waits for data, taken now, as at the gate (the model is between steps): a batch
   * that comes meanwhile waits at the closed gate. `reopen` (a stall's, not a pause's or a stop's): the gate opens again
   * after, unless the person paused or stopped meanwhile.
   */
  private async checkpointWhileWaiting(trainer: Trainer, reopen = false): Promise<void> {
    if (!this.config.saveCheckpoint || trainer.position.step === 0) return;
    this.closeGate();
    this.checkpointAtGate = false;
    const gate = this.resumeGate;
    const step = trainer.position.step;
    try {
      // Saved already at this step with these controls (a stall's checkpoint, then Pause or Stop): the same again would only cost time.
      if (this.checkpointsTaking === 0 && this.saved?.step === step && this.saved.controls === JSON.stringify(this.controls)) return;
      // Resumed meanwhile (the gate opened, or a later pause closed a new one): a step may be under way, and the weights
      // would not be this step's. That pause (or the next checkpoint) takes its own.
      await this.checkpointBetweenSteps(trainer, () => this.resumeGate === gate && trainer.position.step === step);
    } catch (err) {
      // A device lost or out of memory: the run goes on without this checkpoint (the last one stands).
      this.onWarning(`could not save a checkpoint at step ${step}: ${(err as Error).message}`);
    } finally {
      if (reopen && this.resumeGate === gate && this.state === 'running' && !this.stopping) this.openGate();
    }
  }

  /**
   * Takes a checkpoint with the model between steps: the steps before it reported first (their losses were still being
   * read back), so its history, and the run's record saved with it, end at its step; then, if `still()`, the weights. The
   * write is not waited for (Resume and Stop need not wait for it; checkpointsWritten does, bounded).
   */
  private async checkpointBetweenSteps(trainer: Trainer, still: () => boolean = () => true): Promise<void> {
    this.checkpointsTaking++;
    let written: Promise<void> | undefined;
    try {
      await this.reportsSettled(trainer);
      if (!still()) return;
      const read = await trainer.capture();
      written = this.writeCheckpoint(read(), trainer.position);
    } finally {
      void (written ?? Promise.resolve()).finally(() => this.checkpointsTaking--);
    }
  }

  /**
   * The step of the last checkpoint asked to be written, or tried by a stall (or of the saved run continued): a stall saves
   * the steps after it, once.
   */
  private checkpointQueuedStep = 0;
  /** The step and the live controls of the last checkpoint saved: one taken again as they are would be the same. */
  private saved: { step: number; controls: string } | undefined;

  /**
   * A stall (stalledForMs) after steps the last checkpoint does not hold saves them now: the link may not come back, and a
   * reload meanwhile would lose them (before, they were saved only at the next step, or at Pause or Stop). A batch that comes
   * meanwhile waits at the closed gate; then the run goes on, unless the person paused or stopped it.
   */
  private async checkpointStalled(trainer: Trainer): Promise<void> {
    if (!this.config.saveCheckpoint || this.state !== 'running' || this.resumeGate || this.stopping || this.checkpointsTaking > 0) return;
    const step = trainer.position.step;
    if (step <= this.checkpointQueuedStep || this.stalledForMs === 0) return;
    this.checkpointQueuedStep = step; // one try: a failure is said once, not every second of the stall
    await this.checkpointWhileWaiting(trainer, true);
  }

  /** Checkpoints of the model between steps being taken or written (not yet saved). */
  private checkpointsTaking = 0;
  /** A pause while the trainer waited for data takes its checkpoint at once (checkpointWhileWaiting): until it is taken. */
  private takingAtPause: Promise<void> | undefined;

  /**
   * Paused or stopping, and the checkpoint of where it paused or stopped is not saved yet: a reload now would lose the steps
   * since the last one, though the person asked to keep them.
   */
  get unsaved(): boolean {
    if (!this.config.saveCheckpoint || (this.trainer?.position.step ?? 0) === 0) return false; // nothing trained to lose
    if (this.state === 'stopping') return true;
    return this.pausing || (this.state === 'paused' && (this.checkpointAtGate || this.checkpointsTaking > 0));
  }

  /** Told when the trainer next waits at the gate, after any checkpoint it took there. */
  private atGate: (() => void) | undefined;

  /** The trainer waits here between steps; a run that has just paused (or is stopping) takes its checkpoint first (the model is between steps). */
  private async gate(trainer: Trainer): Promise<void> {
    if (this.modelRequests.length) {
      const state = await (await trainer.capture())();
      for (const answer of this.modelRequests.splice(0)) answer(state);
    }
    if (this.resumeGate && this.checkpointAtGate && this.config.saveCheckpoint && trainer.position.step > 0) {
      this.checkpointAtGate = false;
      await this.checkpointBetweenSteps(trainer); // a reload then continues from a record that has every step
    }
    this.atGate?.();
    this.atGate = undefined;
    await this.resumeGate?.promise;
  }

  /**
   * Writes a checkpoint of the model state captured at `at`: with each reader's
   * tape (asked now, so it covers every batch trained by then), the controls,
   * and the history. Checkpoints are written in order; a failure is a warning.
   */
  private writeCheckpoint(state: Promise<ModelState>, at: RunStart): Promise<void> {
    const save = this.config.saveCheckpoint;
    const info = this.info;
    if (!save || !info || this.ended) return Promise.resolve();
    this.lastCheckpointAt = performance.now();
    this.checkpointQueuedStep = Math.max(this.checkpointQueuedStep, at.step);
    const c = this.config.resume ? { ...this.config, ...this.config.resume.config } : this.config;
    const own = this.config.resume?.config ?? this.config;
    const tapes = Promise.all(this.train.map((w) => w.api.tape()));
    // Read now: a reader may leave while the tapes come. A leave at batch `step` happened asking for the step after this one.
    const readersLeft = this.rotation?.left.filter((l) => l.batch <= at.step) ?? [];
    const controls = { ...this.controls };
    const history = this.historyUpTo(at.step);
    const freshTrained = this.freshTrained; // the steps up to it are reported by now (the gate and the drain wait for them)
    const last = this.steps.last();
    const bytesFetched = last?.bytesFetched ?? this.carried.bytes;
    const write = async () => {
      // Weights that overflowed in the update after a step whose loss was still finite: no Continue from them, the last
      // checkpoint stands (a diverged run fails at its first loss that is not finite).
      const model = await state;
      const bad = nonFinite(model.weights);
      if (bad) {
        this.onWarning(`no checkpoint at step ${at.step}: its weights are not all numbers (variable_${bad.variable}[${bad.index}] is ${bad.value})`);
        return;
      }
      const taped = await tapes;
      // The examples of the records each reader had consumed: those read ahead are read again, and counted, when the run goes on.
      const consumed = taped.every((t) => t.examples !== undefined) ? taped.reduce((n, t) => n + t.examples!, 0) : undefined;
      const examplesRead = consumed ?? last?.pipeline.examplesRead ?? this.carried.examples;
      const checkpoint: Checkpoint = {
        version: CHECKPOINT_VERSION,
        runId: this.runId,
        savedAt: Date.now(),
        config: {
          manifestUrl: c.manifestUrl,
          datasetName: info.name,
          modelId: c.model.id,
          batchSize: c.batchSize,
          evalEvery: c.evalEvery,
          seed: c.seed,
          cacheLimitBytes: c.cacheLimitBytes ?? 0,
          readers: this.train.length,
          // A resumed run's own (the merge above would take this page's where the saved run had none).
          ...(own.imageSize ? { imageSize: own.imageSize } : {}),
          ...(own.share && own.share.count > 1 ? { share: own.share } : {}),
          ...(own.lastStep !== undefined ? { lastStep: own.lastStep } : {}),
        },
        controls,
        step: at.step,
        time: at.time,
        bytesFetched,
        examplesRead,
        ...(freshTrained !== undefined ? { freshTrained } : {}),
        tapes: taped,
        ...(readersLeft.length > 0 ? { readersLeft } : {}),
        model,
        history,
      };
      await save(checkpoint);
      this.saved = { step: at.step, controls: JSON.stringify(controls) };
      if (c.evalMode === 'deferred') this.lastWritten = checkpoint; // its pending weights are rewritten once evaluated
      this.listener.checkpoint?.(at.step);
    };
    this.saving = this.saving.then(write).catch((err: Error) => {
      if (this.abort.signal.aborted) return; // a stop tore the workers down mid-checkpoint: the previous one stands
      this.listener.checkpoint?.(at.step, err.message);
      this.onWarning(`could not save a checkpoint at step ${at.step}: ${err.message}`);
    });
    return this.saving;
  }

  /**
   * The model's weights now (between two steps), or as the run ended; undefined
   * before the first step. While the run trains, the answer comes at its next step.
   */
  captureModel(): Promise<ModelState | undefined> {
    const trainer = this.trainer;
    if (this.ended || !trainer) return Promise.resolve(this.finalModel);
    if (trainer.position.step === 0) return Promise.resolve(undefined);
    if (this.state === 'paused') return trainer.capture().then((read) => read());
    if (this.state === 'running' && trainer.waitingSince !== undefined && !this.stopping) {
      // The gate closed for a stall's checkpoint: no step starts until it opens, so taken now too.
      if (this.resumeGate) return trainer.capture().then((read) => read());
      // Waiting for data (a stall may last): taken now, the gate closed while the weights are copied, so a batch that comes
      // meanwhile waits for the copy; then open again unless the person paused or stopped meanwhile.
      this.closeGate();
      const copied = trainer.capture().finally(() => {
        if (this.state === 'running' && !this.stopping) this.openGate();
      });
      return copied.then((read) => read());
    }
    return new Promise((resolve) => this.modelRequests.push(resolve));
  }

  /**
   * Resolves once every checkpoint this run asked for has been written (or has
   * failed), or after STOP_GRACE_MS: a worker torn down mid-checkpoint never answers.
   */
  checkpointsWritten(): Promise<void> {
    return Promise.race([this.saving, new Promise<void>((r) => setTimeout(r, STOP_GRACE_MS))]);
  }

  /** The charts' history up to `step`: the resumed run's, then this session's. */
  private historyUpTo(step: number): Checkpoint['history'] {
    const before = this.config.resume?.history ?? { steps: [], evals: [] };
    const steps: Checkpoint['history']['steps'] = [...before.steps];
    for (const m of this.steps.toArray()) if (m.step <= step) steps.push([m.step, m.loss, m.examplesPerSecond, m.bytesFetched / 1024 ** 2]);
    const evals: Checkpoint['history']['evals'] = [...before.evals];
    const mine = this.evals.toArray().filter((m) => m.step <= step);
    for (const m of mine) evals.push([m.step, m.accuracy, m.loss]);
    const last = mine.at(-1);
    const classCounts = last ? classTotals(last.confusion) : before.classCounts;
    return { steps: steps.slice(-HISTORY_SAVED), evals: evals.slice(-HISTORY_SAVED), ...(classCounts ? { classCounts } : {}) };
  }

  private closeGate(): void {
    if (this.resumeGate) return;
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.resumeGate = { promise, release };
  }

  private openGate(): void {
    this.resumeGate?.release();
    this.resumeGate = undefined;
  }

  /** Reports where the time goes; with auto echo on, moves the echo factor to the suggestion every AUTO_ECHO_EVERY steps. */
  private adviseEcho(m: StepMetrics): void {
    const reading = this.advisor.push(m);
    if (!reading) return;
    if (this.controls.autoEcho && m.step % AUTO_ECHO_EVERY === 0 && reading.suggested !== this.controls.echoFactor) {
      this.setEchoFactor(reading.suggested);
    }
    this.listener.echo?.(reading, this.controls.echoFactor);
  }

  private sendControl(send: (api: PipelineHandle['api']) => Promise<void>): void {
    if (this.ended) return; // before open (no readers yet): run() applies this.controls once the pipeline is open
    for (const { api } of this.train) {
      send(api).catch((err: Error) => {
        if (!this.ended) this.onWarning(`could not apply the control: ${err.message}`);
      });
    }
  }

  private spawn(name: string): PipelineHandle {
    const handle = this.startPipeline(name);
    this.workers.push(handle);
    return handle;
  }

  /** Until every event the workers sent so far has been taken (at most a second: a wedged worker never answers;
   * one that fails does not cut the others' wait short). */
  private async flushEvents(): Promise<void> {
    await withinASecond(
      Promise.all(
        this.workers.map((w) =>
          Promise.resolve()
            .then(() => w.api.flushEvents())
            .catch(() => undefined),
        ),
      ),
    );
  }

  private retire(handle: PipelineHandle): void {
    handle.terminate();
    this.workers = this.workers.filter((w) => w !== handle);
  }

  private onPipelineEvent(e: PipelineEvent): void {
    if (this.machine.isFinal) return;
    if (e.type === 'fetch') {
      this.fetches.push(e);
      this.fetchTotals.records++;
      this.fetchTotals.bytes += e.received;
      this.fetchTotals.cachedBytes += e.cached;
      if (e.status === 0) this.fetchTotals.hits++;
      this.listener.fetch(e);
    } else if (e.type === 'warning') {
      this.onWarning(e.message);
    }
  }

  private onWarning(message: string): void {
    if (this.machine.isFinal) return;
    this.warnings.push(message);
    this.listener.warning(message);
  }

  private terminateWorkers(): void {
    for (const w of this.workers) w.terminate();
    this.workers = [];
  }
}

/** Test batches of at most this many bytes of float32 input (256 examples where they fit): one of 256 large images would be gigabytes. */
const TEST_BATCH_BYTES = 64 * 1024 ** 2;

export function testBatchSize(info: DatasetInfo): number {
  const bytesPerExample = 4 * info.inputShape.reduce((a, b) => a * b, 1);
  return Math.max(1, Math.min(256, Math.floor(TEST_BATCH_BYTES / bytesPerExample)));
}

/** Resolves true if `p` settles within `ms`, false otherwise. */
async function settlesWithin(p: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  const settled = Promise.resolve(p).then(
    () => true as const,
    () => true as const,
  );
  const result = await Promise.race([settled, late]);
  clearTimeout(timer);
  return result;
}

/** A run id that sorts by time: the start time in base 36 and a random tail. */
export function newRunId(): string {
  return `${Date.now().toString(36)}-${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
}

/** The wait `ms` if it is a stall after steps that waited `recent` (LabSession.stalledForMs), else 0. */
export function stalledFor(ms: number, recent: number[]): number {
  return recent.length > 0 && ms >= STALL_MS && ms > 2 * Math.max(...recent) ? ms : 0;
}

/** The counters that say what is in force now, not counts: they may go down (a reader that leaves, fewer reads out). */
const IN_FORCE = new Set<keyof PipelineStats>(['requestsInFlight', 'readsOut', 'readers']);

/** A sum of counts that only grow as a pipeline works: of two reads of its counters, the later has the larger (or the same). */
function progressOf(p: PipelineStats): number {
  return p.recordsFetched + p.recordsSkipped + p.bytesFetched + p.bytesFromCache + p.examplesRead + p.examplesEmitted + p.retries;
}

/** What `p` gives, or undefined if it fails or takes more than a second: a wedged device or worker must not hold up Stop. */
function withinASecond<T>(p: Promise<T>): Promise<T | undefined> {
  p.catch(() => undefined);
  return Promise.race([p, new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000))]).catch(() => undefined);
}

/** The model as a run ends; undefined if the GPU does not answer within a second. */
function captureBounded(trainer: Trainer): Promise<ModelState | undefined> {
  return withinASecond(trainer.capture().then((r) => r()));
}
