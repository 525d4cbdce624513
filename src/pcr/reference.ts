// Reads and writes the record format of the PCR reference implementation
// (github.com/mkuchnik/PCR_Release): `.pcr` files of back-to-back protobuf
// messages plus a `PCR_index.pb` index of their lengths. Layout and the
// differences from bytelab's own format: docs/pcr.md, "The reference format".
//
// Messages (field numbers as in the reference's .proto files):
//   MetadataRecord      { repeated int32 labels = 1; int32 progressive_levels = 2; int32 version = 3; }
//   ScanGroup           { repeated bytes image_bytes = 1; }
//   RecordOffsetsIndex  { string name = 1; repeated int32 offsets = 2; }
//   DatasetOffsetsIndex { repeated RecordOffsetsIndex records = 1; }
// A record file is MetadataRecord, ScanGroup 1, ..., ScanGroup G serialized one
// after another with no length prefix or separator: only the index says where
// one message ends. offsets = [metadata length, group 1 length, ...].

import { ProtoReader, ProtoWriter, ProtobufError, WIRE_LEN, WIRE_VARINT, type FieldKey } from './protobuf.js';
import { RecordError } from './record.js';

export const REFERENCE_INDEX_FILE = 'PCR_index.pb';
/** MetadataRecord.version the reference writes when scan groups are ScanGroup messages. */
const REFERENCE_VERSION_PROTOBUF = 1;
/** MetadataRecord.version for "raw image bytes" records, whose per-image sizes are not in PCR_index.pb. */
const REFERENCE_VERSION_RAW = 2;

const EOI = new Uint8Array([0xff, 0xd9]);
const MAX_INT32 = 0x7fffffff;

// Field numbers.
const META_LABELS = 1;
const META_LEVELS = 2;
const META_VERSION = 3;
const GROUP_IMAGE_BYTES = 1;
const INDEX_RECORDS = 1;
const ENTRY_NAME = 1;
const ENTRY_OFFSETS = 2;

export interface ReferenceIndexEntry {
  /** Record file name, relative to the index (e.g. "PCR_0.pcr"). */
  name: string;
  /** Byte lengths of the record's messages: metadata, scan group 1, ..., scan group G. */
  offsets: number[];
}

/** Runs a parse step, turning protobuf errors into RecordErrors that name the file and the byte offset. */
function inRecord<T>(record: string, what: string, work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof ProtobufError) throw new RecordError(record, err.offset, `${what}: ${err.detail}`);
    throw err;
  }
}

// ---------------------------------------------------------------------------
// Index (PCR_index.pb)

/**
 * Parses PCR_index.pb. The reference converter appends a record's entry once per
 * scan group (a loop over its per-group sizes), so real indexes repeat every
 * entry G times: identical repeats are dropped here, entries that repeat a name
 * with different offsets are an error. Order of first appearance is kept.
 */
export function parseReferenceIndex(bytes: Uint8Array, source = REFERENCE_INDEX_FILE): ReferenceIndexEntry[] {
  return inRecord(source, 'DatasetOffsetsIndex', () => {
    const entries: ReferenceIndexEntry[] = [];
    const seen = new Map<string, { offsets: number[]; at: number }>();
    const r = new ProtoReader(bytes);
    while (!r.done()) {
      const key = r.key();
      if (key.field !== INDEX_RECORDS) {
        r.skip(key);
        continue;
      }
      r.expect(key, WIRE_LEN, 'records');
      const { start, end } = r.lengthDelimited();
      const entry = parseIndexEntry(bytes, start, end);
      const before = seen.get(entry.name);
      if (before) {
        if (before.offsets.length !== entry.offsets.length || before.offsets.some((v, g) => v !== entry.offsets[g])) {
          throw new ProtobufError(key.at, `record ${JSON.stringify(entry.name)} appears again with different offsets (first at byte ${before.at})`);
        }
        continue;
      }
      seen.set(entry.name, { offsets: entry.offsets, at: key.at });
      entries.push(entry);
    }
    return entries;
  });
}

function parseIndexEntry(bytes: Uint8Array, start: number, end: number): ReferenceIndexEntry {
  const r = new ProtoReader(bytes, start, end);
  let name: string | undefined;
  const offsets: number[] = [];
  while (!r.done()) {
    const key = r.key();
    if (key.field === ENTRY_NAME) {
      r.expect(key, WIRE_LEN, 'RecordOffsetsIndex.name');
      name = r.string();
    } else if (key.field === ENTRY_OFFSETS) {
      const from = offsets.length;
      r.repeatedVarint(key, (rr) => rr.int32(), offsets);
      for (let k = from; k < offsets.length; k++) {
        if (offsets[k]! < 0) throw new ProtobufError(key.at, `RecordOffsetsIndex.offsets has a negative length ${offsets[k]}`);
      }
    } else {
      r.skip(key);
    }
  }
  if (!name) throw new ProtobufError(start, 'RecordOffsetsIndex without a name');
  if (/[/\\]/.test(name) || name === '.' || name === '..') {
    throw new ProtobufError(start, `record name ${JSON.stringify(name)} is not a plain file name`);
  }
  if (offsets.length < 2)
    throw new ProtobufError(start, `record ${JSON.stringify(name)} has ${offsets.length} offsets; it needs the metadata length and at least one scan group`);
  return { name, offsets };
}

/** Serializes PCR_index.pb: one RecordOffsetsIndex per record (no repeats), offsets packed. */
export function writeReferenceIndex(records: readonly ReferenceIndexEntry[]): Uint8Array {
  const w = new ProtoWriter(64 * records.length + 16);
  for (const rec of records) {
    if (!rec.name || /[/\\]/.test(rec.name)) throw new Error(`record name ${JSON.stringify(rec.name)} is not a plain file name`);
    for (const v of rec.offsets) {
      if (!Number.isInteger(v) || v < 0 || v > MAX_INT32) throw new Error(`record ${rec.name}: offset ${v} does not fit the index's int32`);
    }
    const entry = new ProtoWriter(rec.name.length + 6 * rec.offsets.length + 8);
    entry.string(ENTRY_NAME, rec.name).packedInt32(ENTRY_OFFSETS, rec.offsets);
    w.bytes(INDEX_RECORDS, entry.finish());
  }
  return w.finish();
}

/** End of each message, as in bytelab's groupEnds: ends[0] = end of the metadata, ends[g] = end of scan group g. */
export function referenceGroupEnds(offsets: readonly number[]): number[] {
  const ends: number[] = [];
  let at = 0;
  for (const len of offsets) ends.push((at += len));
  return ends;
}

/** Bytes to read from the start of a record for every image at scan group g: offsets[0] + ... + offsets[g]. */
export function referencePrefixLength(offsets: readonly number[], group: number): number {
  if (!Number.isInteger(group) || group < 0 || group >= offsets.length) throw new RangeError(`scan group ${group} is not in 0..${offsets.length - 1}`);
  return referenceGroupEnds(offsets)[group]!;
}

// ---------------------------------------------------------------------------
// Record (*.pcr)

export interface ReferenceWriteOptions {
  /** MetadataRecord.version; null leaves the field out (as the first reference converter did). Default 1. */
  version?: number | null;
}

/**
 * Writes a reference-format record. scans[i][g] is image i's chunk for scan
 * group g + 1 (chunk 1 = SOI through the end of scan 1, later chunks = whatever
 * markers precede scan k, its SOS and entropy data; no EOI). Like the reference,
 * images with fewer scans are padded with empty chunks and progressive_levels
 * is the largest scan count. Labels are written unpacked, as the reference's
 * proto2 schema does.
 */
export function writeReferenceRecord(
  labels: ArrayLike<number>,
  scans: Uint8Array[][],
  opts: ReferenceWriteOptions = {},
): { bytes: Uint8Array; offsets: number[] } {
  const images = scans.length;
  if (images === 0) throw new Error('a record needs at least one image');
  if (labels.length !== images) throw new Error(`${labels.length} labels for ${images} images`);
  const levels = Math.max(...scans.map((s) => s.length));
  if (levels === 0) throw new Error('no image has any scan');
  const version = opts.version === undefined ? REFERENCE_VERSION_PROTOBUF : opts.version;

  const meta = new ProtoWriter(8 * images + 16);
  for (let i = 0; i < images; i++) {
    const label = labels[i]!;
    if (!Number.isInteger(label) || label < -0x80000000 || label > MAX_INT32) throw new Error(`label ${label} of image ${i} does not fit in int32`);
    meta.int32(META_LABELS, label);
  }
  meta.int32(META_LEVELS, levels);
  if (version !== null) meta.int32(META_VERSION, version);

  const messages = [meta.finish()];
  const empty = new Uint8Array(0);
  for (let g = 0; g < levels; g++) {
    let size = 0;
    for (let i = 0; i < images; i++) size += (scans[i]![g]?.byteLength ?? 0) + 6;
    const group = new ProtoWriter(size);
    for (let i = 0; i < images; i++) group.bytes(GROUP_IMAGE_BYTES, scans[i]![g] ?? empty);
    messages.push(group.finish());
  }

  const offsets = messages.map((m) => m.byteLength);
  const bytes = new Uint8Array(offsets.reduce((a, b) => a + b, 0));
  let at = 0;
  for (const m of messages) {
    bytes.set(m, at);
    at += m.byteLength;
  }
  return { bytes, offsets };
}

export interface ReferenceMetadata {
  labels: number[];
  progressiveLevels: number;
  /** MetadataRecord.version, undefined when the field is absent. */
  version: number | undefined;
}

function parseMetadata(bytes: Uint8Array, end: number): ReferenceMetadata {
  const r = new ProtoReader(bytes, 0, end);
  const labels: number[] = [];
  let progressiveLevels: number | undefined;
  let version: number | undefined;
  while (!r.done()) {
    const key: FieldKey = r.key();
    switch (key.field) {
      case META_LABELS:
        r.repeatedVarint(key, (rr) => rr.int32(), labels);
        break;
      case META_LEVELS:
        r.expect(key, WIRE_VARINT, 'progressive_levels');
        progressiveLevels = r.int32();
        break;
      case META_VERSION:
        r.expect(key, WIRE_VARINT, 'version');
        version = r.int32();
        break;
      default:
        r.skip(key);
    }
  }
  if (progressiveLevels === undefined) throw new ProtobufError(end, 'the required field progressive_levels (2) is missing');
  return { labels, progressiveLevels, version };
}

/**
 * A prefix of a reference record: the metadata and every scan group that lies
 * completely inside it. Build with readReferenceRecordPrefix.
 */
export class ReferenceRecordPrefix {
  readonly labels: number[];
  readonly progressiveLevels: number;
  readonly version: number | undefined;
  readonly imageCount: number;
  /** Highest scan group fully inside the prefix (0 = metadata only). */
  readonly completeGroups: number;
  /** groupEnds[0] = end of the metadata message, groupEnds[g] = end of scan group g (from the index). */
  readonly groupEnds: number[];
  /** chunkStart/chunkLength[(g - 1) * imageCount + i]: image i's chunk of group g, as a byte range of the prefix. */
  private readonly chunkStart: Float64Array;
  private readonly chunkLength: Float64Array;

  constructor(
    readonly bytes: Uint8Array,
    offsets: readonly number[],
    readonly record: string,
  ) {
    if (offsets.length < 2) throw new RecordError(record, 0, `the index gives ${offsets.length} offsets; a record needs metadata and at least one scan group`);
    this.groupEnds = referenceGroupEnds(offsets);
    const metaEnd = this.groupEnds[0]!;
    if (bytes.byteLength < metaEnd) {
      throw new RecordError(record, bytes.byteLength, `truncated inside the MetadataRecord, which ends at byte ${metaEnd}`);
    }
    const meta = inRecord(record, 'MetadataRecord', () => parseMetadata(bytes, metaEnd));
    this.labels = meta.labels;
    this.progressiveLevels = meta.progressiveLevels;
    this.version = meta.version;
    this.imageCount = meta.labels.length;
    const groups = offsets.length - 1;
    if (meta.version === REFERENCE_VERSION_RAW) {
      throw new RecordError(record, 0, 'version 2 record (raw scan bytes): the per-image chunk sizes it needs are not in PCR_index.pb');
    }
    if (meta.version !== undefined && meta.version !== REFERENCE_VERSION_PROTOBUF) {
      throw new RecordError(record, 0, `unknown MetadataRecord version ${meta.version}`);
    }
    if (meta.progressiveLevels !== groups) {
      throw new RecordError(record, 0, `MetadataRecord says ${meta.progressiveLevels} scan groups, the index gives ${groups}`);
    }
    if (this.imageCount === 0) throw new RecordError(record, 0, 'MetadataRecord has no labels, so the record holds no images');

    let complete = 0;
    while (complete < groups && this.groupEnds[complete + 1]! <= bytes.byteLength) complete++;
    this.completeGroups = complete;

    const n = this.imageCount;
    this.chunkStart = new Float64Array(n * complete);
    this.chunkLength = new Float64Array(n * complete);
    for (let g = 1; g <= complete; g++) {
      const start = this.groupEnds[g - 1]!;
      const end = this.groupEnds[g]!;
      inRecord(record, `ScanGroup ${g}`, () => {
        const r = new ProtoReader(bytes, start, end);
        let i = 0;
        while (!r.done()) {
          const key = r.key();
          if (key.field !== GROUP_IMAGE_BYTES) {
            r.skip(key);
            continue;
          }
          r.expect(key, WIRE_LEN, 'image_bytes');
          const value = r.lengthDelimited();
          if (i >= n) throw new ProtobufError(key.at, `more than ${n} image_bytes entries (the MetadataRecord has ${n} labels)`);
          this.chunkStart[(g - 1) * n + i] = value.start;
          this.chunkLength[(g - 1) * n + i] = value.end - value.start;
          i++;
        }
        if (i !== n) throw new ProtobufError(end, `${i} image_bytes entries, the MetadataRecord has ${n} labels`);
      });
    }
  }

  private check(i: number, group: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.imageCount) throw new RangeError(`image ${i} is not in 0..${this.imageCount - 1}`);
    if (!Number.isInteger(group) || group < 1 || group > this.completeGroups) {
      throw new RecordError(this.record, this.bytes.byteLength, `scan group ${group} is not complete in this prefix (have ${this.completeGroups})`);
    }
  }

  /** Byte offset of image i's chunk in scan group `group` (for messages). */
  chunkOffset(i: number, group: number): number {
    this.check(i, group);
    return this.chunkStart[(group - 1) * this.imageCount + i]!;
  }

  /** Image i's own chunk of scan group `group` (a view, no copy; empty for padding). */
  chunk(i: number, group: number): Uint8Array {
    this.check(i, group);
    const k = (group - 1) * this.imageCount + i;
    const start = this.chunkStart[k]!;
    return this.bytes.subarray(start, start + this.chunkLength[k]!);
  }

  /**
   * Image i at scan group `group`: its chunks 1..group, then EOI unless the
   * bytes already end with FF D9 (the reference reader's rule).
   */
  image(i: number, group: number): Uint8Array {
    this.check(i, group);
    const n = this.imageCount;
    let size = 0;
    for (let g = 0; g < group; g++) size += this.chunkLength[g * n + i]!;
    const endsWithEoi = size >= 2 && this.lastTwoAreEoi(i, group);
    const jpeg = new Uint8Array(size + (endsWithEoi ? 0 : EOI.byteLength));
    let at = 0;
    for (let g = 0; g < group; g++) {
      const start = this.chunkStart[g * n + i]!;
      const len = this.chunkLength[g * n + i]!;
      jpeg.set(this.bytes.subarray(start, start + len), at);
      at += len;
    }
    if (!endsWithEoi) jpeg.set(EOI, at);
    return jpeg;
  }

  /** Same as image(i, group); the name the lab's brief uses. */
  images(i: number, group: number): Uint8Array {
    return this.image(i, group);
  }

  private lastTwoAreEoi(i: number, group: number): boolean {
    // The last two bytes of chunks 1..group, which may straddle chunks (or skip empty ones).
    const tail: number[] = [];
    for (let g = group - 1; g >= 0 && tail.length < 2; g--) {
      const k = g * this.imageCount + i;
      const start = this.chunkStart[k]!;
      for (let p = start + this.chunkLength[k]! - 1; p >= start && tail.length < 2; p--) tail.push(this.bytes[p]!);
    }
    return tail[0] === 0xd9 && tail[1] === 0xff;
  }
}

/**
 * Reads a record from a prefix of its file: at least offsets[0] bytes (the
 * metadata), and usually referencePrefixLength(offsets, g) bytes for scan group g.
 * `offsets` is the record's entry from PCR_index.pb; `name` goes into errors.
 */
export function readReferenceRecordPrefix(bytes: Uint8Array, offsets: readonly number[], name: string): ReferenceRecordPrefix {
  return new ReferenceRecordPrefix(bytes, offsets, name);
}

// ---------------------------------------------------------------------------
// Splitting a progressive JPEG into chunks the way the reference does

/**
 * Cuts a JPEG into one chunk per scan, at the same places as the reference's
 * scan splitter (jsk): chunk 1 runs from SOI to the end of scan 1's entropy
 * data, chunk k from there to the end of scan k (so it holds any DHT or other
 * segments before scan k's SOS). The EOI marker and anything after it are
 * dropped. Throws a RecordError naming `name` and the byte offset for input
 * that is not a complete JPEG.
 */
export function splitJpegScans(jpeg: Uint8Array, name = 'jpeg'): Uint8Array[] {
  const fail = (at: number, detail: string): never => {
    throw new RecordError(name, at, detail);
  };
  const n = jpeg.byteLength;
  if (n < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) fail(0, 'not a JPEG (no SOI marker)');
  const chunks: Uint8Array[] = [];
  let chunkStart = 0;
  let p = 2;
  for (;;) {
    // Next marker: 0xFF, optional fill 0xFFs, then the code.
    if (p >= n) fail(p, 'truncated: no EOI marker');
    if (jpeg[p] !== 0xff) fail(p, `expected a marker, found 0x${jpeg[p]!.toString(16)}`);
    const markerAt = p;
    while (p < n && jpeg[p] === 0xff) p++;
    if (p >= n) fail(markerAt, 'truncated marker');
    const code = jpeg[p++]!;
    if (code === 0xd9) break; // EOI
    if (code === 0x01 || (code >= 0xd0 && code <= 0xd7)) continue; // no length field
    if (p + 2 > n) fail(markerAt, 'truncated marker segment');
    const length = (jpeg[p]! << 8) | jpeg[p + 1]!;
    if (length < 2 || p + length > n) fail(markerAt, `marker 0x${code.toString(16)} segment of ${length} bytes runs past the end of the file`);
    p += length;
    if (code !== 0xda) continue;
    // Entropy-coded data: ends at the first marker that is neither a stuffed
    // 0xFF00 nor a restart marker.
    for (;;) {
      if (p + 1 >= n) fail(p, 'truncated inside the entropy-coded data of a scan');
      if (jpeg[p] !== 0xff) {
        p++;
        continue;
      }
      let q = p + 1;
      while (q < n && jpeg[q] === 0xff) q++;
      if (q >= n) fail(p, 'truncated inside the entropy-coded data of a scan');
      const c = jpeg[q]!;
      if (c === 0x00 || (c >= 0xd0 && c <= 0xd7)) {
        p = q + 1;
        continue;
      }
      p = q - 1; // the 0xFF right before the code: fill bytes stay with the scan, as in jsk
      break;
    }
    chunks.push(jpeg.subarray(chunkStart, p));
    chunkStart = p;
  }
  if (chunks.length === 0) fail(0, 'no scan before EOI');
  return chunks;
}
