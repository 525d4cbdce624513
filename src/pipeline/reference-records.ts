// The record source for the PCR reference implementation's own format
// (src/pcr/reference.ts; docs/pcr.md, "The reference format"), read by the one
// image pipeline: opened on the URL of a split's PCR_index.pb, it reads every
// record with one Range request of referencePrefixLength(offsets, g) bytes and
// scales each image to the model's input. What the format does not store (input
// size, colour, class names) comes from the index URL's query string:
//
//   .../train/PCR_index.pb?size=64x64&channels=3&classes=10
//
// The index does not count a record's images, and records may differ in scan
// groups (per-image scan scripts): a record is read at min(g, its own groups).
import { jpegFrameInfo } from '../jpeg/markers.js';
import type { ImageShape } from '../pcr/manifest.js';
import { ProtoReader, varintSize, WIRE_LEN } from '../pcr/protobuf.js';
import {
  parseReferenceIndex,
  readReferenceRecordPrefix,
  REFERENCE_INDEX_FILE,
  referencePrefixLength,
  type ReferenceIndexEntry,
  type ReferenceRecordPrefix,
} from '../pcr/reference.js';
import { NoSuchSplit } from '../shared/errors.js';
import type { PipelineOptions } from './api.js';
import { fetchPrefix } from './fetch.js';
import { LOCAL_PREFIX, readLocalFile } from '../storage/local-datasets.js';
import { messageOf, type ImageDataset, type OpenContext, type RecordSource } from './image-pipeline.js';

// ---------------------------------------------------------------------------
// The dataset as the pipeline sees it

/** Query parameters of the index URL that are options, not split names. */
const OPTION_KEYS = new Set(['size', 'channels', 'classes', 'name']);
/** Input size when neither the URL nor the first image says. */
const REFERENCE_DEFAULT_SIZE = 64;
/** Bytes of the first image read at open beyond the metadata, for its frame header (size, colour). */
const FIRST_IMAGE_HEAD = 2048;

export interface ReferenceRecordInfo {
  /** Record file name, relative to the index (the index entry's name). */
  file: string;
  /** Byte lengths of the record's messages: metadata, scan group 1, ..., scan group G. */
  offsets: number[];
  /** Images in the record: exact for the record read at open, estimated for the others (the index does not count images). */
  images: number;
}

/** What referenceRecords.open builds from PCR_index.pb, the first record's metadata and the URL's query. */
export interface ReferenceDataset extends ImageDataset<ReferenceRecordInfo> {
  format: 'pcr-reference';
  /** The split's PCR_index.pb; record names are resolved against it. */
  indexUrl: string;
  image: ImageShape;
  /** Images come at their own sizes and are scaled to `image`. */
  variableSize: true;
  /** The largest scan-group count of the split's records (the slider's range). */
  scanGroups: number;
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
// The record source

export const referenceRecords: RecordSource<ReferenceRecordInfo> = {
  /**
   * Opens the split's PCR_index.pb (options.manifestUrl is the index URL; the
   * split's own index is found with referenceSplitUrl). `given` may be the
   * index bytes, or a ReferenceDataset built before; without it the index is
   * fetched, then the first record's metadata with one small Range request.
   */
  async open(options, given, context) {
    const indexUrl = referenceSplitUrl(options.manifestUrl, options.split);
    if (!indexUrl)
      throw new NoSuchSplit(
        `${options.manifestUrl}: no split "${options.split}" (the index is in a folder named neither "${options.split}" nor "train"; give ` +
          `${options.split}=PATH in the query)`,
      );
    const dataset = isReferenceDataset(given) ? given : await load(indexUrl, options, context, given instanceof Uint8Array ? given : undefined);
    return { url: indexUrl, dataset };
  },

  groups: (entry) => entry.offsets.length - 1,

  prefixLength: (entry, group) => referencePrefixLength(entry.offsets, group),

  async parse(entry, bytes) {
    return readReferenceRecordPrefix(bytes, entry.offsets, entry.file);
  },

  // The format stores no class names: labels are checked against those the URL gives (or the first record's).
  badLabel: (label, classes) =>
    label >= 0 && label < classes ? undefined : `label ${label} is not one of the ${classes} classes (give classes= in the index URL)`,
};

async function load(indexUrl: string, options: PipelineOptions, { signal, warn }: OpenContext, indexBytes?: Uint8Array): Promise<ReferenceDataset> {
  const opts = referenceUrlOptions(indexUrl);
  let bytes: Uint8Array;
  try {
    bytes = indexBytes ?? (await fetchWhole(indexUrl, signal));
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
      const res = await fetchPrefix(new URL(entry.name, indexUrl).href, length, signal, options.fetchPolicy);
      if (res.warning) warn(`record ${entry.name}: ${res.warning}`);
      const prefix = readReferenceRecordPrefix(res.bytes, entry.offsets, entry.name);
      first = { entry, prefix, frame: firstImageFrame(res.bytes, entry.offsets[0]!) };
      break;
    } catch (err) {
      if (signal.aborted) throw err;
      warn(`${messageOf(err, entry.name)}; record skipped`);
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
    file: e.name,
    offsets: e.offsets,
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
    variableSize: true,
    scanGroups,
    splits: { [options.split]: { records } },
  };
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
