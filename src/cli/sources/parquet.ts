// Reads a Parquet file into a RawTable (tabular.ts) with hyparquet, one row group
// at a time, keeping each column as a compact typed array (numbers as Float64Array,
// strings as category codes, timestamps as milliseconds).
//
// hyparquet decodes only uncompressed and Snappy pages by itself; vega-datasets'
// flights-3m.parquet uses ZSTD, so fzstd's decompressor is plugged in as
// `compressors.ZSTD` (see `zstdDecompress` below).
import { readFile } from 'node:fs/promises';
import { decompress as fzstdDecompress } from 'fzstd';
import { parquetMetadata, parquetRead, parquetSchema } from 'hyparquet';
import type { ColumnData, FileMetaData } from 'hyparquet';
import { CategoryBuilder, type RawColumn, type RawTable } from './tabular.js';

export interface ParquetReadOptions {
  /** Columns to read (all when omitted). */
  columns?: string[];
  /** Columns to leave out. */
  drop?: readonly string[];
  /** Read at most this many rows from the start of the file. */
  limit?: number;
  /** Called after each row group with the rows read so far. */
  onProgress?: (rowsRead: number, totalRows: number) => void;
}

type Sink =
  | { kind: 'number'; values: Float64Array }
  | { kind: 'time'; values: Float64Array }
  | { kind: 'string'; codes: Int32Array; categories: CategoryBuilder };

/**
 * ZSTD pages, decoded by fzstd (pure JS, no dependencies, no install script). It
 * is the decoder hyparquet-compressors (by hyparquet's author) uses for ZSTD too,
 * taken alone: that package also brings a WASM Snappy (hysnappy) and Brotli, gzip
 * and LZ4 decoders that these files do not need. hyparquet passes the page's
 * length as a second argument, which fzstd would take for an output buffer, so it
 * is dropped: fzstd sizes the output from the frame header, and hyparquet checks
 * that length against the page header.
 */
export const zstdDecompress = (input: Uint8Array): Uint8Array => fzstdDecompress(input);

/** Reads the chosen columns of a Parquet file into typed arrays. */
export async function readParquetTable(path: string, options: ParquetReadOptions = {}): Promise<RawTable> {
  const raw = await readFile(path);
  const file = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
  const metadata: FileMetaData = parquetMetadata(file);
  const totalRows = Number(metadata.num_rows);
  const rows = Math.min(totalRows, options.limit ?? Infinity);
  const schema = parquetSchema(metadata);
  const available = schema.children.map((c) => c.element.name);
  for (const name of options.drop ?? []) {
    if (!available.includes(name)) throw new Error(`${path}: --drop "${name}": no such column (columns: ${available.join(', ')})`);
  }
  const names = (options.columns ?? available).filter((name) => !options.drop?.includes(name));
  for (const name of names) {
    if (!available.includes(name)) throw new Error(`${path}: no column "${name}" (columns: ${available.join(', ')})`);
  }

  const sinks = new Map<string, Sink>();
  for (const name of names) {
    const element = schema.children.find((c) => c.element.name === name)!.element;
    const logical = element.logical_type?.type;
    const converted = element.converted_type;
    if (element.type === 'BYTE_ARRAY' || element.type === 'FIXED_LEN_BYTE_ARRAY' || element.type === 'BOOLEAN') {
      sinks.set(name, { kind: 'string', codes: new Int32Array(rows).fill(-1), categories: new CategoryBuilder() });
    } else if (logical === 'TIMESTAMP' || logical === 'DATE' || converted === 'TIMESTAMP_MILLIS' || converted === 'TIMESTAMP_MICROS' || converted === 'DATE') {
      sinks.set(name, { kind: 'time', values: new Float64Array(rows).fill(NaN) });
    } else {
      sinks.set(name, { kind: 'number', values: new Float64Array(rows).fill(NaN) });
    }
  }

  const onChunk = (chunk: ColumnData): void => {
    const sink = sinks.get(chunk.columnName);
    if (!sink) return;
    const data = chunk.columnData;
    const end = Math.min(chunk.rowEnd, rows);
    for (let r = Math.max(chunk.rowStart, 0); r < end; r++) {
      const v: unknown = data[r - chunk.rowStart];
      if (v === null || v === undefined) continue;
      if (sink.kind === 'string') sink.codes[r] = sink.categories.codeOf(String(v));
      else sink.values[r] = toNumber(v, chunk.columnName, r);
    }
  };

  // Timestamps become milliseconds as plain numbers, never Date objects. The
  // wall-clock fields of a timestamp that is not adjusted to UTC are read with
  // the UTC getters (tabular.ts), which is what such a timestamp means.
  const parsers = {
    timestampFromMilliseconds: (ms: bigint) => Number(ms),
    timestampFromMicroseconds: (us: bigint) => Number(us) / 1e3,
    timestampFromNanoseconds: (ns: bigint) => Number(ns) / 1e6,
    dateFromDays: (days: number) => days * 86_400_000,
  };
  let groupStart = 0;
  for (const group of metadata.row_groups) {
    if (groupStart >= rows) break;
    const groupEnd = Math.min(groupStart + Number(group.num_rows), rows);
    await parquetRead({ file, metadata, columns: names, rowStart: groupStart, rowEnd: groupEnd, compressors: { ZSTD: zstdDecompress }, parsers, onChunk });
    groupStart += Number(group.num_rows);
    options.onProgress?.(Math.min(groupStart, rows), rows);
  }

  const columns: RawColumn[] = names.map((name) => {
    const sink = sinks.get(name)!;
    if (sink.kind === 'string') return { name, kind: 'string', codes: sink.codes, levels: sink.categories.levels };
    return { name, kind: sink.kind, values: sink.values };
  });
  return { rows, columns };
}

function toNumber(v: unknown, column: string, row: number): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof Date) return v.getTime();
  throw new Error(`column ${column}, row ${row}: cannot read ${typeof v} ${String(v)} as a number`);
}
