// The data pipeline: fetch -> decode -> echo -> augment -> shuffle -> batch.
// Runs in a worker (worker.ts) or, for tests, in Node. Bad records and images
// are reported as warnings naming the record, image and byte offset, and
// skipped: the stream goes on with the good data.
import { JpegDecodeError, type TurboJpeg } from '../jpeg/turbo.js';
import { bytesForGroup, imageCount, validateManifest, type PcrManifest, type RecordEntry } from '../pcr/manifest.js';
import { RecordError, RecordPrefix } from '../pcr/record.js';
import type { Batch, DatasetInfo, PipelineEvent, PipelineOptions, PipelineStats, SampleImages } from './api.js';
import { fetchPrefix } from './fetch.js';
import { BoundedQueue } from './queue.js';
import { seededRandom, shuffleInPlace, type Random } from './random.js';
import { chunk, echo, shuffleBuffer } from './stages.js';

interface Example {
  pixels: Uint8Array;
  label: number;
}

/** Per-record cap on image-level warnings, so one rotten record cannot flood the log. */
const IMAGE_WARNINGS_PER_RECORD = 3;

export class Pipeline {
  private options!: PipelineOptions;
  private manifest!: PcrManifest;
  private random!: Random;
  private queue: BoundedQueue<Batch> | undefined;
  private abort = new AbortController();
  private latest: SampleImages | undefined;
  readonly stats: PipelineStats = { bytesFetched: 0, recordsFetched: 0, imagesDecoded: 0, imagesDropped: 0, examplesEmitted: 0, batchesEmitted: 0, fetchMs: 0, decodeMs: 0, epoch: 0 };

  constructor(
    private readonly decoder: TurboJpeg,
    private readonly emit: (event: PipelineEvent) => void,
  ) {}

  async open(options: PipelineOptions): Promise<DatasetInfo> {
    this.options = { ...options };
    this.random = seededRandom(options.seed);
    const res = await fetch(options.manifestUrl, { signal: this.abort.signal });
    if (!res.ok) throw new Error(`${options.manifestUrl}: HTTP ${res.status}`);
    this.manifest = validateManifest(await res.json(), options.manifestUrl);
    const split = this.manifest.splits[options.split];
    if (!split) throw new Error(`${options.manifestUrl}: no split "${options.split}" (have ${Object.keys(this.manifest.splits).join(', ')})`);
    this.setScanGroup(options.scanGroup);
    this.setEchoFactor(options.echoFactor);
    const m = this.manifest;
    return {
      name: m.name,
      classes: m.classes,
      ...m.image,
      scanGroups: m.scanGroups,
      images: imageCount(m, options.split),
      bytesPerGroup: Array.from({ length: m.scanGroups }, (_, g) => bytesForGroup(m, options.split, g + 1)),
      ...(m.attribution ? { attribution: m.attribution } : {}),
    };
  }

  setScanGroup(group: number): void {
    this.options.scanGroup = Math.min(this.manifest.scanGroups, Math.max(1, Math.round(group)));
  }

  setEchoFactor(factor: number): void {
    if (!(factor >= 1)) throw new RangeError(`echo factor must be >= 1, got ${factor}`);
    this.options.echoFactor = factor;
  }

  /** The next batch, or null after the last epoch. Starts the prefetching loop on first call. */
  async next(): Promise<Batch | null> {
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

  /** The first images of the most recently decoded record, as the model sees them. */
  samples(n: number): SampleImages | undefined {
    if (!this.latest) return undefined;
    const { width, height, channels } = this.manifest.image;
    const per = width * height * channels;
    const count = Math.min(n, this.latest.labels.length);
    return { ...this.latest, labels: this.latest.labels.slice(0, count), pixels: this.latest.pixels.slice(0, count * per) };
  }

  private async pump(queue: BoundedQueue<Batch>): Promise<void> {
    const o = this.options;
    try {
      const echoed = echo(this.examples(), () => this.options.echoFactor, this.random);
      const augmented = o.augment ? this.flips(echoed) : echoed;
      const shuffled = o.shuffleBuffer > 1 ? shuffleBuffer(augmented, o.shuffleBuffer, this.random) : augmented;
      for await (const group of chunk(shuffled, () => this.options.batchSize)) {
        if (queue.isClosed) return;
        await queue.push(this.toBatch(group));
      }
      queue.close();
    } catch (err) {
      queue.close(this.abort.signal.aborted ? undefined : err);
    }
  }

  /** Record order is reshuffled every epoch; records are the unit of fetching. */
  private async *examples(): AsyncGenerator<Example> {
    const records = this.manifest.splits[this.options.split]!.records;
    for (let epoch = 0; epoch < this.options.epochs; epoch++) {
      this.stats.epoch = epoch;
      this.emit({ type: 'epoch', split: this.options.split, epoch });
      const order = records.map((_, i) => i);
      if (this.options.shuffleBuffer > 1) shuffleInPlace(order, this.random);
      let produced = 0;
      for (const i of order) {
        if (this.abort.signal.aborted) return;
        for (const ex of await this.readRecord(records[i]!)) {
          produced++;
          yield ex;
        }
      }
      if (produced === 0) throw new Error(`no readable image in split "${this.options.split}": every record failed (see warnings)`);
    }
  }

  private warn(message: string): void {
    this.emit({ type: 'warning', message });
  }

  /** Fetches a record up to the current scan group and decodes every image. Never throws for bad data. */
  private async readRecord(entry: RecordEntry): Promise<Example[]> {
    const loaded = await this.fetchRecord(entry);
    if (!loaded) return [];
    const { prefix, group } = loaded;
    const { width, height, channels } = this.manifest.image;
    const start = performance.now();
    const examples: Example[] = [];
    let warned = 0;
    for (let i = 0; i < prefix.header.images; i++) {
      try {
        const img = this.decoder.decode(prefix.image(i, group), channels);
        if (img.width !== width || img.height !== height) throw new JpegDecodeError(`decoded ${img.width}x${img.height}, the manifest says ${width}x${height}`);
        examples.push({ pixels: img.data, label: prefix.header.labels[i]! });
      } catch (err) {
        if (!(err instanceof JpegDecodeError)) throw err;
        this.stats.imagesDropped++;
        if (warned++ < IMAGE_WARNINGS_PER_RECORD) this.warn(`record ${entry.file}, image ${i} (chunk at byte ${prefix.chunkOffset(i, 1)}): ${err.message}; image left out`);
      }
    }
    if (warned > IMAGE_WARNINGS_PER_RECORD) this.warn(`record ${entry.file}: ${warned - IMAGE_WARNINGS_PER_RECORD} more images left out`);
    this.stats.decodeMs += performance.now() - start;
    this.stats.imagesDecoded += examples.length;
    this.keepSamples(examples, group);
    return examples;
  }

  /**
   * One Range request for the record's prefix at the current group. The record's
   * own header is the truth: if the manifest's offsets disagree we say so, and
   * fetch again with the right length when the first read came up short.
   */
  private async fetchRecord(entry: RecordEntry): Promise<{ prefix: RecordPrefix; group: number } | undefined> {
    const group = this.options.scanGroup;
    const url = new URL(entry.file, this.options.manifestUrl).href;
    let prefix: RecordPrefix;
    try {
      let bytes = await this.fetchCounted(entry, url, entry.groupEnds[group]!, group);
      prefix = new RecordPrefix(bytes, entry.file);
      if (prefix.header.groups !== this.manifest.scanGroups) {
        throw new RecordError(entry.file, 12, `has ${prefix.header.groups} scan groups, the manifest says ${this.manifest.scanGroups}`);
      }
      const trueEnd = prefix.header.groupEnds[group]!;
      if (trueEnd !== entry.groupEnds[group] || prefix.header.images !== entry.images) {
        this.warn(`record ${entry.file}: the manifest says ${entry.images} images with group ${group} ending at byte ${entry.groupEnds[group]}, the record's header says ${prefix.header.images} images ending at byte ${trueEnd}; following the header`);
        if (trueEnd > bytes.byteLength && bytes.byteLength === entry.groupEnds[group]) {
          bytes = await this.fetchCounted(entry, url, trueEnd, group);
          prefix = new RecordPrefix(bytes, entry.file);
        }
      }
    } catch (err) {
      if (this.abort.signal.aborted) return undefined;
      this.warn(`${(err as Error).message}; record skipped`);
      return undefined;
    }
    const usable = Math.min(group, prefix.completeGroups);
    if (usable === 0) {
      this.warn(`record ${entry.file}: truncated at byte ${prefix.bytes.byteLength}, before scan group 1 ends (byte ${prefix.header.groupEnds[1]}); record skipped`);
      return undefined;
    }
    if (usable < group) {
      this.warn(`record ${entry.file}: truncated at byte ${prefix.bytes.byteLength}, scan group ${group} would end at byte ${prefix.header.groupEnds[group]}; using group ${usable}`);
    }
    return { prefix, group: usable };
  }

  private async fetchCounted(entry: RecordEntry, url: string, length: number, group: number): Promise<Uint8Array> {
    const start = performance.now();
    try {
      const res = await fetchPrefix(url, length, this.abort.signal, this.options.fetchTimeoutMs);
      const ms = performance.now() - start;
      this.stats.fetchMs += ms;
      this.stats.bytesFetched += res.bytes.byteLength;
      this.stats.recordsFetched++;
      this.emit({ type: 'fetch', record: entry.file, group, requested: length, received: res.bytes.byteLength, status: res.status, images: entry.images, ms });
      if (res.warning) this.warn(`record ${entry.file}: ${res.warning}`);
      return res.bytes;
    } catch (err) {
      if (err instanceof RecordError) throw err;
      throw new Error(`record ${entry.file}: fetch failed: ${(err as Error).message}`);
    }
  }

  private keepSamples(examples: Example[], group: number): void {
    if (examples.length === 0) return;
    const { width, height, channels } = this.manifest.image;
    const per = width * height * channels;
    const n = Math.min(64, examples.length);
    const pixels = new Uint8Array(n * per);
    for (let i = 0; i < n; i++) pixels.set(examples[i]!.pixels, i * per);
    this.latest = { width, height, channels, group, labels: examples.slice(0, n).map((e) => e.label), pixels };
  }

  private async *flips(source: AsyncIterable<Example>): AsyncGenerator<Example> {
    const { width, height, channels } = this.manifest.image;
    for await (const ex of source) {
      if (this.random() < 0.5) {
        yield ex;
        continue;
      }
      const out = new Uint8Array(ex.pixels.length);
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          const from = (y * width + x) * channels;
          const to = (y * width + (width - 1 - x)) * channels;
          for (let c = 0; c < channels; c++) out[to + c] = ex.pixels[from + c]!;
        }
      }
      yield { pixels: out, label: ex.label };
    }
  }

  private toBatch(examples: Example[]): Batch {
    const per = examples[0]!.pixels.length;
    const x = new Float32Array(examples.length * per);
    const y = new Int32Array(examples.length);
    examples.forEach((ex, i) => {
      const base = i * per;
      for (let k = 0; k < per; k++) x[base + k] = ex.pixels[k]! / 255;
      y[i] = ex.label;
    });
    this.stats.examplesEmitted += examples.length;
    return { x, y, size: examples.length, index: this.stats.batchesEmitted++ };
  }
}
