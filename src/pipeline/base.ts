// What every data pipeline shares: options, counters, the prefetch loop that
// fills a bounded queue, record reads with Range requests, and warnings.
// Subclasses (image-pipeline.ts, toc-pipeline.ts) say how records become batches.
import type { Batch, DatasetInfo, PipelineEvent, PipelineOptions, PipelineStats } from './api.js';
import { fetchPrefix } from './fetch.js';
import { LOCAL_PREFIX, readLocalFile } from '../storage/local-datasets.js';
import { BoundedQueue } from './queue.js';
import { seededRandom, shuffleInPlace, type Random } from '../shared/random.js';

export const emptyStats = (): PipelineStats => ({
  bytesFetched: 0,
  recordsFetched: 0,
  examplesRead: 0,
  examplesDropped: 0,
  examplesEmitted: 0,
  batchesEmitted: 0,
  fetchMs: 0,
  decodeMs: 0,
  epoch: 0,
});

export abstract class BasePipeline<M> {
  protected options!: PipelineOptions;
  protected manifest!: M;
  protected random!: Random;
  protected readonly abort = new AbortController();
  private queue: BoundedQueue<Batch> | undefined;
  readonly stats: PipelineStats = emptyStats();

  constructor(protected readonly emit: (event: PipelineEvent) => void) {}

  /** Checks a parsed manifest and returns it typed, or throws naming what is wrong. */
  protected abstract validate(json: unknown, where: string): M;
  protected abstract describe(): DatasetInfo;
  /** The stream of batches; the base class runs it ahead of the consumer. */
  protected abstract batches(): AsyncIterable<Batch>;
  /** Sets options.fidelity, clamped to the dataset's levels. */
  abstract setFidelity(level: number): void;

  /** Opens the dataset; `manifestJson` may be given when the caller already fetched it. */
  async open(options: PipelineOptions, manifestJson?: unknown): Promise<DatasetInfo> {
    this.options = { ...options };
    this.random = seededRandom(options.seed);
    this.manifest = this.validate(manifestJson ?? (await fetchManifest(options.manifestUrl, this.abort.signal)), options.manifestUrl);
    const splits = (this.manifest as { splits: Record<string, unknown> }).splits;
    if (!splits[options.split]) throw new Error(`${options.manifestUrl}: no split "${options.split}" (have ${Object.keys(splits).join(', ')})`);
    this.setFidelity(options.fidelity);
    this.setEchoFactor(options.echoFactor);
    return this.describe();
  }

  setEchoFactor(factor: number): void {
    if (!(factor >= 1)) throw new RangeError(`echo factor must be >= 1, got ${factor}`);
    this.options.echoFactor = factor;
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

  close(): void {
    this.abort.abort();
    this.queue?.close();
  }

  private async pump(queue: BoundedQueue<Batch>): Promise<void> {
    try {
      for await (const batch of this.batches()) {
        if (queue.isClosed) return;
        this.stats.batchesEmitted++;
        this.stats.examplesEmitted += batch.size;
        await queue.push(batch);
      }
      queue.close();
    } catch (err) {
      queue.close(this.abort.signal.aborted ? undefined : err);
    }
  }

  /** Warnings already reported: a bad record is named once, not again every epoch. */
  private readonly warned = new Set<string>();

  /** The live controls the per-example stages read: echo factor and batch size may change mid-run. */
  protected stageControls() {
    const o = this.options;
    return {
      augment: o.augment,
      shuffleBuffer: o.shuffleBuffer,
      random: this.random,
      echoFactor: () => this.options.echoFactor,
      batchSize: () => this.options.batchSize,
      batchIndex: () => this.stats.batchesEmitted,
    };
  }

  protected warn(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.emit({ type: 'warning', message });
  }

  /**
   * Epoch loop: reads the split's records (a new random order each epoch when
   * shuffling) and yields what `read` made of each. A record that fails yields
   * nothing; a whole epoch that yields nothing ends the stream with an error.
   */
  protected async *readEpochs<R, T>(records: R[], read: (record: R) => Promise<T[]>): AsyncGenerator<T> {
    for (let epoch = 0; epoch < this.options.epochs; epoch++) {
      this.stats.epoch = epoch;
      this.emit({ type: 'epoch', split: this.options.split, epoch });
      const order = records.map((_, i) => i);
      if (this.options.shuffleBuffer > 1) shuffleInPlace(order, this.random);
      let produced = 0;
      for (const i of order) {
        if (this.abort.signal.aborted) return;
        for (const item of await read(records[i]!)) {
          produced++;
          yield item;
        }
      }
      if (produced === 0) throw new Error(`no readable data in split "${this.options.split}": every record failed (see warnings)`);
    }
  }

  /** One Range request for a record prefix, counted in the stats and reported as a fetch event. */
  protected async fetchCounted(file: string, length: number, level: number, examples: number): Promise<Uint8Array> {
    const url = new URL(file, this.options.manifestUrl).href; // resolved against the manifest
    const start = performance.now();
    try {
      const res = await fetchPrefix(url, length, this.abort.signal, this.options.fetchTimeoutMs);
      const ms = performance.now() - start;
      this.stats.fetchMs += ms;
      this.stats.bytesFetched += res.bytes.byteLength;
      this.stats.recordsFetched++;
      this.emit({ type: 'fetch', record: file, level, requested: length, received: res.bytes.byteLength, status: res.status, examples, ms });
      if (res.warning) this.warn(`record ${file}: ${res.warning}`);
      return res.bytes;
    } catch (err) {
      throw new Error(`record ${file}: fetch failed: ${(err as Error).message}`);
    }
  }
}

/** Fetches and parses a dataset's manifest.json (from the server, or from this browser's storage). */
export async function fetchManifest(url: string, signal?: AbortSignal): Promise<unknown> {
  if (url.startsWith(LOCAL_PREFIX)) {
    const bytes = await readLocalFile(url);
    if (!bytes) throw new Error(`${url}: not in this browser's storage`);
    return JSON.parse(new TextDecoder().decode(bytes));
  }
  let res: Response;
  try {
    res = await fetch(url, signal ? { signal } : {});
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new Error(`${url}: could not reach the server (${(err as Error).message})`);
  }
  if (res.status === 404) throw new Error(`${url}: missing (HTTP 404)`);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  const text = await res.text();
  // Single-page servers (Vite's dev server among them) answer a missing file with their index.html.
  if (/^\s*</.test(text) || (res.headers.get('content-type') ?? '').includes('text/html')) {
    throw new Error(`${url}: missing: the server answered HTML (HTTP ${res.status}), not a manifest`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${url}: not valid JSON (${(err as Error).message})`);
  }
}
