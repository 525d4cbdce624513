// TOC datasets on disk: record files of labelled TOC mini-batches ("frames") and
// the JSON manifest that lists them. Spec: docs/toc.md, "Dataset files".
// No DOM and no Node APIs: the browser worker reads these files.
//
// Frame (little-endian), at manifest offset `offset` of its record file:
//   0  'TOCB'   4  u32 rows   8  u32 labelBytes (= 2 * rows)   12  u32 tocBytes
//   16 labels: u16 x rows, then zero padding to a multiple of 4 bytes (from the frame start)
//   .. tocBytes of TOC1 (encodeToc, float32 values)
// Frames follow each other without gaps; a record file ends after its last frame.

import { ManifestError } from '../shared/errors.js';
import { encodeSparse, MINI_BATCH_ROWS } from './encode.js';
import { decodeToc, encodeToc, TOC_HEADER_BYTES, TOC_MAX_ROWS } from './physical.js';
import { TocFormatError } from './types.js';
import type { TocLogical } from './types.js';

export const TOC_DATASET_FORMAT = 'bytelab-toc';
export const TOC_DATASET_VERSION = 1;
const TOC_FRAME_MAGIC = 'TOCB';
export const TOC_FRAME_HEADER_BYTES = 16;
export const DEFAULT_BATCHES_PER_RECORD = 40;
export { MINI_BATCH_ROWS };

/** Where one frame sits in its record file. */
export interface TocBatchEntry {
  /** Byte offset of the frame's magic in the record file. */
  offset: number;
  /** Frame length: 16 + labelBytes + padding + tocBytes. */
  bytes: number;
  rows: number;
}

export interface TocRecordEntry {
  /** File name, relative to the manifest. */
  file: string;
  batches: TocBatchEntry[];
}

export interface TocSplitEntry {
  records: TocRecordEntry[];
}

export type TocSplitName = 'train' | 'test';

export interface TocManifest {
  format: typeof TOC_DATASET_FORMAT;
  version: typeof TOC_DATASET_VERSION;
  name: string;
  description?: string;
  attribution?: string;
  classes: string[];
  columns: number;
  featureNames: string[];
  rows: { train: number; test?: number };
  splits: { train: TocSplitEntry; test?: TocSplitEntry };
}

/** A labelled mini-batch: labels[r] is the class of row r of `logical`. */
export interface TocFrame {
  labels: Uint16Array;
  logical: TocLogical;
}

/** What a reader knows before it reads a frame, from the manifest. */
export interface TocFrameExpectation {
  /** Number of classes: every label must be below it. */
  classes: number;
  /** Columns of the dataset; checked against the TOC header when given. */
  columns?: number;
}

const labelPadding = (labelBytes: number): number => (4 - (labelBytes % 4)) % 4;

/** Name of record `index` of a split: train-00000.tocr, test-00003.tocr, ... */
export function tocRecordName(split: string, index: number): string {
  return `${split}-${String(index).padStart(5, '0')}.tocr`;
}

/**
 * Serialises labelled batches into one record file. TOC values are stored as
 * float32 (encodeToc throws RangeError for a value that float32 cannot hold exactly).
 */
export function writeTocRecord(batches: readonly TocFrame[]): { bytes: Uint8Array; entries: TocBatchEntry[] } {
  const parts: Array<{ labels: Uint16Array; toc: Uint8Array; rows: number }> = [];
  const entries: TocBatchEntry[] = [];
  let offset = 0;
  for (const [i, { labels, logical }] of batches.entries()) {
    if (labels.length !== logical.rows) throw new RangeError(`batch ${i}: ${labels.length} labels for ${logical.rows} rows`);
    if (logical.rows < 1) throw new RangeError(`batch ${i}: a frame needs at least one row`);
    const toc = encodeToc(logical, { valueType: 'f32' });
    const labelBytes = 2 * logical.rows;
    const bytes = TOC_FRAME_HEADER_BYTES + labelBytes + labelPadding(labelBytes) + toc.length;
    parts.push({ labels, toc, rows: logical.rows });
    entries.push({ offset, bytes, rows: logical.rows });
    offset += bytes;
  }
  const out = new Uint8Array(offset);
  const view = new DataView(out.buffer);
  parts.forEach(({ labels, toc, rows }, i) => {
    const at = entries[i]!.offset;
    for (let k = 0; k < 4; k++) out[at + k] = TOC_FRAME_MAGIC.charCodeAt(k);
    view.setUint32(at + 4, rows, true);
    view.setUint32(at + 8, 2 * rows, true);
    view.setUint32(at + 12, toc.length, true);
    for (let r = 0; r < rows; r++) view.setUint16(at + TOC_FRAME_HEADER_BYTES + 2 * r, labels[r]!, true);
    out.set(toc, at + entries[i]!.bytes - toc.length);
  });
  return { bytes: out, entries };
}

/**
 * Reads and validates the frame at `entry` of a record file (`record` holds the
 * file from its first byte). Throws TocFormatError whose message names the
 * record and the batch index and whose offset is the absolute byte offset in
 * the record file: bad magic, a frame that runs past the record, sizes that do
 * not add up to entry.bytes, rows that disagree with the manifest or the TOC
 * header, non-zero padding, a label >= expect.classes, any decodeToc error
 * (its offset shifted to the file), float64 values, or a column count other than expect.columns.
 */
export function readTocFrame(record: Uint8Array, entry: TocBatchEntry, recordName: string, batchIndex: number, expect: TocFrameExpectation): TocFrame {
  const fail = (problem: string, offset: number): never => {
    throw new TocFormatError(`${recordName} batch ${batchIndex}: ${problem}`, offset);
  };
  const start = entry.offset;
  if (!Number.isInteger(start) || start < 0) fail(`bad frame offset ${start}`, 0);
  if (start + TOC_FRAME_HEADER_BYTES > record.length) {
    fail(`truncated frame header: needs bytes ${start}..${start + TOC_FRAME_HEADER_BYTES}, record has ${record.length}`, record.length);
  }
  for (let k = 0; k < 4; k++) {
    if (record[start + k] !== TOC_FRAME_MAGIC.charCodeAt(k)) fail(`bad magic, expected '${TOC_FRAME_MAGIC}'`, start + k);
  }
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  const rows = view.getUint32(start + 4, true);
  const labelBytes = view.getUint32(start + 8, true);
  const tocBytes = view.getUint32(start + 12, true);
  if (rows < 1 || rows > TOC_MAX_ROWS) fail(`${rows} rows, expected 1..${TOC_MAX_ROWS}`, start + 4);
  if (rows !== entry.rows) fail(`frame has ${rows} rows, the manifest says ${entry.rows}`, start + 4);
  if (labelBytes !== 2 * rows) fail(`label bytes ${labelBytes}, expected 2 x ${rows} rows = ${2 * rows}`, start + 8);
  const labelsAt = start + TOC_FRAME_HEADER_BYTES;
  const tocAt = labelsAt + labelBytes + labelPadding(labelBytes);
  const end = tocAt + tocBytes;
  if (end - start !== entry.bytes) fail(`frame is ${end - start} bytes (TOC ${tocBytes}), the manifest says ${entry.bytes}`, start + 12);
  if (end > record.length) fail(`truncated frame: needs bytes ${start}..${end}, record has ${record.length}`, record.length);
  for (let k = labelsAt + labelBytes; k < tocAt; k++) if (record[k] !== 0) fail('padding after the labels is not zero', k);
  const labels = new Uint16Array(rows);
  for (let r = 0; r < rows; r++) {
    const label = view.getUint16(labelsAt + 2 * r, true);
    if (label >= expect.classes) fail(`label ${label} of row ${r} is not below ${expect.classes} classes`, labelsAt + 2 * r);
    labels[r] = label;
  }
  let logical: TocLogical;
  try {
    logical = decodeToc(record.subarray(tocAt, end));
  } catch (err) {
    if (!(err instanceof TocFormatError)) throw err;
    const problem = err.message.replace(/ \(at byte -?\d+\)$/, '');
    return fail(`TOC: ${problem}`, tocAt + Math.max(err.offset, 0));
  }
  if (logical.rows !== rows) fail(`TOC header has ${logical.rows} rows, the frame has ${rows}`, tocAt + 8);
  if (logical.valueType !== 'f32') fail('TOC values are float64, dataset frames store float32', tocAt + 6);
  if (expect.columns !== undefined && logical.cols !== expect.columns) {
    fail(`TOC has ${logical.cols} columns, the dataset has ${expect.columns}`, tocAt + 12);
  }
  return { labels, logical };
}

/** Reads every frame of a whole record file, and checks that nothing follows the last one. */
export function readTocRecord(record: Uint8Array, entry: TocRecordEntry, expect: TocFrameExpectation): TocFrame[] {
  const frames = entry.batches.map((b, i) => readTocFrame(record, b, entry.file, i, expect));
  const end = tocRecordBytes(entry);
  if (record.length !== end) {
    throw new TocFormatError(
      `${entry.file}: record has ${record.length} bytes, its ${entry.batches.length} frames end at ${end}`,
      Math.min(end, record.length),
    );
  }
  return frames;
}

/** Length of a record file: where its last frame ends. */
export function tocRecordBytes(entry: TocRecordEntry): number {
  const last = entry.batches[entry.batches.length - 1];
  return last ? last.offset + last.bytes : 0;
}

export function tocSplitRows(split: TocSplitEntry | undefined): number {
  return (split?.records ?? []).reduce((n, r) => n + r.batches.reduce((m, b) => m + b.rows, 0), 0);
}

/** Checks the shape of a parsed manifest; throws a ManifestError naming the first bad field. */
export function validateTocManifest(json: unknown, where = 'manifest'): TocManifest {
  const fail = (what: string): never => {
    throw new ManifestError(`${where}: ${what}`);
  };
  if (typeof json !== 'object' || json === null || Array.isArray(json)) fail('not a JSON object');
  const m = json as Partial<TocManifest>;
  if (m.format !== TOC_DATASET_FORMAT) fail(`format is ${JSON.stringify(m.format)}, expected "${TOC_DATASET_FORMAT}"`);
  if (m.version !== TOC_DATASET_VERSION) fail(`unsupported version ${String(m.version)}`);
  if (typeof m.name !== 'string' || m.name === '') fail('name must be a non-empty string');
  for (const key of ['description', 'attribution'] as const) {
    if (m[key] !== undefined && typeof m[key] !== 'string') fail(`${key} must be a string`);
  }
  if (!Array.isArray(m.classes) || m.classes.length === 0 || m.classes.length > 0x10000) fail('classes must be an array of 1..65536 names');
  if (!m.classes!.every((c) => typeof c === 'string')) fail('classes must be strings');
  if (!Number.isInteger(m.columns) || m.columns! < 1) fail('columns must be a positive integer');
  if (!Array.isArray(m.featureNames) || m.featureNames.length !== m.columns) fail(`featureNames must have columns = ${m.columns} entries`);
  if (!m.featureNames!.every((c) => typeof c === 'string')) fail('featureNames must be strings');
  if (typeof m.rows !== 'object' || m.rows === null) fail('rows missing');
  if (typeof m.splits !== 'object' || m.splits === null) fail('splits missing');
  if (!m.splits!.train) fail('splits.train missing');
  for (const name of Object.keys(m.splits!)) if (name !== 'train' && name !== 'test') fail(`unknown split "${name}" (train, test)`);
  for (const name of Object.keys(m.rows!)) if (!(name in m.splits!)) fail(`rows.${name} given for a split that does not exist`);
  const files = new Set<string>();
  for (const [name, split] of Object.entries(m.splits!) as Array<[TocSplitName, TocSplitEntry]>) {
    if (typeof split !== 'object' || split === null || !Array.isArray(split.records)) fail(`split ${name}: records must be an array`);
    split.records.forEach((r, i) => {
      const at = `split ${name}, record ${i}`;
      if (typeof r !== 'object' || r === null) fail(`${at}: not an object`);
      if (typeof r.file !== 'string' || r.file === '' || r.file.includes('..') || /[/\\]/.test(r.file)) fail(`${at}: bad file name ${JSON.stringify(r.file)}`);
      if (files.has(r.file)) fail(`${at}: file ${r.file} listed twice`);
      files.add(r.file);
      if (!Array.isArray(r.batches) || r.batches.length === 0) fail(`${at} (${r.file}): batches must be a non-empty array`);
      let next = 0;
      r.batches.forEach((b, k) => {
        const bat = `${at} (${r.file}), batch ${k}`;
        if (typeof b !== 'object' || b === null) fail(`${bat}: not an object`);
        if (!Number.isInteger(b.rows) || b.rows < 1 || b.rows > TOC_MAX_ROWS) fail(`${bat}: rows must be 1..${TOC_MAX_ROWS}`);
        if (b.offset !== next) fail(`${bat}: offset ${b.offset}, expected ${next} (frames follow each other)`);
        const least = TOC_FRAME_HEADER_BYTES + 2 * b.rows + TOC_HEADER_BYTES;
        if (!Number.isInteger(b.bytes) || b.bytes < least) fail(`${bat}: bytes must be an integer >= ${least}`);
        next = b.offset + b.bytes;
      });
    });
    const rows = (m.rows as Record<string, unknown>)[name];
    if (rows !== tocSplitRows(split)) fail(`rows.${name} is ${String(rows)}, the batches of split ${name} hold ${tocSplitRows(split)}`);
  }
  return m as TocManifest;
}

// ------------------------------------------------------------------ building

export interface TocSplitWriterOptions {
  split: TocSplitName;
  columns: number;
  classes: number;
  batchRows?: number;
  batchesPerRecord?: number;
  /** Receives each finished record file. */
  onRecord(file: string, bytes: Uint8Array): void;
}

/**
 * Cuts a stream of sparse rows into mini-batches of `batchRows` rows, encodes each
 * (Algorithm 1, float32 values) as soon as it is full, and hands a record file to
 * onRecord every `batchesPerRecord` batches. Holds at most one record's batches.
 */
export class TocSplitWriter {
  readonly records: TocRecordEntry[] = [];
  rows = 0;
  private readonly batchRows: number;
  private readonly batchesPerRecord: number;
  private readonly rowPtr: Uint32Array;
  private readonly labels: Uint16Array;
  private colIndex = new Uint32Array(1024);
  private values = new Float64Array(1024);
  private batchRow = 0;
  private nnz = 0;
  private pending: TocFrame[] = [];

  constructor(private readonly options: TocSplitWriterOptions) {
    this.batchRows = options.batchRows ?? MINI_BATCH_ROWS;
    this.batchesPerRecord = options.batchesPerRecord ?? DEFAULT_BATCHES_PER_RECORD;
    if (!Number.isInteger(this.batchRows) || this.batchRows < 1 || this.batchRows > TOC_MAX_ROWS) throw new RangeError(`bad batch size ${this.batchRows}`);
    if (!Number.isInteger(this.batchesPerRecord) || this.batchesPerRecord < 1) throw new RangeError(`bad batches per record ${this.batchesPerRecord}`);
    this.rowPtr = new Uint32Array(this.batchRows + 1);
    this.labels = new Uint16Array(this.batchRows);
  }

  /**
   * Adds a row: `count` pairs with strictly increasing columns < columns and
   * float32-exact values (zeros are skipped).
   */
  addRow(cols: ArrayLike<number>, vals: ArrayLike<number>, count: number, label: number): void {
    if (!Number.isInteger(label) || label < 0 || label >= this.options.classes) throw new RangeError(`label ${label} outside [0, ${this.options.classes})`);
    if (this.nnz + count > this.colIndex.length) {
      const size = Math.max(2 * this.colIndex.length, this.nnz + count);
      const c = new Uint32Array(size);
      c.set(this.colIndex.subarray(0, this.nnz));
      const v = new Float64Array(size);
      v.set(this.values.subarray(0, this.nnz));
      this.colIndex = c;
      this.values = v;
    }
    for (let k = 0; k < count; k++) {
      const v = vals[k]!;
      if (v === 0) continue;
      this.colIndex[this.nnz] = cols[k]!;
      this.values[this.nnz] = v;
      this.nnz++;
    }
    this.labels[this.batchRow] = label;
    this.rowPtr[++this.batchRow] = this.nnz;
    this.rows++;
    if (this.batchRow === this.batchRows) this.endBatch();
  }

  /** Encodes the last partial batch, writes the last record, and returns the split's entry. */
  finish(): TocSplitEntry {
    if (this.batchRow > 0) this.endBatch();
    if (this.pending.length) this.endRecord();
    return { records: this.records };
  }

  private endBatch(): void {
    const rows = this.batchRow;
    const logical = encodeSparse({
      rows,
      cols: this.options.columns,
      valueType: 'f32',
      rowPtr: this.rowPtr.slice(0, rows + 1),
      colIndex: this.colIndex.slice(0, this.nnz),
      values: this.values.slice(0, this.nnz),
    });
    this.pending.push({ labels: this.labels.slice(0, rows), logical });
    this.batchRow = 0;
    this.nnz = 0;
    if (this.pending.length === this.batchesPerRecord) this.endRecord();
  }

  private endRecord(): void {
    const file = tocRecordName(this.options.split, this.records.length);
    const { bytes, entries } = writeTocRecord(this.pending);
    this.options.onRecord(file, bytes);
    this.records.push({ file, batches: entries });
    this.pending = [];
  }
}
