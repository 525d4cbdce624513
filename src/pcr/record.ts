// One PCR record file: a metadata block, then scan group 1 of every image,
// then scan group 2 of every image, and so on. Byte layout: docs/pcr.md.

export const RECORD_MAGIC = 0x31524350; // 'PCR1' read as little-endian u32
const FIXED_HEADER_BYTES = 16;
const EOI = new Uint8Array([0xff, 0xd9]);

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
}

export function metadataBytes(images: number, groups: number): number {
  return FIXED_HEADER_BYTES + 2 * images + 4 * images * groups;
}

/**
 * Writes a record. scans[i][g] is image i's chunk for scan group g + 1: chunk 0
 * starts with SOI and all headers, later chunks hold their DHT segments and one scan.
 */
export function writeRecord(labels: ArrayLike<number>, scans: Uint8Array[][]): { bytes: Uint8Array; groupEnds: number[] } {
  const images = scans.length;
  if (images === 0) throw new Error('a record needs at least one image');
  if (labels.length !== images) throw new Error(`${labels.length} labels for ${images} images`);
  const groups = scans[0]!.length;
  scans.forEach((s, i) => {
    if (s.length !== groups) throw new Error(`image ${i} has ${s.length} scans, image 0 has ${groups}: scan groups would not line up`);
  });

  const meta = metadataBytes(images, groups);
  let total = meta;
  for (const s of scans) for (const chunk of s) total += chunk.byteLength;
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, RECORD_MAGIC, true);
  view.setUint32(4, meta, true);
  view.setUint32(8, images, true);
  view.setUint16(12, groups, true);
  view.setUint16(14, 0, true); // reserved flags
  for (let i = 0; i < images; i++) {
    const label = labels[i]!;
    if (!(label >= 0 && label < 65536)) throw new Error(`label ${label} of image ${i} does not fit in u16`);
    view.setUint16(FIXED_HEADER_BYTES + 2 * i, label, true);
  }
  const lengthsAt = FIXED_HEADER_BYTES + 2 * images;
  const groupEnds = [meta];
  let at = meta;
  for (let g = 0; g < groups; g++) {
    for (let i = 0; i < images; i++) {
      const chunk = scans[i]![g]!;
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
  if (images === 0 || groups === 0 || meta !== metadataBytes(images, groups)) {
    throw new RecordError(record, 4, `inconsistent header: ${images} images, ${groups} groups, metadata of ${meta} bytes`);
  }
  if (bytes.byteLength < meta) {
    throw new RecordError(record, bytes.byteLength, `truncated inside the metadata block, which ends at byte ${meta}`);
  }
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
  return { images, groups, labels, chunkLengths, groupEnds };
}

/** The highest scan group whose bytes are all inside a prefix of `available` bytes (0 if none). */
export function completeGroups(header: RecordHeader, available: number): number {
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

  /** Byte offset of image i's chunk in scan group `group` (for error messages). */
  chunkOffset(i: number, group: number): number {
    return this.offsets[(group - 1) * this.header.images + i]!;
  }

  /** Image i at scan group `group`: its chunks of groups 1..group, closed with EOI. */
  image(i: number, group: number): Uint8Array {
    if (group < 1 || group > this.completeGroups) {
      throw new RecordError(this.record, this.bytes.byteLength, `scan group ${group} is not complete in this prefix (have ${this.completeGroups})`);
    }
    const { images, chunkLengths } = this.header;
    let size = EOI.byteLength;
    for (let g = 0; g < group; g++) size += chunkLengths[g * images + i]!;
    const jpeg = new Uint8Array(size);
    let at = 0;
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
