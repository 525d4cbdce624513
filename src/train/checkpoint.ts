// A checkpoint: everything a run needs to go on exactly where it was after a
// reload or a crash. The model and Adam's state (trainer.ts ModelState), the
// step count and running time, each reader's tape (pipeline/tape.ts: where its
// live controls took effect), the readers that ran dry, the settings and live
// controls, and a compact history for the charts. The session writes one every
// few steps and at pause; storage/runs.ts keeps them in IndexedDB.
import type { EchoMode } from '../pipeline/api.js';
import { Rotation, type ReaderLeft } from '../pipeline/rotation.js';
import { validateTape, type TapeState } from '../pipeline/tape.js';
import type { ModelState, PendingEvaluation } from './trainer.js';

/** 2: tapes keep stream snapshots, and the image stages no longer read the shuffle buffer once when they are built (see fromVersion1). */
export const CHECKPOINT_VERSION = 2;

/** The controls a person may change mid-run. requestsInFlight: timing only (absent from runs saved before it was a control). */
export interface LiveControls {
  fidelity: number;
  echoFactor: number;
  echoMode: EchoMode;
  shuffleBuffer: number;
  autoEcho: boolean;
  learningRate: number;
  requestsInFlight?: number;
}

export interface Checkpoint {
  version: typeof CHECKPOINT_VERSION;
  /** The run's id: a run keeps it across resumes, so its newer checkpoints replace its older ones. */
  runId: string;
  /** Date.now() when it was taken. */
  savedAt: number;
  /** The settings the run started with (what must be the same to continue it). */
  config: {
    manifestUrl: string;
    datasetName: string;
    modelId: string;
    batchSize: number;
    evalEvery: number;
    seed: number;
    cacheLimitBytes: number;
    /** Readers of the training split: each has its share (partition) and its tape. */
    readers: number;
    /** This run's share of the training records among several tabs or machines (SessionConfig.share); left out: all of them. */
    share?: { rank: number; count: number };
    /** The size images were decoded to (SessionConfig.imageSize); left out: the manifest's. */
    imageSize?: { width: number; height: number };
    /** The step the run ends after (a sweep's run: SessionConfig.lastStep); left out: none. */
    lastStep?: number;
  };
  /** The live controls as they were. */
  controls: LiveControls;
  /** Steps trained and seconds of training time. */
  step: number;
  time: number;
  /**
   * Bytes the run had fetched and fresh examples it had read, so the counts go on from there (examples: those of the records
   * the readers had consumed, TapeState.examples, where the tapes count them; the records read ahead are counted when read again).
   */
  bytesFetched: number;
  examplesRead: number;
  /**
   * Fresh examples the run had trained by its step (each step's examples less the echoed copies among them), so a continued
   * run's count goes on from there; left out by checkpoints from before it was kept.
   */
  freshTrained?: number;
  /** One tape per reader, by rank. */
  tapes: TapeState[];
  /** Readers that ran dry and left the turn, and when (pipeline/rotation.ts); left out: none did. */
  readersLeft?: ReaderLeft[];
  model: ModelState;
  /**
   * For the charts: [step, loss, examples/s, MiB fetched] per step (the latest ones), and [step, accuracy, loss] per evaluation;
   * for the accuracy tile's baseline, the test split's examples per class (classTotals of the last evaluation; left out before one).
   */
  history: { steps: [number, number, number, number][]; evals: [number, number, number][]; classCounts?: number[] };
}

/** Checks a checkpoint read back from storage; throws naming what is wrong. */
export function validateCheckpoint(value: unknown): Checkpoint {
  const c = fromVersion1(value as Checkpoint);
  // Each check in turn, as [whether it holds, what to say if not]; later checks may rely on earlier ones.
  const absentOr = <T>(x: T | undefined, ok: (x: T) => boolean) => x === undefined || ok(x);
  const checks: [() => boolean, () => string][] = [
    [() => typeof c === 'object' && c !== null, () => 'not an object'],
    [() => c.version === CHECKPOINT_VERSION, () => `version ${c.version}, this lab reads ${CHECKPOINT_VERSION}`],
    [() => Number.isInteger(c.step) && c.step >= 0, () => `step ${c.step}`],
    [() => Array.isArray(c.tapes) && c.tapes.length === c.config?.readers, () => `${c.tapes?.length} tapes for ${c.config?.readers} readers`],
    [() => Array.isArray(c.model?.weights) && c.model.weights.every((w) => w.data instanceof Float32Array), () => 'model weights missing'],
    [() => absentOr(c.model.pending, (p) => Array.isArray(p) && p.every(validPending)), () => 'a pending evaluation is malformed'],
    [() => absentOr(c.controls?.requestsInFlight, (n) => Number.isInteger(n) && n >= 1), () => `reads in flight ${c.controls.requestsInFlight}`],
    [() => absentOr(c.config.share, validShare), () => `share ${JSON.stringify(c.config.share)}`],
    [() => absentOr(c.config.lastStep, (n) => Number.isInteger(n) && n >= 1), () => `last step ${c.config.lastStep}`],
    [() => absentOr(c.freshTrained, (n) => Number.isFinite(n) && n >= 0), () => `fresh examples trained ${c.freshTrained}`],
    [
      () => absentOr(c.history?.classCounts, (a) => Array.isArray(a) && a.every((n) => Number.isInteger(n) && n >= 0)),
      () => `test examples per class ${JSON.stringify(c.history.classCounts)}`,
    ],
  ];
  const problem = checks.find(([holds]) => !holds())?.[1]();
  if (problem) throw new Error(`the saved run cannot be continued: ${problem}`);
  try {
    c.tapes.forEach(validateTape);
    const left = c.readersLeft ?? [];
    if (!(Array.isArray(left) && left.length < c.config.readers)) throw new Error(`${JSON.stringify(c.readersLeft)} of ${c.config.readers} readers left`);
    if (Rotation.replay(c.config.readers, left, c.step).current === undefined) throw new Error('no reader left to read');
  } catch (err) {
    throw new Error(`the saved run cannot be continued: ${(err as Error).message}`);
  }
  return c;
}

const validShare = (s: { rank: number; count: number }) => Number.isInteger(s?.count) && Number.isInteger(s.rank) && s.rank >= 0 && s.rank < s.count;

/** A deferred evaluation kept in a checkpoint: its step and clock, and a copy of the weights. */
const validPending = (p: PendingEvaluation) =>
  Number.isInteger(p?.step) && Number.isFinite(p.time) && Array.isArray(p.weights) && p.weights.every((w) => w.data instanceof Float32Array);

/**
 * A version-1 checkpoint as version 2: its image tapes counted one read of the shuffle buffer when the stages were built,
 * before any example; version 2 reads it only per example, so each of that channel's reads moves one earlier.
 */
function fromVersion1(c: Checkpoint): Checkpoint {
  if (typeof c !== 'object' || c === null || (c.version as number) !== 1 || !Array.isArray(c.tapes)) return c;
  const tapes = c.tapes.map((tape) => {
    const shuffle = tape.channels?.shuffleBuffer;
    if (!shuffle || !tape.channels.fidelity) return tape; // a table's tape: its stages never read it at build
    const changes = shuffle.changes.map(([n, v]): [number, number | string] => [Math.max(0, n - 1), v]).filter(([n], i, all) => all[i + 1]?.[0] !== n);
    return { ...tape, channels: { ...tape.channels, shuffleBuffer: { reads: Math.max(0, shuffle.reads - 1), changes } } };
  });
  return { ...c, version: CHECKPOINT_VERSION, tapes };
}
