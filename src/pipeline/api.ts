// The typed API of the data pipeline worker. The page imports only these types;
// the implementations (image-pipeline.ts for PCR images, toc-pipeline.ts for
// TOC-compressed tables) run inside worker.ts.
import type { TocRunsLayout } from '../toc/gpu-runs.js';
import type { TocBatch } from '../toc/batch.js';
import type { FetchPolicy } from './fetch.js';
import type { TapeState } from './tape.js';

/**
 * Which items data echoing repeats (Choi et al. 2019): each example before
 * augmentation (copies get their own random flip), each example after it
 * (identical copies), or each whole batch. TOC tables are compressed in
 * batches and echo batches whatever is asked.
 */
export type EchoMode = 'examples' | 'examples-after-augment' | 'batches';
export const ECHO_MODES: readonly EchoMode[] = ['examples', 'examples-after-augment', 'batches'];

/** Range requests a reader has out at once unless told otherwise (why 4: docs/pipeline.md, "Requests in flight"). */
export const DEFAULT_REQUESTS_IN_FLIGHT = 4;

export interface PipelineOptions {
  /** URL of the dataset's manifest.json; record files are resolved against it. */
  manifestUrl: string;
  split: string;
  batchSize: number;
  /**
   * Fidelity level to fetch, 1..fidelityLevels (higher is more bytes): the scan
   * group of an image record; tables have one level. Changes apply to the next record fetched.
   */
  fidelity: number;
  /** Data echoing factor e >= 1; a fraction is realised by a Bernoulli draw per example. */
  echoFactor: number;
  /** What echoing repeats (default 'examples'); a live control. */
  echoMode?: EchoMode;
  seed: number;
  /** Examples held by the shuffle buffer (after echoing, so echoed copies spread out); a live control, but 1 or less at open means no shuffling. */
  shuffleBuffer: number;
  /** Passes over the split; Infinity streams forever (training). */
  epochs: number;
  /** Random horizontal flips, applied after echoing so echoed copies differ. */
  augment: boolean;
  /** Batches prepared ahead of the trainer. */
  prefetch: number;
  /** Retries and stall timeout of record reads (fetch.ts DEFAULT_FETCH_POLICY where left out). */
  fetchPolicy?: Partial<FetchPolicy>;
  /**
   * Image datasets: decode every image to this size instead of the manifest's
   * (at the smallest DCT scale that covers it, then scaled), so the model's input
   * is this size; left out: the manifest's size. Tables ignore it.
   */
  imageSize?: { width: number; height: number };
  /** Range requests in flight at once (default DEFAULT_REQUESTS_IN_FLIGHT); setRequestsInFlight changes it mid-run. */
  requestsInFlight?: number;
  /** How long to wait for a dataset server that stopped answering before the run fails (default 10 min). */
  outageLimitMs?: number;
  /**
   * This reader's share of the split (InputSplit): every epoch's record order is
   * the same for all ranks (it comes from the seed), and rank r reads the
   * records at positions r, r + count, r + 2 count, ... of it. The ranks of one
   * count read disjoint records and together cover each epoch exactly once,
   * whatever the number of record files. Default: one reader, all records.
   */
  partition?: { count: number; rank: number };
  /** Size limit of the prefix cache (src/storage/prefix-cache.ts) in bytes; 0 or left out: no cache. */
  cacheLimitBytes?: number;
  /** IndexedDB database of the prefix cache (default "bytelab-cache"; tests use their own). */
  cacheName?: string;
  /**
   * Continue a run exactly (tape.ts): the tape of the pipeline that run used (same
   * dataset, split, seed and partition) and the batches it handed out. The stream
   * starts with the batch it would have handed out next; the batches before are
   * worked out without reading their data, from the tape's latest snapshot before them.
   */
  resume?: { tape: TapeState; batches: number };
  /** Batches between the stream snapshots the tape keeps (default 64; tests take them often). */
  snapshotEvery?: number;
  /**
   * TOC tables: k of the first layer's products the batches will serve (its output columns; 'classes': the dataset's
   * class count, as a linear model has). The runs layout caches what pays at that k (src/toc/gpu-runs.ts, the cost
   * rule). Left out: DEFAULT_RUNS_K (64). Images ignore it.
   */
  tocColumns?: number | 'classes';
}

/** A batch the stream has settled on, made (data read, arrays filled) only when it will be handed out; undefined if none of its data can be read. */
export interface PendingBatch {
  size: number;
  make(): Promise<Batch | undefined> | Batch | undefined;
}

/** What every batch the pipeline hands the trainer carries, besides its examples. */
interface BatchCommon {
  y: Int32Array;
  /** Each example's index in the split (echoed copies repeat it). */
  ids: Int32Array;
  size: number;
  /** Index of this batch in the stream (counted from the start of the run, across a resume). */
  index: number;
  /** When the pipeline had it ready to hand out (performance.timeOrigin + performance.now(), a clock the page shares). */
  readyAt?: number;
  /** The reader's counters as it handed this batch over (worker.ts): they come with the batch, so no step waits for a second reply. */
  stats?: PipelineStats;
  /**
   * Its examples that are echoed copies, so a step knows exactly how many fresh examples it trained (the counters
   * cannot say: they run ahead of the trainer by the batches queued and the copies in the shuffle buffer). Left out: none.
   */
  echoed?: number;
}

export interface ImageBatch extends BatchCommon {
  kind: 'image';
  /** size x height x width x channels, scaled to [0, 1]. */
  x: Float32Array;
}

/** A TOC-compressed mini-batch with the index structures its GPU kernels need; never decompressed. */
export interface TocBatchMessage extends BatchCommon {
  kind: 'toc';
  batch: TocBatch;
  /** The resolved-runs layout (src/toc/gpu-runs.ts) the TOC kernels read. */
  layout: TocRunsLayout;
}

export type Batch = ImageBatch | TocBatchMessage;

/** The typed arrays of a batch, for Comlink.transfer. */
export function batchTransferables(b: Batch): ArrayBuffer[] {
  const arrays: ArrayBufferView[] =
    b.kind === 'image'
      ? [b.x, b.y, b.ids]
      : [b.y, b.ids, ...Object.values(b.batch), ...Object.values(b.layout)].filter((v): v is ArrayBufferView => ArrayBuffer.isView(v));
  return [...new Set(arrays.map((a) => a.buffer as ArrayBuffer))];
}

/** One record read: what the Range request asked for and what came back. */
export interface FetchEvent {
  type: 'fetch';
  record: string;
  /** Fidelity level it was read at. */
  level: number;
  /** Bytes asked for (the Range end + 1). */
  requested: number;
  /** Bytes taken from the response (what we read off the wire). */
  received: number;
  /** Bytes that came from the prefix cache (the first `cached` bytes; all of them when nothing was requested). */
  cached: number;
  /** HTTP status of the answer; 0 when the prefix cache held every byte and no request was made. */
  status: number;
  /** Examples in the record (images, or table rows). */
  examples: number;
  ms: number;
  /**
   * When the read ended, in ms since the Unix epoch (performance.timeOrigin + performance.now()): stamped in the worker that
   * read it, so a busy page main thread does not delay it, and comparable across the worker and the page.
   */
  endedAt: number;
}

export type PipelineEvent = FetchEvent | { type: 'warning'; message: string } | { type: 'epoch'; split: string; epoch: number };

export interface PipelineStats {
  bytesFetched: number;
  recordsFetched: number;
  /** Examples read from records (images decoded, table rows validated). */
  examplesRead: number;
  /**
   * Examples read again to continue a resumed run: the records of examples its snapshot held, or of examples replayed
   * past it. The run before the reload read and counted them, so they are not in examplesRead (their bytes are in bytesFetched).
   */
  examplesReread: number;
  /** Examples left out because their bytes were bad. */
  examplesDropped: number;
  /** Copies made by data echoing (an echoed batch counts its examples). */
  examplesEchoed: number;
  /** Examples in a batch that repeat an example already in that batch (example echoing with a small shuffle buffer). */
  duplicatesInBatches: number;
  /**
   * The clocks of the stages before the trainer (fetch, decode, augment, batch);
   * upstream time is the largest of them over a window, and per fresh batch it
   * is the upstream time of the echoing papers (train/echo-advisor.ts).
   * loopBusyMs: the batch loop's time not blocked on a full queue. Records are read
   * ahead in the background, also while the loop waits for room, so when the
   * trainer is the slow side the loop alone would miss that work: hence also
   * decodeMs and linkBusyMs, the link's busy time (pipeline/link-clock.ts).
   */
  loopBusyMs: number;
  linkBusyMs: number;
  /** The reads-in-flight limit in force (the control), and the Range requests out as the counters were read; summed over readers. */
  requestsInFlight: number;
  readsOut: number;
  /** Pipelines these counters come from (1 each; summed over readers, which run side by side: their clocks add up to N times the wall time). */
  readers: number;
  examplesEmitted: number;
  batchesEmitted: number;
  /** Batches a resumed stream settled on without making them: those between its snapshot (or the start) and the resume point. */
  batchesWorkedOut: number;
  fetchMs: number;
  decodeMs: number;
  epoch: number;
  /** Record reads tried again after a link failure. */
  retries: number;
  /** Records left out of an epoch because they could not be read or parsed. */
  recordsSkipped: number;
  /** Time spent waiting for a server that stopped answering. */
  outageMs: number;
  /** Records read wholly from the prefix cache (no request). */
  cacheHits: number;
  /** Records whose cached prefix was extended with a Range request for the missing bytes. */
  cacheExtended: number;
  /** Cached prefixes found cut or altered, dropped and read again. */
  cacheCorrupt: number;
  /** Bytes taken from the prefix cache. */
  bytesFromCache: number;
  /**
   * TOC batches parsed: their non-zeros (the multiply-adds per output column of a CSR first layer) and the terms the
   * resolved-runs layout sums instead (docs/toc.md, "Work model": fewer where shared prefixes are cached). 0 for images.
   */
  tocNonZeros: number;
  tocTerms: number;
}

export interface DatasetInfo {
  kind: 'image' | 'tabular';
  name: string;
  classes: string[];
  /** What one example looks like to a model: [height, width, channels] or [columns]. */
  inputShape: number[];
  image?: { width: number; height: number; channels: 1 | 3 };
  /** Fidelity levels a reader can choose: an image dataset's scan groups; 1 for tabular data, which is lossless. */
  fidelityLevels: number;
  /** Examples in the split. */
  examples: number;
  /** Record files in the split: the most readers a partition can have. */
  records: number;
  /** Bytes a full pass over the split reads at each fidelity level; index 0 is level 1. */
  bytesPerLevel: number[];
  /** Column names of a tabular dataset (one-hot columns read `column=value`). */
  featureNames?: string[];
  /** Mean MS-SSIM of each scan group against the full decode, when the dataset measured it. */
  msssim?: number[];
  attribution?: string;
}

export interface SampleImages {
  width: number;
  height: number;
  channels: 1 | 3;
  /** Scan group the images were decoded at. */
  group: number;
  labels: number[];
  /** Interleaved pixels of every sample, one after the other. */
  pixels: Uint8Array;
}

/** What the worker exposes over comlink. */
export interface PipelineApi {
  open(options: PipelineOptions, onEvent: (event: PipelineEvent) => void): Promise<DatasetInfo>;
  /** The next batch (its buffers are transferred), or null when the last epoch ends. */
  next(): Promise<Batch | null>;
  /** Clamped to 1..fidelityLevels; applies to the next record fetched. */
  setFidelity(level: number): void;
  setEchoFactor(factor: number): void;
  setEchoMode(mode: EchoMode): void;
  /** Examples the shuffle buffer holds (no effect on a split opened without shuffling). */
  setShuffleBuffer(size: number): void;
  /** Range requests out at once, from the next record asked for (timing only: the example order does not change). */
  setRequestsInFlight(n: number): void;
  stats(): PipelineStats;
  /**
   * Resolves once every event sent so far has been taken by the page: events come on a port of their own (the callback's),
   * so they can trail a result or error of this API; this sends one more event behind them and waits for it to be taken.
   */
  flushEvents(): Promise<void>;
  /** Where the live controls took effect so far: with the batches handed out, what `resume` needs to continue this stream exactly. */
  tape(): TapeState;
  /**
   * Up to n images of the latest decoded record, at the fidelity they were
   * fetched at. Only image datasets have them: for a table (DatasetInfo.kind
   * 'tabular') the answer is always undefined, as it is for images before the first record is decoded.
   */
  samples(n: number): Promise<SampleImages | undefined>;
  /**
   * Gives up on whatever is under way: an open in progress rejects, in-flight
   * fetches abort, a waiting next() resolves null. The run's stop path.
   */
  cancel(): void;
  close(): void;
}
