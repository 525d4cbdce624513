// One PCR record file: a metadata block, then scan group 1 of every image,
// then scan group 2 of every image, and so on. Byte layout: docs/pcr.md.

const RECORD_MAGIC = 0x31524350; // 'PCR1' read as little-endian u32
const FIXED_HEADER_BYTES = 16;
const EOI = new Uint8Array([0xff, 0xd9]);
/** Flag: the JPEG header segments every image shares are stored once, in the metadata. */
const FLAG_SHARED_HEADER = 1;

/** Raised for a record that cannot be read; names the record and the byte offset. */
export class RecordError extends Error {
  override name = 'RecordError';
  constructor(
    readonly record: string,
    readonly offset: number,
    detail: string,
  ) {
    super(`record ${record}, byte ${offset}: ${detail}`);
  }
}

export interface RecordHeader {
  images: number;
  groups: number;
  labels: Uint16Array;
  /** chunkLengths[(g - 1) * images + i] = bytes of image i in scan group g. */
  chunkLengths: Uint32Array;
  /** groupEnds[0] = end of metadata, groupEnds[g] = end of scan group g. */
  groupEnds: number[];
  /**
   * JPEG segments that start every image's chunk 1 (SOI, APP0, DQT, SOF ... up to
   * the first DHT or SOS) when they are the same for all images: stored once and
   * put back in front of each image's chunk 1. Empty when not shared.
   */
  sharedHeader: Uint8Array;
}

function metadataBytes(images: number, groups: number, sharedHeader = 0): number {
  return FIXED_HEADER_BYTES + 2 * images + 4 * images * groups + (sharedHeader ? 4 + sharedHeader : 0);
}

/** Ends of the leading segments of a chunk 1 that may be shared: SOI and each segment before the first DHT or SOS. */
function headerSegmentEnds(chunk: Uint8Array): number[] {
  if (chunk[0] !== 0xff || chunk[1] !== 0xd8) return [];
  const ends = [2];
  let at = 2;
  while (at + 4 <= chunk.length && chunk[at] === 0xff) {
    const marker = chunk[at + 1]!;
    if (marker === 0xc4 || marker === 0xda) break;
    at += 2 + ((chunk[at + 2]! << 8) | chunk[at + 3]!);
    if (at > chunk.length) break;
    ends.push(at);
  }
  return ends;
}

/**
 * The longest run of whole leading header segments that every image's chunk 1
 * has byte for byte (all of SOI..SOF for same-size images at one quality; SOI,
 * APP0 and DQT when sizes differ), or nothing.
 */
function commonHeader(scans: Uint8Array[][]): Uint8Array {
  const first = scans[0]![0]!;
  let shared = 0;
  for (const end of headerSegmentEnds(first)) {
    const same = scans.every((s) => {
      const chunk = s[0]!;
      if (chunk.length < end || (end < chunk.length && chunk[end] !== 0xff)) return false;
      for (let k = shared; k < end; k++) if (chunk[k] !== first[k]) return false;
      return true;
    });
    if (!same) break;
    shared = end;
  }
  return first.subarray(0, shared);
}

/**
 * Writes a record. scans[i][g] is image i's chunk for scan group g + 1: chunk 0
 * starts with SOI and all headers, later chunks hold their DHT segments and one
 * scan. Header segments common to all images are stored once (shareHeader).
 */
export function writeRecord(labels: ArrayLike<number>, scans: Uint8Array[][], shareHeader = true): { bytes: Uint8Array; groupEnds: number[] } {
  const images = scans.length;
  if (images === 0) throw new Error('a record needs at least one image');
  if (labels.length !== images) throw new Error(`${labels.length} labels for ${images} images`);
  const groups = scans[0]!.length;
  scans.forEach((s, i) => {
    if (s.length !== groups) throw new Error(`image ${i} has ${s.length} scans, image 0 has ${groups}: scan groups would not line up`);
  });

  const shared = shareHeader ? commonHeader(scans) : new Uint8Array(0);
  const stored = (g: number, chunk: Uint8Array) => (g === 0 ? chunk.subarray(shared.byteLength) : chunk);
  const meta = metadataBytes(images, groups, shared.byteLength);
  let total = meta;
  for (const s of scans) s.forEach((chunk, g) => (total += stored(g, chunk).byteLength));
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, RECORD_MAGIC, true);
  view.setUint32(4, meta, true);
  view.setUint32(8, images, true);
  view.setUint16(12, groups, true);
  view.setUint16(14, shared.byteLength ? FLAG_SHARED_HEADER : 0, true);
  for (let i = 0; i < images; i++) {
    const label = labels[i]!;
    if (!(label >= 0 && label < 65536)) throw new Error(`label ${label} of image ${i} does not fit in u16`);
    view.setUint16(FIXED_HEADER_BYTES + 2 * i, label, true);
  }
  const lengthsAt = FIXED_HEADER_BYTES + 2 * images;
  const groupEnds = [meta];
  let at = meta;
  if (shared.byteLength) {
    const at = lengthsAt + 4 * images * groups;
    view.setUint32(at, shared.byteLength, true);
    bytes.set(shared, at + 4);
  }
  for (let g = 0; g < groups; g++) {
    for (let i = 0; i < images; i++) {
      const chunk = stored(g, scans[i]![g]!);
      view.setUint32(lengthsAt + 4 * (g * images + i), chunk.byteLength, true);
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    groupEnds.push(at);
  }
  return { bytes, groupEnds };
}

/** Parses the metadata block from the start of a record (a prefix of at least groupEnds[0] bytes). */
export function readRecordHeader(bytes: Uint8Array, record: string): RecordHeader {
  if (bytes.byteLength < FIXED_HEADER_BYTES) {
    throw new RecordError(record, bytes.byteLength, `only ${bytes.byteLength} bytes, the fixed header needs ${FIXED_HEADER_BYTES}`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, true);
  if (magic !== RECORD_MAGIC) throw new RecordError(record, 0, `bad magic 0x${magic.toString(16)}, not a PCR record`);
  const meta = view.getUint32(4, true);
  const images = view.getUint32(8, true);
  const groups = view.getUint16(12, true);
  const flags = view.getUint16(14, true);
  if (flags & ~FLAG_SHARED_HEADER) throw new RecordError(record, 14, `unknown flags 0x${flags.toString(16)}`);
  const sharedAt = FIXED_HEADER_BYTES + 2 * images + 4 * images * groups;
  // The shared header's length sits right after the chunk lengths; the metadata size must agree with it.
  const sharedLength = flags & FLAG_SHARED_HEADER ? meta - sharedAt - 4 : 0;
  if (images === 0 || groups === 0 || sharedLength < 0 || meta !== metadataBytes(images, groups, sharedLength)) {
    throw new RecordError(record, 4, `inconsistent header: ${images} images, ${groups} groups, metadata of ${meta} bytes`);
  }
  if (bytes.byteLength < meta) {
    throw new RecordError(record, bytes.byteLength, `truncated inside the metadata block, which ends at byte ${meta}`);
  }
  if (sharedLength && view.getUint32(sharedAt, true) !== sharedLength) {
    throw new RecordError(record, sharedAt, `shared header length ${view.getUint32(sharedAt, true)} disagrees with the metadata size`);
  }
  const sharedHeader = bytes.slice(sharedAt + 4, sharedAt + 4 + sharedLength);
  const labels = new Uint16Array(images);
  for (let i = 0; i < images; i++) labels[i] = view.getUint16(FIXED_HEADER_BYTES + 2 * i, true);
  const chunkLengths = new Uint32Array(images * groups);
  const lengthsAt = FIXED_HEADER_BYTES + 2 * images;
  const groupEnds = [meta];
  let at = meta;
  for (let k = 0; k < images * groups; k++) {
    chunkLengths[k] = view.getUint32(lengthsAt + 4 * k, true);
    at += chunkLengths[k]!;
    if ((k + 1) % images === 0) groupEnds.push(at);
  }
  return { images, groups, labels, chunkLengths, groupEnds, sharedHeader };
}

/** The highest scan group whose bytes are all inside a prefix of `available` bytes (0 if none). */
function completeGroups(header: RecordHeader, available: number): number {
  let g = 0;
  while (g < header.groups && header.groupEnds[g + 1]! <= available) g++;
  return g;
}

/**
 * A fetched prefix of a record: parses the metadata once, knows which scan
 * groups are complete, and assembles any image at any complete group.
 */
export class RecordPrefix {
  readonly header: RecordHeader;
  /** Highest scan group fully inside the prefix. */
  readonly completeGroups: number;
  private readonly offsets: Uint32Array;

  constructor(
    readonly bytes: Uint8Array,
    readonly record: string,
  ) {
    this.header = readRecordHeader(bytes, record);
    this.completeGroups = completeGroups(this.header, bytes.byteLength);
    this.offsets = chunkOffsets(this.header);
  }

  // The header's counts under ReferenceRecordPrefix's names, so one image pipeline reads both formats.
  get imageCount(): number {
    return this.header.images;
  }
  get labels(): Uint16Array {
    return this.header.labels;
  }
  get groupEnds(): number[] {
    return this.header.groupEnds;
  }

  /** Image i's whole chunk for scan group `group`, as the encoder made it (the shared header put back into chunk 1). */
  chunk(i: number, group: number): Uint8Array {
    const { images, chunkLengths, sharedHeader } = this.header;
    const at = this.chunkOffset(i, group);
    const stored = this.bytes.subarray(at, at + chunkLengths[(group - 1) * images + i]!);
    if (group > 1 || sharedHeader.byteLength === 0) return stored;
    const whole = new Uint8Array(sharedHeader.byteLength + stored.byteLength);
    whole.set(sharedHeader);
    whole.set(stored, sharedHeader.byteLength);
    return whole;
  }

  /** Byte offset of image i's chunk in scan group `group` (for error messages). */
  chunkOffset(i: number, group: number): number {
    return this.offsets[(group - 1) * this.header.images + i]!;
  }

  /** Image i at scan group `group`: its chunks of groups 1..group, closed with EOI. */
  image(i: number, group: number): Uint8Array {
    if (group < 1 || group > this.completeGroups) {
      throw new RecordError(this.record, this.bytes.byteLength, `scan group ${group} is not complete in this prefix (have ${this.completeGroups})`);
    }
    const { images, chunkLengths, sharedHeader } = this.header;
    let size = sharedHeader.byteLength + EOI.byteLength;
    for (let g = 0; g < group; g++) size += chunkLengths[g * images + i]!;
    const jpeg = new Uint8Array(size);
    jpeg.set(sharedHeader);
    let at = sharedHeader.byteLength;
    for (let g = 0; g < group; g++) {
      const start = this.offsets[g * images + i]!;
      const len = chunkLengths[g * images + i]!;
      jpeg.set(this.bytes.subarray(start, start + len), at);
      at += len;
    }
    jpeg.set(EOI, at);
    return jpeg;
  }
}

/** Byte offset of every image's chunk in every group (same indexing as chunkLengths). */
function chunkOffsets(header: RecordHeader): Uint32Array {
  const { images, groups, chunkLengths, groupEnds } = header;
  const offsets = new Uint32Array(images * groups);
  for (let g = 0; g < groups; g++) {
    let at = groupEnds[g]!;
    for (let i = 0; i < images; i++) {
      offsets[g * images + i] = at;
      at += chunkLengths[g * images + i]!;
    }
  }
  return offsets;
}
