// What every data pipeline shares: options, counters, the prefetch loop that
// fills a bounded queue, record reads with Range requests (several in flight,
// consumed in order), riding out a server that goes away, and warnings.
// Subclasses (image-pipeline.ts, toc-pipeline.ts) say how records become batches.
import {
  DEFAULT_REQUESTS_IN_FLIGHT,
  ECHO_MODES,
  type Batch,
  type DatasetInfo,
  type PendingBatch,
  type EchoMode,
  type PipelineEvent,
  type PipelineOptions,
  type PipelineStats,
} from './api.js';
import { FetchError, fetchRange, sleep, TransientFetchError, type RangeResponse } from './fetch.js';
import { LOCAL_PREFIX, readLocalFile } from '../storage/local-datasets.js';
import { PrefixCache, type CachedPrefix } from '../storage/prefix-cache.js';
import { BoundedQueue } from './queue.js';
import { hash32, seededRandom, shuffleInPlace, type Random, type SeededRandom } from '../shared/random.js';
import { ControlTape, snapshotFor, type StreamSnapshot, type TapeState } from './tape.js';
import { LinkClock } from './link-clock.js';
import { NoReadableData, NoSuchSplit } from '../shared/errors.js';

export const emptyStats = (): PipelineStats => ({
  bytesFetched: 0,
  recordsFetched: 0,
  examplesRead: 0,
  examplesReread: 0,
  examplesDropped: 0,
  examplesEmitted: 0,
  examplesEchoed: 0,
  duplicatesInBatches: 0,
  loopBusyMs: 0,
  linkBusyMs: 0,
  readers: 1,
  batchesEmitted: 0,
  batchesWorkedOut: 0,
  fetchMs: 0,
  decodeMs: 0,
  epoch: 0,
  retries: 0,
  recordsSkipped: 0,
  outageMs: 0,
  cacheHits: 0,
  cacheExtended: 0,
  cacheCorrupt: 0,
  bytesFromCache: 0,
  tocNonZeros: 0,
  tocTerms: 0,
  requestsInFlight: 0,
  readsOut: 0,
});

/** Wall-clock ms since the Unix epoch, to the sub-ms: the same clock in every worker and page (performance.now() is not). */
const epochNow = () => performance.timeOrigin + performance.now();

/** Where each part starts when parts of these sizes are laid end to end: a record's first example's index in its split. */
export function startsOf(sizes: number[]): number[] {
  let at = 0;
  return sizes.map((n) => {
    at += n;
    return at - n;
  });
}

/** Records a resumed pipeline keeps read while it makes the first batches from replayed ones. */
const REPLAY_RECORDS_KEPT = 16;
/** Batches between stream snapshots: a resume works out at most this many (plus the prefetched ones) instead of the whole run. */
const DEFAULT_SNAPSHOT_EVERY = 64;

/** How long the pipeline waits for a server that stopped answering before the run fails. */
const DEFAULT_OUTAGE_LIMIT_MS = 10 * 60_000;
/**
 * Longest wait between two tries of a read while the server is down: a server back is seen within this (each read in
 * flight tries its own record, a few small requests every few seconds), and the first read through wakes the others.
 */
const OUTAGE_PROBE_MAX_MS = 5_000;

/**
 * The run cannot go on: the dataset's server stopped answering for longer than
 * the outage limit. Unlike a bad record, this is not skipped; it ends the run.
 */
export class ServerGoneError extends Error {
  override name = 'ServerGoneError';
}

export abstract class BasePipeline<M> {
  protected options!: PipelineOptions;
  protected manifest!: M;
  /** Draws of the stages (echo, flips, shuffle buffer): a stream per partition rank. */
  protected random!: SeededRandom;
  /** Whether the split was opened with a shuffle stage (the training split; not the test split). */
  protected shuffles = false;
  /** The snapshot a resumed stream starts from (tape.ts): the stages are rebuilt holding what it says. */
  protected startFrom: StreamSnapshot | undefined;
  /** Where the epoch loop is: the stream position of the record whose items it is passing on, and how many have gone. */
  private passing = { record: 0, taken: 0 };
  /** Controls read once per record when it is scheduled, ahead of the stages: a snapshot counts their reads at its record. */
  protected perRecordControls: string[] = [];
  /** Draws of the epochs' record orders: the same for every rank, so the ranks' shares are disjoint. */
  private orderRandom!: Random;
  protected readonly abort = new AbortController();
  private queue: BoundedQueue<Batch> | undefined;
  readonly stats: PipelineStats = emptyStats();
  /** Record prefixes kept across epochs and reloads (off when options.cacheLimitBytes is 0 or there is no IndexedDB). */
  protected cache: PrefixCache | undefined;
  /** Where the live controls took effect (tape.ts): replayed from options.resume, recorded for the next resume. */
  protected tape = new ControlTape();
  /** The link's busy time, the network part of upstream time per batch (link-clock.ts); its slots are set at open. */
  private link = new LinkClock(DEFAULT_REQUESTS_IN_FLIGHT);
  /** Tops the reads in flight up to the limit in force: a raised control starts reads at once, not at the next record. */
  private refill: (() => void) | undefined;
  /** When the current outage began (0: the server answers). */
  private outageSince = 0;
  /** Waits so far in the current outage, for the backoff. */
  private outageWaits = 0;
  /** Resolved when the server answers again: the reads still waiting out their backoff try at once. */
  private serverWake: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(protected readonly emit: (event: PipelineEvent) => void) {}

  /** What the stages hold between pulls, written down as plain data for a stream snapshot (the subclass revives it from startFrom.held). */
  protected abstract heldNow(): unknown;
  /** Checks a parsed manifest and returns it typed, or throws naming what is wrong. */
  protected abstract validate(json: unknown, where: string): M;
  protected abstract describe(): DatasetInfo;
  /** The stream of batches; the base class runs it ahead of the consumer and makes those it hands out. */
  protected abstract batches(): AsyncIterable<PendingBatch>;
  /** Sets options.fidelity, clamped to the dataset's levels. */
  abstract setFidelity(level: number): void;

  /** Opens the dataset; `manifestJson` may be given when the caller already fetched it. */
  async open(options: PipelineOptions, manifestJson?: unknown): Promise<DatasetInfo> {
    this.options = { ...options };
    const { count, rank } = options.partition ?? { count: 1, rank: 0 };
    if (!(Number.isInteger(count) && count >= 1 && Number.isInteger(rank) && rank >= 0 && rank < count)) {
      throw new RangeError(`partition must have a whole count >= 1 and a rank from 0 to count - 1, got rank ${rank} of ${count}`);
    }
    this.orderRandom = seededRandom(options.seed);
    this.random = seededRandom(hash32(options.seed, 'stages', rank));
    this.shuffles = options.shuffleBuffer > 1;
    this.startFrom = options.resume && snapshotFor(options.resume.tape, options.resume.batches);
    if (this.startFrom) this.random.setState(this.startFrom.random);
    this.tape = new ControlTape(options.resume?.tape, this.startFrom);
    this.link = new LinkClock();
    this.setRequestsInFlight(options.requestsInFlight ?? DEFAULT_REQUESTS_IN_FLIGHT);
    const limit = options.cacheLimitBytes ?? 0;
    this.cache = limit > 0 && PrefixCache.available ? new PrefixCache(limit, options.cacheName) : undefined;
    this.manifest = this.validate(manifestJson ?? (await fetchManifest(options.manifestUrl, this.abort.signal)), options.manifestUrl);
    const splits = (this.manifest as { splits: Record<string, unknown> }).splits;
    if (!splits[options.split]) throw new NoSuchSplit(`${options.manifestUrl}: no split "${options.split}" (have ${Object.keys(splits).join(', ')})`);
    const records = this.describe().records;
    if (rank >= records) throw new RangeError(`partition rank ${rank} of ${count} holds no records: split "${options.split}" has ${records}`);
    this.setFidelity(options.fidelity);
    this.setEchoFactor(options.echoFactor);
    if (options.echoMode) this.setEchoMode(options.echoMode);
    return this.describe();
  }

  setEchoFactor(factor: number): void {
    if (!(factor >= 1)) throw new RangeError(`echo factor must be >= 1, got ${factor}`);
    this.options.echoFactor = factor;
  }

  setEchoMode(mode: EchoMode): void {
    if (!ECHO_MODES.includes(mode)) throw new RangeError(`echo mode must be one of ${ECHO_MODES.join(', ')}, got ${mode}`);
    this.options.echoMode = mode;
  }

  setShuffleBuffer(size: number): void {
    if (!(size >= 1)) throw new RangeError(`shuffle buffer must be >= 1, got ${size}`);
    if (this.shuffles) this.options.shuffleBuffer = Math.round(size); // a split opened in order stays in order
  }

  setRequestsInFlight(n: number): void {
    if (!(n >= 1)) throw new RangeError(`reads in flight must be >= 1, got ${n}`);
    this.options.requestsInFlight = Math.round(n);
    this.stats.requestsInFlight = this.options.requestsInFlight;
    this.link.slots = this.options.requestsInFlight;
    this.refill?.();
  }

  /** The next batch, or null after the last epoch. Starts the prefetching loop on first call. */
  async next(): Promise<Batch | null> {
    if (this.abort.signal.aborted) return null;
    if (!this.queue) {
      this.queue = new BoundedQueue<Batch>(Math.max(1, this.options.prefetch));
      void this.pump(this.queue);
    }
    const r = await this.queue.pull();
    return r.done ? null : r.value;
  }

  tapeState(): TapeState {
    return this.tape.state();
  }

  close(): void {
    this.abort.abort();
    this.queue?.close();
    this.cache?.close();
  }

  /**
   * The batch loop's clock: busy unless waiting for room in the queue (then the trainer, not upstream, is the slow side),
   * stopped when the loop ends (a reader that ran dry must not read as busy ever after).
   */
  private readonly loop = { started: performance.now(), blocked: 0, blockedSince: 0, endedAt: 0 };

  /** The counters with the clocks read now: a window of steps that ends while the loop waits still sees the reads ahead. */
  statsNow(): PipelineStats {
    const now = performance.now();
    // Not started (a reader opened and never read, as one that had left a resumed run): not busy either.
    this.stats.loopBusyMs = this.queue ? (this.loop.blockedSince || this.loop.endedAt || now) - this.loop.started - this.loop.blocked : 0;
    this.stats.linkBusyMs = this.link.busyMs();
    this.stats.readsOut = this.link.readsOut;
    return { ...this.stats };
  }

  private async pump(queue: BoundedQueue<Batch>): Promise<void> {
    const resumeAt = this.options.resume?.batches ?? 0;
    const every = this.options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
    this.stats.batchesEmitted = this.startFrom?.batch ?? 0;
    this.loop.started = performance.now();
    try {
      for await (const pending of this.batches()) {
        if (queue.isClosed) return;
        const index = this.stats.batchesEmitted++;
        // Every stage is between pulls now: the stream stands just before batch index + 1.
        if ((index + 1) % every === 0) this.tape.noteSnapshot(this.snapshot(index + 1));
        // A resumed stream works out the batches the earlier run handed out after its snapshot, but does not make them.
        if (index < resumeAt) {
          this.stats.batchesWorkedOut++;
          this.loop.started = performance.now();
          continue;
        }
        const batch = await pending.make();
        if (!batch) continue;
        batch.index = index;
        this.stats.examplesEmitted += batch.size;
        batch.readyAt = performance.timeOrigin + performance.now(); // a pull waiting for it gets it now; otherwise it waits in the queue
        this.loop.blockedSince = performance.now();
        await queue.push(batch);
        this.loop.blocked += performance.now() - this.loop.blockedSince;
        this.loop.blockedSince = 0;
      }
      queue.close();
    } catch (err) {
      queue.close(this.abort.signal.aborted ? undefined : err);
    } finally {
      this.loop.endedAt = performance.now();
    }
  }

  /** Where the stream stands before batch `batch`, all of it plain data (tape.ts StreamSnapshot). */
  private snapshot(batch: number): StreamSnapshot {
    const reads = this.tape.readCounts();
    // Those were read for the records scheduled ahead; the restored epoch loop schedules again from the record it was passing on.
    for (const name of this.perRecordControls) if (name in reads) reads[name] = this.passing.record;
    return { batch, ...this.passing, random: this.random.state(), reads, held: this.heldNow() };
  }

  /** Warnings already reported: a bad record is named once, not again every epoch. */
  private readonly warned = new Set<string>();

  /**
   * The live controls the per-example stages read, each through the tape (so a
   * resumed stream sees them change where this one did): echo factor, echo mode,
   * shuffle buffer and batch size.
   */
  protected stageControls() {
    return {
      augment: this.options.augment,
      random: this.random,
      echoFactor: this.tape.channel('echoFactor', () => this.options.echoFactor),
      echoMode: this.tape.channel('echoMode', () => this.options.echoMode ?? 'examples'),
      shuffles: this.shuffles,
      shuffleWarmUp: this.tape.shuffleWarmUp,
      shuffleBuffer: this.tape.channel('shuffleBuffer', () => this.options.shuffleBuffer),
      batchSize: this.tape.channel('batchSize', () => this.options.batchSize),
      echoed: (n: number) => void (this.stats.examplesEchoed += n),
      duplicates: (n: number) => void (this.stats.duplicatesInBatches += n),
    };
  }

  /** A record left out of this epoch: counted every time, named once. */
  protected skipRecord(reason: string): void {
    this.stats.recordsSkipped++;
    this.warn(`${reason}; record skipped`);
  }

  protected warn(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.emit({ type: 'warning', message });
  }

  /**
   * Epoch loop: reads the split's records (a new random order each epoch when
   * shuffling) and yields what `read` made of each, in that order. Up to
   * `requestsInFlight` reads run at once, so fetches overlap each other and the
   * decoding of earlier records, but never more than the records that have
   * arrived (at least one): on a link that bandwidth bounds, reads in flight
   * share it, and the first record would otherwise arrive only with the next
   * three (1, 1, 2, 3, 4 in flight: records 1 and 2 come alone, then as before;
   * timing only, the order is the same). Where answers are slow to start and
   * fast once going (latency bounds the link), the ramp jumps to the reads that
   * keep the link busy (`LinkClock.readsToFill`) once the first has arrived. They run on across an epoch's end, so the link
   * does not idle while the last records' examples drain from the shuffle buffer
   * and the trainer does not then wait for the next epoch's first record. A
   * record that fails yields nothing; when every record this reader can be given
   * has failed since it last read one, the stream ends with a NoReadableData
   * error. `read` gets the record, its position in the stream
   * (counted across epochs: the tape's key) and its index in `records`; `size`
   * says how many examples an item is, for the tape's count of examples read. A
   * restored stream starts at its snapshot's record, past the items already taken.
   */
  protected async *readEpochs<R, T>(
    records: R[],
    read: (record: R, position: number, index: number) => Promise<T[]>,
    size: (item: T) => number,
  ): AsyncGenerator<T> {
    const { count, rank } = this.options.partition ?? { count: 1, rank: 0 };
    // Never more than an epoch ahead: a split of fewer records than slots would otherwise hold a record twice.
    const perEpoch = Math.ceil((records.length - rank) / count);
    // Read at each fill: the control may change mid-run.
    const depth = () => Math.max(1, Math.min(this.options.requestsInFlight ?? DEFAULT_REQUESTS_IN_FLIGHT, perEpoch));
    const upcoming = this.epochOrders(records.length);
    const from = this.startFrom ?? { record: 0, taken: 0 };
    for (let p = 0; p < from.record; p++) upcoming.next();
    const ahead: { epoch: number; index: number; reading: Promise<T[]> }[] = [];
    let scheduled = from.record;
    // Ramped: no more reads in flight than records arrived (taken in order, at least one), so the first has the link to itself,
    // unless the reads so far waited long for answers that then came fast: then as many as keep the link busy at once.
    let arrived = 0;
    const fill = (this.refill = () => {
      while (ahead.length < Math.max(1, Math.min(depth(), Math.max(arrived, this.link.readsToFill()))) && !this.abort.signal.aborted) {
        const next = upcoming.next();
        if (next.done) return;
        const { epoch, index } = next.value;
        const reading = read(records[index]!, scheduled++, index);
        reading.catch(() => undefined); // observed when its turn comes; this keeps an early failure from being "unhandled"
        ahead.push({ epoch, index, reading });
      }
    });
    // The stream gives up, at an epoch's end, once every record this reader can be given (its own, or with shuffling any of
    // the split's) has failed since it last read one. Not at an empty epoch: one of a small share may hold only bad records
    // where the next holds good. Distinct records, not reads: a shuffled share may draw the same bad record again and again.
    const reachable = this.shuffles ? records.length : perEpoch;
    const failedSinceRead = new Set<number>();
    const hopeless = () => failedSinceRead.size >= reachable;
    const part = this.options.partition ? ` (partition ${rank + 1} of ${count})` : '';
    const noData = () => {
      const which = reachable === 1 ? 'its one record' : `all ${reachable} records it can be given`;
      return new NoReadableData(`no readable data in split "${this.options.split}"${part}: ${which} failed (see warnings)`);
    };
    let consumed = from.record;
    let epoch = -1;
    let produced = 0;
    let skip = from.taken;
    try {
      fill();
      while (ahead.length > 0) {
        // Left in `ahead` while awaited, so a refill meanwhile counts it among the reads out.
        const turn = ahead[0]!;
        if (turn.epoch !== epoch) {
          if (epoch >= 0 && produced === 0 && hopeless()) throw noData();
          epoch = turn.epoch;
          produced = 0;
          this.stats.epoch = epoch;
          this.emit({ type: 'epoch', split: this.options.split, epoch });
        }
        const items = await turn.reading;
        ahead.shift();
        if (this.abort.signal.aborted) return;
        this.passing = { record: consumed, taken: 0 };
        this.tape.consumed(
          consumed++,
          items.reduce((n, item) => n + size(item), 0),
        );
        arrived++;
        if (items.length > 0) failedSinceRead.clear();
        else failedSinceRead.add(turn.index);
        fill();
        for (const item of items) {
          produced++;
          this.passing.taken++;
          if (skip > 0) {
            skip--;
            continue;
          }
          yield item;
        }
        skip = 0;
      }
      if (epoch >= 0 && produced === 0 && hopeless()) throw noData();
    } finally {
      this.refill = undefined; // a stream that ended, failed or was closed starts no more reads
    }
  }

  /** The records of every epoch in reading order: this rank's share of a new order per epoch (the same draws on every rank). */
  private *epochOrders(records: number): Generator<{ epoch: number; index: number }> {
    const { count, rank } = this.options.partition ?? { count: 1, rank: 0 };
    for (let epoch = 0; epoch < this.options.epochs; epoch++) {
      const everyone = Array.from({ length: records }, (_, i) => i);
      // Whether the split was opened shuffling, not the live control: every reader, tab and resume must draw the same orders.
      if (this.shuffles) shuffleInPlace(everyone, this.orderRandom);
      for (let position = rank; position < records; position += count) yield { epoch, index: everyone[position]! };
    }
  }

  /**
   * A record's first `length` bytes, counted in the stats and reported as a fetch
   * event. From the prefix cache when it holds them; when it holds fewer, one
   * Range request for the rest (If-Range: a file changed on the server is read
   * again whole); otherwise one Range request from byte 0. `fresh` skips the cache.
   */
  protected async fetchCounted(file: string, length: number, level: number, examples: number, fresh = false): Promise<Uint8Array> {
    const url = new URL(file, this.options.manifestUrl).href; // resolved against the manifest
    // Reads run on across an epoch's end, so a record may be asked for again while its last read is still out:
    // with a cache, that read goes first and the cache then serves this one.
    const earlier = this.cache ? this.fetching.get(url) : undefined;
    const reading = (async () => {
      await earlier?.catch(() => undefined);
      return this.fetchThroughCache(file, url, length, level, examples, fresh);
    })();
    this.fetching.set(url, reading);
    try {
      return await reading;
    } finally {
      if (this.fetching.get(url) === reading) this.fetching.delete(url);
    }
  }

  /** Record reads still out, by URL. */
  private readonly fetching = new Map<string, Promise<Uint8Array>>();

  private async fetchThroughCache(file: string, url: string, length: number, level: number, examples: number, fresh: boolean): Promise<Uint8Array> {
    const start = performance.now();
    const cached = fresh ? undefined : await this.cachedPrefix(url, file);
    if (cached && cached.bytes.byteLength >= length) {
      const bytes = cached.bytes.subarray(0, length);
      this.stats.cacheHits++;
      this.stats.bytesFromCache += length;
      this.fromCache.add(bytes);
      const ms = performance.now() - start;
      this.emit({ type: 'fetch', record: file, level, requested: length, received: 0, cached: length, status: 0, examples, ms, endedAt: epochNow() });
      return bytes;
    }
    let from = cached?.bytes.byteLength ?? 0;
    let res: RangeResponse;
    try {
      res = await this.fetchRetrying(file, url, from, length, cached?.validator);
    } catch (err) {
      // The rest of a cached prefix could not be read (416: the file is now shorter than the prefix): start over without it.
      if (from === 0 || !((err as Error).cause instanceof FetchError)) throw err;
      this.warn(`${(err as Error).message}; the cached prefix (${from} bytes) was dropped and the record read again from byte 0`);
      await this.forget(file);
      from = 0;
      res = await this.fetchRetrying(file, url, 0, length);
    }
    if (res.changed) {
      this.warn(`record ${file}: the file changed on the server since its prefix was cached; read again from byte 0`);
      from = 0;
      res = await this.fetchRetrying(file, url, 0, length);
    }
    let bytes = res.bytes;
    if (from > 0) {
      bytes = new Uint8Array(from + res.bytes.byteLength);
      bytes.set(cached!.bytes);
      bytes.set(res.bytes, from);
      this.stats.cacheExtended++;
      this.stats.bytesFromCache += from;
      this.fromCache.add(bytes);
    }
    const ms = performance.now() - start;
    this.stats.fetchMs += ms;
    this.stats.bytesFetched += res.bytes.byteLength;
    this.stats.recordsFetched++;
    this.emit({
      type: 'fetch',
      record: file,
      level,
      requested: length,
      received: res.bytes.byteLength,
      cached: from,
      status: res.status,
      examples,
      ms,
      endedAt: epochNow(),
    });
    if (res.warning) this.warn(`record ${file}: ${res.warning}`);
    // Only whole answers are kept: a file shorter than asked would make the next, longer read start past its end.
    if (this.cache && bytes.byteLength === length) {
      await this.cache
        .write(url, bytes, res.validator ?? cached?.validator)
        .catch((err: unknown) => this.warn(`the prefix cache could not store a record: ${err}`));
    }
    return bytes;
  }

  /** Records read again for a resumed stream's first batches, by stream position (the few most recent). */
  private readonly replayed = new Map<number, Promise<unknown>>();

  /**
   * A record the resumed stream replays without reading it, read once for all of
   * its examples that land in batches handed out: `read` runs on the first ask.
   */
  protected readAgain<T>(position: number, read: () => Promise<T>): Promise<T> {
    let reading = this.replayed.get(position) as Promise<T> | undefined;
    if (!reading) {
      reading = read();
      this.replayed.set(position, reading);
      if (this.replayed.size > REPLAY_RECORDS_KEPT) this.replayed.delete(this.replayed.keys().next().value!);
    }
    return reading;
  }

  /** Arrays fetchCounted answered at least partly from the cache: a source that finds them unreadable asks again with `fresh`. */
  protected readonly fromCache = new WeakSet<Uint8Array>();

  /** The cached prefix of `url`, if usable; a corrupt one is reported and dropped. */
  private async cachedPrefix(url: string, file: string): Promise<CachedPrefix | undefined> {
    if (!this.cache || url.startsWith(LOCAL_PREFIX)) return undefined;
    const found = await this.cache.read(url).catch((err: unknown) => {
      this.warn(`the prefix cache could not be read (${err}); reading from the server`);
      return undefined;
    });
    if (found !== 'corrupt') return found;
    this.stats.cacheCorrupt++;
    this.warn(`record ${file}: its cached prefix failed its checksum (cut or altered); dropped and read from the server`);
    return undefined;
  }

  /** Drops a cached prefix that a source could not parse. */
  protected async forget(file: string): Promise<void> {
    this.stats.cacheCorrupt++;
    await this.cache?.remove(new URL(file, this.options.manifestUrl).href).catch(() => undefined);
  }

  /**
   * Bytes [from, end) of a record. Link failures are retried (fetch.ts). When a
   * record still fails, the manifest is asked for one byte: if the server
   * answers, the record alone is at fault and the read throws (the record is
   * skipped); if not, the server is down and the read waits for it, up to the
   * outage limit, and then throws ServerGoneError. Any other failure throws, naming the record.
   */
  private async fetchRetrying(file: string, url: string, from: number, end: number, validator?: string): Promise<RangeResponse> {
    const signal = this.abort.signal;
    const policy = this.options.fetchPolicy;
    for (;;) {
      const link = this.link.read();
      const onRetry = () => {
        this.stats.retries++;
        link.retry();
      };
      try {
        const res = await fetchRange({ url, start: from, end, signal, policy, validator, onRetry, onHeaders: link.headers });
        link.done();
        if (this.outageSince > 0) this.serverBack();
        return res;
      } catch (err) {
        link.failed(); // an outage's waits are not link time: the pump's own clock counts them
        const failed = new Error(`record ${file}: fetch failed: ${(err as Error).message}`, { cause: err });
        if (signal.aborted || !(err instanceof TransientFetchError)) throw failed;
        if (this.outageSince === 0 && (await this.serverAnswers())) throw failed;
        await this.waitForServer(file, err);
      }
    }
  }

  /** Whether the dataset's server answers at all: one byte of the manifest, one try. */
  private async serverAnswers(): Promise<boolean> {
    const stallMs = this.options.fetchPolicy?.stallMs;
    try {
      await fetchRange({ url: this.options.manifestUrl, end: 1, signal: this.abort.signal, policy: { attempts: 1, ...(stallMs ? { stallMs } : {}) } });
      return true;
    } catch {
      return false;
    }
  }

  /** One wait of an outage: says so once, then sleeps a growing, jittered while; throws once the outage limit has passed. */
  private async waitForServer(file: string, err: Error): Promise<void> {
    const now = performance.now();
    if (this.outageSince === 0) {
      this.outageSince = now;
      let resolve!: () => void;
      this.serverWake = { promise: new Promise<void>((r) => (resolve = r)), resolve };
      this.emit({ type: 'warning', message: `the dataset's server stopped answering (record ${file}: ${err.message}); waiting for it and trying again` });
    }
    const limit = this.options.outageLimitMs ?? DEFAULT_OUTAGE_LIMIT_MS;
    const down = now - this.outageSince;
    if (down >= limit) {
      throw new ServerGoneError(`the dataset's server has not answered for ${Math.round(down / 1000)} s (record ${file}: ${err.message}); the run stops`);
    }
    const backoff = this.options.fetchPolicy?.backoffMs ?? 500;
    const wait = Math.min(OUTAGE_PROBE_MAX_MS, backoff * 2 ** Math.min(this.outageWaits++, 10), limit - down) * (0.5 + Math.random() / 2);
    await Promise.race([sleep(wait, this.abort.signal), this.serverWake?.promise]);
  }

  private serverBack(): void {
    const down = performance.now() - this.outageSince;
    this.stats.outageMs += down;
    this.outageSince = 0;
    this.outageWaits = 0;
    this.serverWake?.resolve();
    this.serverWake = undefined;
    this.emit({ type: 'warning', message: `the dataset's server answers again after ${(down / 1000).toFixed(1)} s; the run goes on` });
  }
}

/** Fetches and parses a dataset's manifest.json (from the server, or from this browser's storage). */
/** A manifest is a few kilobytes: a server that has not sent it in this long is not going to (records' stalls are 15 s too). */
export const MANIFEST_WAIT_MS = 15_000;

export async function fetchManifest(url: string, signal?: AbortSignal, waitMs = MANIFEST_WAIT_MS): Promise<unknown> {
  if (url.startsWith(LOCAL_PREFIX)) {
    const bytes = await readLocalFile(url);
    if (!bytes) throw new Error(`${url}: not in this browser's storage`);
    return JSON.parse(new TextDecoder().decode(bytes));
  }
  // A server that never answers held a run at "loading" (and a page reloaded on its address) for good.
  const timer = new AbortController();
  const waited = setTimeout(() => timer.abort(), waitMs);
  const both = signal ? AbortSignal.any([signal, timer.signal]) : timer.signal;
  const silent = () => new Error(`${url}: the server did not send it within ${waitMs / 1000} s`);
  let res: Response;
  let text: string;
  try {
    try {
      res = await fetch(url, { signal: both });
    } catch (err) {
      if (signal?.aborted) throw err;
      if (timer.signal.aborted) throw silent();
      throw new Error(`${url}: could not reach the server (${(err as Error).message})`);
    }
    if (res.status === 404) throw new Error(`${url}: missing (HTTP 404)`);
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    try {
      text = await res.text();
    } catch (err) {
      if (signal?.aborted) throw err;
      if (timer.signal.aborted) throw silent();
      throw new Error(`${url}: the answer was cut off (${(err as Error).message})`);
    }
  } finally {
    clearTimeout(waited);
  }
  // Single-page servers (Vite's dev server among them) answer a missing file with their index.html.
  if (/^\s*</.test(text) || (res.headers.get('content-type') ?? '').includes('text/html')) {
    throw new Error(`${url}: not a manifest: the server answered with an HTML page (HTTP ${res.status}), as some do for a file they do not have`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${url}: not valid JSON (${(err as Error).message})`);
  }
}
