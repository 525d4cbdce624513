// The image pipeline: fetch -> decode -> echo -> augment -> shuffle -> batch,
// over records that keep each image's JPEG scans in scan groups, so a prefix of
// a record holds every image at a lower fidelity. Two formats store such records;
// a RecordSource says what differs between them (pcr-records.ts: bytelab's
// manifest.json + .pcr; reference-records.ts: the PCR reference implementation's
// PCR_index.pb + PCR_*.pcr), and everything else is here, once: the Range
// request per record, truncation, decoding, and the warnings for bad data,
// which name the record, image and byte offset and skip just what is bad.
import { JpegDecodeError, type TurboJpeg } from '../jpeg/turbo.js';
import type { ImageShape } from '../pcr/manifest.js';
import { RecordError } from '../pcr/record.js';
import { TimeSlice } from '../shared/time-slice.js';
import type { DatasetInfo, PendingBatch, PipelineEvent, PipelineOptions, SampleImages } from './api.js';
import { BasePipeline, ServerGoneError, startsOf } from './base.js';
import {
  decodeToShape,
  emptyImageStagesHeld,
  firstSamples,
  imageBatches,
  mapImageStagesHeld,
  sampleOf,
  type ImageContent,
  type ImageExample,
  type ImageStagesHeld,
} from './image-stages.js';

/** Per-record cap on image-level warnings, so one rotten record cannot flood the log. */
const IMAGE_WARNINGS_PER_RECORD = 3;

/** A record's images decoded at one scan group; undefined where an image was left out. */
type DecodedRecord = (ImageContent | undefined)[];

/**
 * An example as a stream snapshot writes it down: its id, the stream position of its record's read, its flip (1: mirrored)
 * and whether it is an echoed copy (1; left out where it is not, and in snapshots from before the flag).
 */
type ExampleRef = [id: number, position: number, flip: 0 | 1, copy?: 1];

/** ImageStagesHeld written down. */
type WrittenHeld = ImageStagesHeld<ExampleRef>;

/** A record as the pipeline schedules it. */
export interface ImageRecord {
  /** File name, resolved against the dataset's URL; it names the record in fetch events and warnings. */
  file: string;
  /** Images in the record (an estimate where the index does not count them). */
  images: number;
}

/** A dataset of image records, whatever its format. */
export interface ImageDataset<R extends ImageRecord = ImageRecord> {
  name: string;
  classes: string[];
  /** The model's input: every image is decoded to this shape. */
  image: ImageShape;
  /** Images stored at their own sizes: decoded at a reduced DCT scale where possible, then scaled to `image`. */
  variableSize?: boolean;
  /** The most scan groups of any record: the fidelity levels a reader can choose. */
  scanGroups: number;
  msssim?: number[];
  attribution?: string;
  splits: Record<string, { records: R[] }>;
}

/** A fetched record prefix, parsed: its labels, and each image's chunks per scan group. */
export interface ImageRecordPrefix {
  readonly bytes: Uint8Array;
  readonly imageCount: number;
  readonly labels: ArrayLike<number>;
  /** groupEnds[g]: the byte where scan group g ends. */
  readonly groupEnds: readonly number[];
  /** Scan groups wholly inside `bytes`. */
  readonly completeGroups: number;
  /** Image i at scan group `group` (at most completeGroups), as one JPEG. */
  image(i: number, group: number): Uint8Array;
  /** Byte offset of image i's chunk in `group`, for messages. */
  chunkOffset(i: number, group: number): number;
}

/** What a source may use of the pipeline while it opens a dataset. */
export interface OpenContext {
  signal: AbortSignal;
  warn(message: string): void;
}

/** ...and while it reads a record. */
export interface ReadContext extends OpenContext {
  /** Reads the record's first `length` bytes with one Range request, counted in the stats. */
  fetch(length: number, images: number): Promise<Uint8Array>;
}

/** Where the records of one format live, and how their bytes are read. */
export interface RecordSource<R extends ImageRecord> {
  /** Reads and checks the split's manifest or index (`given` when the worker already fetched it); `url` is what record files resolve against. */
  open(options: PipelineOptions, given: unknown, context: OpenContext): Promise<{ url: string; dataset: ImageDataset<R> }>;
  /** Scan groups the record holds. */
  groups(record: R): number;
  /** Bytes from the record's start to the end of scan group `group`: the Range request. */
  prefixLength(record: R, group: number): number;
  /** Parses a fetched prefix; throws for a record that cannot be used, and may fetch again where the record's own header says more. */
  parse(record: R, bytes: Uint8Array, group: number, context: ReadContext): Promise<ImageRecordPrefix>;
  /** Why a label cannot be trained on; formats whose writer took labels from the class list leave this out. */
  badLabel?(label: number, classes: number): string | undefined;
}

export class ImagePipeline<R extends ImageRecord = ImageRecord> extends BasePipeline<ImageDataset<R>> {
  private latest: SampleImages | undefined;
  /** Each record's first example's index in the split (examples are numbered record by record). */
  private firstIds: number[] = [];
  /** The scan group of each record read, through the tape: a resumed stream reads each record at the group the earlier run did. */
  private fidelity: () => number = () => this.options.fidelity;
  /** What the stages hold between pulls; a restored stream's start with what its snapshot held. */
  private held: ImageStagesHeld = emptyImageStagesHeld();
  protected override perRecordControls = ['fidelity'];

  constructor(
    private readonly source: RecordSource<R>,
    private readonly decoder: TurboJpeg,
    emit: (event: PipelineEvent) => void,
  ) {
    super(emit);
  }

  override async open(options: PipelineOptions, given?: unknown): Promise<DatasetInfo> {
    const { url, dataset } = await this.source.open(options, given, { signal: this.abort.signal, warn: (m) => this.warn(m) });
    return super.open({ ...options, manifestUrl: url }, withImageSize(dataset, options.imageSize));
  }

  /** The source checked the dataset as it read it. */
  protected validate(dataset: unknown): ImageDataset<R> {
    return dataset as ImageDataset<R>;
  }

  private records(): R[] {
    return this.manifest.splits[this.options.split]!.records;
  }

  protected describe(): DatasetInfo {
    const m = this.manifest;
    const records = this.records();
    const bytesAt = (g: number) => records.reduce((n, r) => n + this.source.prefixLength(r, Math.min(g, this.source.groups(r))), 0);
    return {
      kind: 'image',
      name: m.name,
      classes: m.classes,
      inputShape: [m.image.height, m.image.width, m.image.channels],
      image: m.image,
      fidelityLevels: m.scanGroups,
      examples: records.reduce((n, r) => n + r.images, 0),
      records: records.length,
      bytesPerLevel: Array.from({ length: m.scanGroups }, (_, g) => bytesAt(g + 1)),
      ...(m.msssim ? { msssim: m.msssim } : {}),
      ...(m.attribution ? { attribution: m.attribution } : {}),
    };
  }

  /** A fidelity level is a scan group here. */
  setFidelity(level: number): void {
    this.options.fidelity = Math.min(this.manifest.scanGroups, Math.max(1, Math.round(level)));
  }

  /** The first images of the most recently decoded record, as the model sees them. */
  samples(n: number): SampleImages | undefined {
    return firstSamples(this.latest, n);
  }

  protected batches(): AsyncIterable<PendingBatch> {
    const records = this.records();
    this.firstIds = startsOf(records.map((r) => r.images));
    this.fidelity = this.tape.channel('fidelity', () => this.options.fidelity);
    if (this.startFrom) this.held = this.revive(this.startFrom.held as WrittenHeld);
    const examples = this.readEpochs(
      records,
      (r, position, index) => this.readRecord(r, position, index),
      () => 1,
    );
    return imageBatches(examples, { shape: this.manifest.image, ...this.stageControls(), held: this.held });
  }

  protected heldNow(): WrittenHeld {
    return mapImageStagesHeld(this.held, (e): ExampleRef => (e.copy ? [e.id, e.position, e.flip ? 1 : 0, 1] : [e.id, e.position, e.flip ? 1 : 0]));
  }

  /** A snapshot's held examples as promises to read their records again, at the scan group each was read at. */
  private revive(written: WrittenHeld): ImageStagesHeld {
    const records = this.records();
    const read = ([id, position, flip, copy]: ExampleRef): ImageExample => {
      const r = this.firstIds.findLastIndex((first) => first <= id);
      const level = this.tape.recordedValue('fidelity', position);
      if (!(r >= 0 && id - this.firstIds[r]! < records[r]!.images && position < this.tape.replayRecords && typeof level === 'number')) {
        throw new Error(`the saved run's stream snapshot names example ${id} of record read ${position}, which its tape does not hold`);
      }
      const load = async () => (await this.decodeAgain(records[r]!, position, level))?.[id - this.firstIds[r]!];
      return { id, position, ...(flip ? { flip: true } : {}), ...(copy ? { copy: true } : {}), load };
    };
    return mapImageStagesHeld(written, read);
  }

  /**
   * The examples of the record at `position` in the stream, read at the current
   * scan group. Where a resumed stream replays the earlier run, the record is not
   * read: its examples come as promises to read it, kept only if they land in a
   * batch that is handed out. Never throws for bad data.
   */
  private async readRecord(record: R, position: number, index: number): Promise<ImageExample[]> {
    const level = this.fidelity();
    const firstId = this.firstIds[index]!;
    if (position < this.tape.replayRecords) {
      const outcome = this.tape.outcome(position);
      const kept = outcome === undefined ? Array.from({ length: record.images }, (_, i) => i) : (outcome ?? []);
      const load = () => this.decodeAgain(record, position, level);
      return kept.map((i) => ({ id: firstId + i, position, load: async () => (await load())?.[i] }));
    }
    const decoded = await this.decodeRecord(record, level);
    const examples: ImageExample[] = [];
    decoded?.forEach((content, i) => content && examples.push({ id: firstId + i, position, ...content }));
    if (!decoded) this.tape.noteOutcome(position, null);
    else if (examples.length !== record.images)
      this.tape.noteOutcome(
        position,
        examples.map((e) => e.id - firstId),
      );
    return examples;
  }

  /** A replayed record, read once for all of its examples that are trained on. */
  private decodeAgain(record: R, position: number, level: number): Promise<DecodedRecord | undefined> {
    return this.readAgain(position, async () => {
      const d = await this.decodeRecord(record, level, 'again');
      if (!d) this.warn(`record ${record.file}: could not be read again to continue the run; its examples are left out`);
      return d;
    });
  }

  /** Fetches a record up to scan group `level` and decodes every image (`again`: for a resumed run, see examplesReread). Never throws for bad data. */
  private async decodeRecord(record: R, level: number, again?: 'again'): Promise<DecodedRecord | undefined> {
    const loaded = await this.fetchRecord(record, level);
    if (!loaded) return undefined;
    const { prefix, group } = loaded;
    const shape = this.manifest.image;
    const { width, height, channels } = shape;
    const classes = this.manifest.classes.length;
    const slice = new TimeSlice();
    const decoded: DecodedRecord = new Array(prefix.imageCount);
    let warned = 0;
    const drop = (message: string) => {
      this.stats.examplesDropped++;
      if (warned++ < IMAGE_WARNINGS_PER_RECORD) this.warn(message);
    };
    for (let i = 0; i < prefix.imageCount; i++) {
      await slice.yieldIfDue(); // the worker answers the trainer between images, not after the whole record
      if (this.abort.signal.aborted) return undefined; // closed meanwhile: the rest would only take the next run's time
      const label = prefix.labels[i]!;
      const bad = this.source.badLabel?.(label, classes);
      if (bad) {
        drop(`record ${record.file}, image ${i}: ${bad}; image left out`);
        continue;
      }
      try {
        // Chunks 1..group: an image with fewer scans than the group has empty chunks there, so it comes whole.
        const jpeg = prefix.image(i, group);
        const img = this.manifest.variableSize ? decodeToShape(this.decoder, jpeg, shape) : this.decoder.decode(jpeg, channels);
        if (img.width !== width || img.height !== height) throw new JpegDecodeError(`decoded ${img.width}x${img.height}, the manifest says ${width}x${height}`);
        decoded[i] = { pixels: img.data, label };
      } catch (err) {
        if (!(err instanceof JpegDecodeError)) throw err;
        drop(`record ${record.file}, image ${i} (chunk at byte ${prefix.chunkOffset(i, 1)}): ${err.message}; image left out`);
      }
    }
    if (warned > IMAGE_WARNINGS_PER_RECORD) this.warn(`record ${record.file}: ${warned - IMAGE_WARNINGS_PER_RECORD} more images left out`);
    this.stats.decodeMs += slice.busyMs;
    const examples = decoded.filter((c) => c !== undefined);
    this.stats[again ? 'examplesReread' : 'examplesRead'] += examples.length;
    this.latest = sampleOf(examples, shape, group) ?? this.latest;
    return decoded;
  }

  /**
   * One Range request for the record's prefix at scan group `level` (capped at
   * the record's own count), parsed by the source. A record that cannot be read
   * is skipped; a short one is used at the groups that arrived whole.
   */
  private async fetchRecord(record: R, level: number): Promise<{ prefix: ImageRecordPrefix; group: number } | undefined> {
    const group = Math.min(level, this.source.groups(record));
    let prefix: ImageRecordPrefix;
    try {
      const context: ReadContext = {
        signal: this.abort.signal,
        warn: (m) => this.warn(m),
        fetch: (length, images) => this.fetchCounted(record.file, length, group, images),
      };
      const length = this.source.prefixLength(record, group);
      const bytes = await context.fetch(length, record.images);
      try {
        prefix = await this.source.parse(record, bytes, group, context);
      } catch (err) {
        if (!this.fromCache.has(bytes)) throw err;
        // The cached prefix passed its checksum but not the record's own header: drop it and ask the server.
        this.warn(`${messageOf(err, record.file)}; that prefix came from the cache, so it was dropped and read again`);
        await this.forget(record.file);
        prefix = await this.source.parse(record, await this.fetchCounted(record.file, length, group, record.images, true), group, context);
      }
    } catch (err) {
      if (this.abort.signal.aborted) return undefined;
      if (err instanceof ServerGoneError) throw err;
      this.skipRecord(messageOf(err, record.file));
      return undefined;
    }
    const usable = Math.min(group, prefix.completeGroups);
    if (usable === 0) {
      this.skipRecord(`record ${record.file}: truncated at byte ${prefix.bytes.byteLength}, before scan group 1 ends (byte ${prefix.groupEnds[1]})`);
      return undefined;
    }
    if (usable < group) {
      this.warn(
        `record ${record.file}: truncated at byte ${prefix.bytes.byteLength}, scan group ${group} would end at byte ${prefix.groupEnds[group]}; using group ` +
          `${usable}`,
      );
    }
    return { prefix, group: usable };
  }
}

/** The dataset with its images decoded to `size` (PipelineOptions.imageSize) rather than the manifest's; as it is without one. */
export function withImageSize<D extends ImageDataset>(dataset: D, size: PipelineOptions['imageSize']): D {
  if (!size) return dataset;
  const { width, height } = size;
  if (!(Number.isInteger(width) && width >= 1 && Number.isInteger(height) && height >= 1))
    throw new RangeError(`image size must be whole numbers of pixels >= 1, got ${width}x${height}`);
  if (width === dataset.image.width && height === dataset.image.height) return dataset;
  return { ...dataset, image: { ...dataset.image, width, height }, variableSize: true };
}

/** RecordErrors already name the record and the byte offset; other errors get the record's name. */
export function messageOf(err: unknown, record: string): string {
  const message = (err as Error).message;
  if (err instanceof RecordError || message.startsWith(`record ${record}`)) return message;
  return `record ${record}: ${message}`;
}
