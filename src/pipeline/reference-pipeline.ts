// The image pipeline over a dataset in the PCR reference implementation's own
// format (src/pcr/reference.ts; docs/pcr.md, "The reference format"): opened on
// the URL of a split's PCR_index.pb, it reads every record with one Range request
// of referencePrefixLength(offsets, g) bytes, decodes each image with the wasm
// decoder, scales it to the model's input and yields the same image batches as
// ImagePipeline. What the format does not store (input size, colour, class
// names) comes from the index URL's query string:
//
//   .../train/PCR_index.pb?size=64x64&channels=3&classes=10
//
// Bad records (truncated, corrupt metadata, offsets in the index that do not
// match the file) are reported with the record and the byte offset and skipped;
// the run goes on with the others.
import { jpegFrameInfo } from '../jpeg/markers.js';
import { JpegDecodeError, type TurboJpeg } from '../jpeg/turbo.js';
import type { ImageShape } from '../pcr/manifest.js';
import { ProtoReader, varintSize, WIRE_LEN } from '../pcr/protobuf.js';
import { RecordError } from '../pcr/record.js';
import {
  parseReferenceIndex,
  readReferenceRecordPrefix,
  REFERENCE_INDEX_FILE,
  referencePrefixLength,
  type ReferenceIndexEntry,
  type ReferenceRecordPrefix,
} from '../pcr/reference.js';
import type { Batch, DatasetInfo, PipelineEvent, PipelineOptions, SampleImages } from './api.js';
import { BasePipeline } from './base.js';
import { fetchPrefix } from './fetch.js';
import { LOCAL_PREFIX, readLocalFile } from '../storage/local-datasets.js';
import { decodeToShape, firstSamples, imageBatches, sampleOf, type ImageExample } from './image-stages.js';

// ---------------------------------------------------------------------------
// The dataset as the pipeline sees it

/** Query parameters of the index URL that are options, not split names. */
const OPTION_KEYS = new Set(['size', 'channels', 'classes', 'name']);
/** Input size when neither the URL nor the first image says. */
const REFERENCE_DEFAULT_SIZE = 64;
/** Bytes of the first image read at open beyond the metadata, for its frame header (size, colour). */
const FIRST_IMAGE_HEAD = 2048;
const IMAGE_WARNINGS_PER_RECORD = 3;

export interface ReferenceRecordInfo extends ReferenceIndexEntry {
  /** Images in the record: exact for the record read at open, estimated for the others (the index does not count images). */
  images: number;
}

/** What ReferencePipeline.open builds from PCR_index.pb, the first record's metadata and the URL's query. */
export interface ReferenceDataset {
  format: 'pcr-reference';
  name: string;
  /** The split's PCR_index.pb; record names are resolved against it. */
  indexUrl: string;
  classes: string[];
  image: ImageShape;
  /** The largest scan-group count of the split's records (the slider's range). */
  scanGroups: number;
  splits: Record<string, { records: ReferenceRecordInfo[] }>;
}

export interface ReferenceUrlOptions {
  size?: { width: number; height: number };
  channels?: 1 | 3;
  classes?: string[];
  name?: string;
}

/** Whether a dataset URL names a reference-format index (the worker's dispatch): its path ends in `.pb`. */
export function isReferenceIndexUrl(url: string): boolean {
  try {
    return new URL(url).pathname.toLowerCase().endsWith('.pb');
  } catch {
    return url.split(/[?#]/)[0]!.toLowerCase().endsWith('.pb');
  }
}

/** Reads size=WxH, channels=1|3, classes=N or classes=a,b,c and name= from the index URL; throws naming a bad value. */
export function referenceUrlOptions(url: string): ReferenceUrlOptions {
  const q = new URL(url).searchParams;
  const out: ReferenceUrlOptions = {};
  const size = q.get('size');
  if (size !== null) {
    const m = /^(\d+)x(\d+)$/.exec(size.trim());
    const [w, h] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
    if (!(w >= 1 && h >= 1 && w <= 4096 && h <= 4096)) throw new Error(`${url}: size must look like 64x64 (1..4096 each), got "${size}"`);
    out.size = { width: w, height: h };
  }
  const channels = q.get('channels');
  if (channels !== null) {
    if (channels !== '1' && channels !== '3') throw new Error(`${url}: channels must be 1 or 3, got "${channels}"`);
    out.channels = channels === '1' ? 1 : 3;
  }
  const classes = q.get('classes');
  if (classes !== null) {
    if (/^\d+$/.test(classes.trim())) {
      const n = Number(classes);
      if (!(n >= 1 && n <= 65536)) throw new Error(`${url}: classes must be a count 1..65536 or a comma-separated list of names, got "${classes}"`);
      out.classes = Array.from({ length: n }, (_, i) => String(i));
    } else {
      const names = classes.split(',').map((s) => s.trim());
      if (names.some((s) => s === '')) throw new Error(`${url}: classes has an empty name ("${classes}")`);
      out.classes = names;
    }
  }
  const name = q.get('name');
  if (name) out.name = name;
  return out;
}

/**
 * The index URL of `split`, or undefined when there is none. A query parameter
 * named after the split (`test=../val/PCR_index.pb`) wins; otherwise the URL is
 * the split named by its folder (`.../test/PCR_index.pb` is "test") and is "train"
 * when its folder is not named after another split; and from `.../train/PCR_index.pb`
 * the other splits are its siblings, `.../SPLIT/PCR_index.pb` (the layout
 * `bytelab pcr export` writes). The query string goes along, so the options apply to every split.
 */
export function referenceSplitUrl(url: string, split: string): string | undefined {
  const u = new URL(url);
  const folders = u.pathname.split('/');
  const folder = decodeURIComponent(folders[folders.length - 2] ?? '');
  const explicit = OPTION_KEYS.has(split) ? null : u.searchParams.get(split);
  let target: URL;
  if (explicit) target = new URL(explicit, u);
  else if (folder === split) return u.href;
  else if (split === 'train' && folder !== 'test') return u.href;
  else if (folder === 'train') target = new URL(`../${encodeURIComponent(split)}/${REFERENCE_INDEX_FILE}`, u);
  else return undefined;
  target.search = u.search;
  return target.href;
}

/** The whole of a small file (the index), from the server or from this browser's storage. */
async function fetchWhole(url: string, signal: AbortSignal): Promise<Uint8Array> {
  if (url.startsWith(LOCAL_PREFIX)) {
    const bytes = await readLocalFile(url);
    if (!bytes) throw new Error(`${url}: not in this browser's storage`);
    return bytes;
  }
  const res = await fetch(url, { signal });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** The frame header of the first image of group 1, from a prefix that holds its start; undefined if it cannot be read. */
function firstImageFrame(bytes: Uint8Array, metaEnd: number): { width: number; height: number; components: number } | undefined {
  try {
    const r = new ProtoReader(bytes, metaEnd, bytes.byteLength);
    const key = r.key();
    if (key.field !== 1 || key.wire !== WIRE_LEN) return undefined;
    const length = r.uint();
    return jpegFrameInfo(bytes.subarray(r.pos, Math.min(bytes.byteLength, r.pos + length)));
  } catch {
    return undefined;
  }
}

/** Fits a size inside a square of `max` keeping its aspect ratio (never grows it). */
function fitInside(size: { width: number; height: number }, max: number): { width: number; height: number } {
  const scale = Math.min(1, max / Math.max(size.width, size.height));
  return { width: Math.max(1, Math.round(size.width * scale)), height: Math.max(1, Math.round(size.height * scale)) };
}

// ---------------------------------------------------------------------------
// The pipeline

export class ReferencePipeline extends BasePipeline<ReferenceDataset> {
  private latest: SampleImages | undefined;

  constructor(
    private readonly decoder: TurboJpeg,
    emit: (event: PipelineEvent) => void,
  ) {
    super(emit);
  }

  /**
   * Opens the split's PCR_index.pb (options.manifestUrl is the index URL; the
   * split's own index is found with referenceSplitUrl). `prefetched` may be the
   * index bytes, or a ReferenceDataset built before; without it the index is
   * fetched, then the first record's metadata with one small Range request.
   */
  override async open(options: PipelineOptions, prefetched?: unknown): Promise<DatasetInfo> {
    const indexUrl = referenceSplitUrl(options.manifestUrl, options.split);
    if (!indexUrl)
      throw new Error(
        `${options.manifestUrl}: no split "${options.split}" (the index is in a folder named neither "${options.split}" nor "train"; give ` +
          `${options.split}=PATH in the query)`,
      );
    const dataset = isReferenceDataset(prefetched) ? prefetched : await this.load(indexUrl, options, prefetched instanceof Uint8Array ? prefetched : undefined);
    return super.open({ ...options, manifestUrl: indexUrl }, dataset);
  }

  private async load(indexUrl: string, options: PipelineOptions, indexBytes?: Uint8Array): Promise<ReferenceDataset> {
    const opts = referenceUrlOptions(indexUrl);
    let bytes: Uint8Array;
    try {
      bytes = indexBytes ?? (await fetchWhole(indexUrl, this.abort.signal));
    } catch (err) {
      throw new Error(`no split "${options.split}": ${(err as Error).message}`);
    }
    const entries = parseReferenceIndex(bytes, new URL(indexUrl).pathname.split('/').pop() || REFERENCE_INDEX_FILE);
    if (entries.length === 0) throw new Error(`${indexUrl}: the index lists no records`);

    // The first record whose metadata reads (normally the first: one small request).
    let first: { entry: ReferenceIndexEntry; prefix: ReferenceRecordPrefix; frame: ReturnType<typeof firstImageFrame> } | undefined;
    for (const entry of entries) {
      const length = Math.min(referencePrefixLength(entry.offsets, 1), entry.offsets[0]! + FIRST_IMAGE_HEAD);
      try {
        const res = await fetchPrefix(new URL(entry.name, indexUrl).href, length, this.abort.signal, options.fetchTimeoutMs);
        if (res.warning) this.warn(`record ${entry.name}: ${res.warning}`);
        const prefix = readReferenceRecordPrefix(res.bytes, entry.offsets, entry.name);
        first = { entry, prefix, frame: firstImageFrame(res.bytes, entry.offsets[0]!) };
        break;
      } catch (err) {
        if (this.abort.signal.aborted) throw err;
        this.warn(`${messageOf(err, entry.name)}; record skipped`);
      }
    }
    if (!first) throw new Error(`${indexUrl}: no record's metadata could be read (see warnings)`);

    // The index does not count images: estimate each record's count from its
    // metadata length, whose labels take the same bytes each as the first record's.
    const n1 = first.prefix.imageCount;
    const meta1 = first.entry.offsets[0]!;
    const { progressiveLevels, version } = first.prefix;
    const fixed = 1 + varintSize(progressiveLevels) + (version === undefined ? 0 : 1 + varintSize(version));
    const perLabel = Math.max(1, (meta1 - fixed) / n1);
    const records: ReferenceRecordInfo[] = entries.map((e) => ({
      ...e,
      images: e === first.entry || e.offsets[0] === meta1 ? n1 : Math.max(1, Math.round((e.offsets[0]! - fixed) / perLabel)),
    }));
    const scanGroups = entries.reduce((m, e) => Math.max(m, e.offsets.length - 1), 1);
    const maxLabel = first.prefix.labels.reduce((m, l) => Math.max(m, l), -1);
    const classes = opts.classes ?? Array.from({ length: Math.max(1, maxLabel + 1) }, (_, i) => String(i));
    const frame = first.frame;
    const channels: 1 | 3 = opts.channels ?? (frame?.components === 1 ? 1 : 3);
    const size = opts.size ?? (frame ? fitInside(frame, REFERENCE_DEFAULT_SIZE) : { width: REFERENCE_DEFAULT_SIZE, height: REFERENCE_DEFAULT_SIZE });
    return {
      format: 'pcr-reference',
      name: opts.name ?? datasetName(indexUrl, options.split),
      indexUrl,
      classes,
      image: { ...size, channels },
      scanGroups,
      splits: { [options.split]: { records } },
    };
  }

  protected validate(json: unknown, where: string): ReferenceDataset {
    if (!isReferenceDataset(json)) throw new Error(`${where}: not a reference-format dataset`);
    return json;
  }

  private records(): ReferenceRecordInfo[] {
    return this.manifest.splits[this.options.split]!.records;
  }

  protected describe(): DatasetInfo {
    const m = this.manifest;
    const records = this.records();
    return {
      kind: 'image',
      name: m.name,
      classes: m.classes,
      inputShape: [m.image.height, m.image.width, m.image.channels],
      image: m.image,
      scanGroups: m.scanGroups,
      examples: records.reduce((n, r) => n + r.images, 0),
      bytesPerGroup: Array.from({ length: m.scanGroups }, (_, g) =>
        records.reduce((n, r) => n + referencePrefixLength(r.offsets, Math.min(g + 1, r.offsets.length - 1)), 0),
      ),
    };
  }

  setScanGroup(group: number): void {
    this.options.scanGroup = Math.min(this.manifest.scanGroups, Math.max(1, Math.round(group)));
  }

  /** The first images of the most recently decoded record, as the model sees them. */
  samples(n: number): SampleImages | undefined {
    return firstSamples(this.latest, n);
  }

  protected batches(): AsyncGenerator<Batch> {
    return imageBatches(
      this.readEpochs(this.records(), (r) => this.readRecord(r)),
      { shape: this.manifest.image, ...this.stageControls() },
    );
  }

  /** One Range request for the record at the current group, then every image decoded. Never throws for bad data. */
  private async readRecord(entry: ReferenceRecordInfo): Promise<ImageExample[]> {
    const loaded = await this.fetchRecord(entry);
    if (!loaded) return [];
    const { prefix, group } = loaded;
    const shape = this.manifest.image;
    const classes = this.manifest.classes.length;
    const start = performance.now();
    const examples: ImageExample[] = [];
    let warned = 0;
    const drop = (message: string) => {
      this.stats.examplesDropped++;
      if (warned++ < IMAGE_WARNINGS_PER_RECORD) this.warn(message);
    };
    for (let i = 0; i < prefix.imageCount; i++) {
      const label = prefix.labels[i]!;
      if (!(label >= 0 && label < classes)) {
        drop(`record ${entry.name}, image ${i}: label ${label} is not one of the ${classes} classes (give classes= in the index URL); image left out`);
        continue;
      }
      try {
        // Chunks 1..group: an image with fewer scans has empty chunks there, so it comes whole.
        const img = decodeToShape(this.decoder, prefix.image(i, group), shape);
        examples.push({ pixels: img.data, label });
      } catch (err) {
        if (!(err instanceof JpegDecodeError)) throw err;
        drop(`record ${entry.name}, image ${i} (chunk at byte ${prefix.chunkOffset(i, 1)}): ${err.message}; image left out`);
      }
    }
    if (warned > IMAGE_WARNINGS_PER_RECORD) this.warn(`record ${entry.name}: ${warned - IMAGE_WARNINGS_PER_RECORD} more images left out`);
    this.stats.decodeMs += performance.now() - start;
    this.stats.examplesRead += examples.length;
    this.latest = sampleOf(examples, shape, group) ?? this.latest;
    return examples;
  }

  /** Reads referencePrefixLength(offsets, g) bytes, g = the current group capped at the record's own count; undefined (with a warning) if unusable. */
  private async fetchRecord(entry: ReferenceRecordInfo): Promise<{ prefix: ReferenceRecordPrefix; group: number } | undefined> {
    const group = Math.min(this.options.scanGroup, entry.offsets.length - 1);
    const length = referencePrefixLength(entry.offsets, group);
    let prefix: ReferenceRecordPrefix;
    try {
      const bytes = await this.fetchCounted(entry.name, length, group, entry.images);
      prefix = readReferenceRecordPrefix(bytes, entry.offsets, entry.name);
    } catch (err) {
      if (this.abort.signal.aborted) return undefined;
      this.warn(`${messageOf(err, entry.name)}; record skipped`);
      return undefined;
    }
    const usable = Math.min(group, prefix.completeGroups);
    if (usable === 0) {
      this.warn(`record ${entry.name}: truncated at byte ${prefix.bytes.byteLength}, before scan group 1 ends (byte ${prefix.groupEnds[1]}); record skipped`);
      return undefined;
    }
    if (usable < group) {
      this.warn(
        `record ${entry.name}: truncated at byte ${prefix.bytes.byteLength}, scan group ${group} would end at byte ${prefix.groupEnds[group]}; using group ` +
          `${usable}`,
      );
    }
    return { prefix, group: usable };
  }
}

function isReferenceDataset(x: unknown): x is ReferenceDataset {
  const d = x as Partial<ReferenceDataset> | undefined;
  return (
    typeof d === 'object' &&
    d !== null &&
    d.format === 'pcr-reference' &&
    Array.isArray(d.classes) &&
    typeof d.scanGroups === 'number' &&
    typeof d.splits === 'object' &&
    !!d.image
  );
}

/** RecordErrors already name the record and the byte offset; other errors get the record's name. */
function messageOf(err: unknown, record: string): string {
  const message = (err as Error).message;
  if (err instanceof RecordError || message.startsWith(`record ${record}`)) return message;
  return `record ${record}: ${message}`;
}

/** "cifar10 (train)" for .../cifar10/train/PCR_index.pb, "cifar10" for .../cifar10/PCR_index.pb. */
function datasetName(indexUrl: string, split: string): string {
  const folders = new URL(indexUrl).pathname
    .split('/')
    .slice(0, -1)
    .map((s) => decodeURIComponent(s))
    .filter(Boolean);
  const last = folders[folders.length - 1];
  if (!last) return 'PCR reference dataset';
  if (last === split && folders.length > 1) return `${folders[folders.length - 2]} (${split})`;
  return last;
}
