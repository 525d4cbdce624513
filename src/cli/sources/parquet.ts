// Reads a Parquet file into a RawTable (tabular.ts) with hyparquet, one row group
// at a time, keeping each column as a compact typed array (numbers as Float64Array,
// strings as category codes, timestamps as milliseconds).
//
// hyparquet decodes only uncompressed and Snappy pages by itself; vega-datasets'
// flights-3m.parquet uses ZSTD, so this file also holds a Zstandard decoder
// (RFC 8878, decompression only, no dictionaries), plugged in as `compressors.ZSTD`.
import { readFile } from 'node:fs/promises';
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

// ====================================================================== Zstandard
// Decoder for Zstandard frames (RFC 8878): raw, RLE and compressed blocks,
// Huffman-coded literals (1 or 4 streams), FSE-coded sequences with predefined,
// RLE, compressed and repeated tables. Not supported: dictionaries. The content
// checksum is skipped. Every read is bounds-checked; corrupt input throws ZstdError.

export class ZstdError extends Error {
  override name = 'ZstdError';
}

const ZSTD_MAGIC = 0xfd2fb528;
const LL_MAX_SYMBOL = 35;
const ML_MAX_SYMBOL = 52;
const OF_MAX_SYMBOL = 31;

// Literal length and match length codes: baseline and number of extra bits (RFC 8878 §3.1.1.3.2.1.1).
const LL_BASE = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536];
const LL_BITS = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
const ML_BASE = [
  3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515,
  1027, 2051, 4099, 8195, 16387, 32771, 65539,
];
const ML_BITS = [
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
];
// Predefined distributions (§3.1.1.3.2.2); -1 = "less than 1" probability.
const LL_DEFAULT = [4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1];
const ML_DEFAULT = [
  1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
];
const OF_DEFAULT = [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1];

/** FSE decoding table: state -> symbol, bits to read, and the base of the next state. */
interface FseTable {
  log: number;
  symbol: Uint8Array;
  bits: Uint8Array;
  base: Uint16Array;
}

/** Huffman decoding table indexed by the next maxBits bits. */
interface HuffmanTable {
  maxBits: number;
  symbol: Uint8Array;
  bits: Uint8Array;
}

/**
 * Backward bitstream (§4.1): bits are numbered little-endian from the first byte;
 * reading starts below the end marker (the highest set bit of the last byte) and
 * goes down. `pos` counts the unread bits; bits below position 0 read as zero.
 */
class BackwardBits {
  pos: number;

  constructor(
    private readonly src: Uint8Array,
    private readonly start: number,
    end: number,
  ) {
    if (end <= start) throw new ZstdError('empty bitstream');
    const last = src[end - 1]!;
    if (last === 0) throw new ZstdError('bitstream does not end with a marker bit');
    this.pos = (end - 1 - start) * 8 + (31 - Math.clz32(last));
  }

  read(n: number): number {
    if (n === 0) return 0;
    this.pos -= n;
    return this.bitsAt(this.pos, n);
  }

  peek(n: number): number {
    return this.bitsAt(this.pos - n, n);
  }

  /** n (<= 32) bits starting at bit `at`, as an unsigned number. */
  private bitsAt(at: number, n: number): number {
    if (at < 0) {
      if (at + n <= 0) return 0;
      return this.bitsAt(0, n + at) * 2 ** -at;
    }
    if (n > 24) return this.bitsAt(at, 16) + this.bitsAt(at + 16, n - 16) * 65536;
    const i = this.start + (at >>> 3);
    const s = this.src;
    const word = (s[i]! | (s[i + 1]! << 8) | (s[i + 2]! << 16) | (s[i + 3]! << 24)) >>> (at & 7);
    return word & ((1 << n) - 1);
  }
}

/** Reads an FSE table description (§4.1.1) from src[start, end). */
function readFseDescription(src: Uint8Array, start: number, end: number, maxLog: number, maxSymbol: number): { table: FseTable; bytes: number } {
  let bit = 0;
  const peek = (): number => {
    const i = start + (bit >>> 3);
    return ((src[i]! | (src[i + 1]! << 8) | (src[i + 2]! << 16) | (src[i + 3]! << 24)) >>> (bit & 7)) >>> 0;
  };
  const log = (peek() & 15) + 5;
  bit += 4;
  if (log > maxLog) throw new ZstdError(`FSE accuracy log ${log} > ${maxLog}`);
  let remaining = (1 << log) + 1;
  let threshold = 1 << log;
  let nbBits = log + 1;
  const counts = new Int16Array(maxSymbol + 1);
  let symbol = 0;
  let previousZero = false;
  while (remaining > 1 && symbol <= maxSymbol) {
    if (previousZero) {
      for (;;) {
        const repeat = peek() & 3;
        bit += 2;
        symbol += repeat;
        if (repeat !== 3) break;
      }
      if (symbol > maxSymbol) throw new ZstdError('FSE description: zero run past the last symbol');
    }
    const word = peek();
    const max = 2 * threshold - 1 - remaining;
    let count: number;
    if ((word & (threshold - 1)) < max) {
      count = word & (threshold - 1);
      bit += nbBits - 1;
    } else {
      count = word & (2 * threshold - 1);
      if (count >= threshold) count -= max;
      bit += nbBits;
    }
    count--;
    remaining -= count < 0 ? -count : count;
    if (remaining < 1) throw new ZstdError('FSE description: probabilities exceed the table');
    counts[symbol++] = count;
    previousZero = count === 0;
    while (remaining < threshold) {
      nbBits--;
      threshold >>= 1;
    }
  }
  const bytes = (bit + 7) >> 3;
  if (remaining !== 1 || bytes > end - start) throw new ZstdError('corrupt FSE table description');
  return { table: buildFseTable(counts, symbol, log), bytes };
}

/** Builds the decoding table from normalised counts (§4.1.1, "FSE table construction"). */
function buildFseTable(counts: ArrayLike<number>, symbols: number, log: number): FseTable {
  const size = 1 << log;
  const symbol = new Uint8Array(size);
  const bits = new Uint8Array(size);
  const base = new Uint16Array(size);
  const next = new Uint16Array(symbols);
  let high = size - 1;
  for (let s = 0; s < symbols; s++) {
    if (counts[s] === -1) {
      symbol[high--] = s;
      next[s] = 1;
    } else next[s] = counts[s]!;
  }
  const step = (size >> 1) + (size >> 3) + 3;
  const mask = size - 1;
  let pos = 0;
  for (let s = 0; s < symbols; s++) {
    for (let i = 0; i < counts[s]!; i++) {
      symbol[pos] = s;
      do pos = (pos + step) & mask;
      while (pos > high);
    }
  }
  if (pos !== 0) throw new ZstdError('FSE table: probabilities do not fill the table');
  for (let u = 0; u < size; u++) {
    const x = next[symbol[u]!]!++;
    const b = log - (31 - Math.clz32(x));
    bits[u] = b;
    base[u] = (x << b) - size;
  }
  return { log, symbol, bits, base };
}

function rleTable(symbol: number): FseTable {
  return { log: 0, symbol: Uint8Array.of(symbol), bits: new Uint8Array(1), base: new Uint16Array(1) };
}

const LL_PREDEFINED = buildFseTable(LL_DEFAULT, LL_DEFAULT.length, 6);
const ML_PREDEFINED = buildFseTable(ML_DEFAULT, ML_DEFAULT.length, 6);
const OF_PREDEFINED = buildFseTable(OF_DEFAULT, OF_DEFAULT.length, 5);

/** Huffman tree description (§4.2.1) at src[start, end): the table and its byte length. */
function readHuffmanTable(src: Uint8Array, start: number, end: number): { table: HuffmanTable; bytes: number } {
  if (start >= end) throw new ZstdError('missing Huffman tree description');
  const header = src[start]!;
  const weights = new Uint8Array(256);
  let count = 0;
  let bytes: number;
  if (header >= 128) {
    count = header - 127;
    bytes = 1 + ((count + 1) >> 1);
    if (start + bytes > end) throw new ZstdError('truncated Huffman weights');
    for (let i = 0; i < count; i++) {
      const byte = src[start + 1 + (i >> 1)]!;
      weights[i] = i & 1 ? byte & 15 : byte >> 4;
    }
  } else {
    bytes = 1 + header;
    if (start + bytes > end) throw new ZstdError('truncated Huffman weights');
    const { table, bytes: used } = readFseDescription(src, start + 1, start + bytes, 6, 255);
    const stream = new BackwardBits(src, start + 1 + used, start + bytes);
    let s1 = stream.read(table.log);
    let s2 = stream.read(table.log);
    for (;;) {
      if (count > 253) throw new ZstdError('too many Huffman weights');
      weights[count++] = table.symbol[s1]!;
      s1 = table.base[s1]! + stream.read(table.bits[s1]!);
      if (stream.pos < 0) {
        weights[count++] = table.symbol[s2]!;
        break;
      }
      weights[count++] = table.symbol[s2]!;
      s2 = table.base[s2]! + stream.read(table.bits[s2]!);
      if (stream.pos < 0) {
        weights[count++] = table.symbol[s1]!;
        break;
      }
    }
  }
  // The last symbol's weight is implied: it completes the sum to a power of two.
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (weights[i]! > 11) throw new ZstdError(`Huffman weight ${weights[i]} > 11`);
    if (weights[i]) total += 1 << (weights[i]! - 1);
  }
  if (total === 0) throw new ZstdError('Huffman weights are all zero');
  const maxBits = 32 - Math.clz32(total);
  const rest = (1 << maxBits) - total;
  if (maxBits > 11 || rest & (rest - 1)) throw new ZstdError('Huffman weights do not form a prefix code');
  weights[count] = 32 - Math.clz32(rest);
  const symbols = count + 1;
  const size = 1 << maxBits;
  const symbol = new Uint8Array(size);
  const bits = new Uint8Array(size);
  let pos = 0;
  for (let w = 1; w <= maxBits; w++) {
    const span = 1 << (w - 1);
    for (let s = 0; s < symbols; s++) {
      if (weights[s] !== w) continue;
      symbol.fill(s, pos, pos + span);
      bits.fill(maxBits + 1 - w, pos, pos + span);
      pos += span;
    }
  }
  if (pos !== size) throw new ZstdError('Huffman table is not full');
  return { table: { maxBits, symbol, bits }, bytes };
}

function decodeHuffmanStream(src: Uint8Array, start: number, end: number, table: HuffmanTable, out: Uint8Array, from: number, to: number): void {
  const stream = new BackwardBits(src, start, end);
  const { maxBits, symbol, bits } = table;
  for (let o = from; o < to; o++) {
    const v = stream.peek(maxBits);
    out[o] = symbol[v]!;
    stream.pos -= bits[v]!;
  }
  if (stream.pos !== 0) throw new ZstdError('Huffman stream length does not match its literals');
}

/** State carried from block to block within a frame. */
interface FrameState {
  huffman: HuffmanTable | null;
  ll: FseTable | null;
  of: FseTable | null;
  ml: FseTable | null;
  reps: [number, number, number];
}

/** Growable output buffer. */
class Output {
  bytes: Uint8Array;
  length = 0;

  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(capacity, 64));
  }

  reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}

function decodeLiterals(src: Uint8Array, p: number, end: number, state: FrameState): { literals: Uint8Array; next: number } {
  const b0 = src[p]!;
  const type = b0 & 3;
  const format = (b0 >> 2) & 3;
  if (type === 0 || type === 1) {
    let size: number;
    if (format === 0 || format === 2) {
      size = b0 >> 3;
      p += 1;
    } else if (format === 1) {
      size = (b0 >> 4) + (src[p + 1]! << 4);
      p += 2;
    } else {
      size = (b0 >> 4) + (src[p + 1]! << 4) + (src[p + 2]! << 12);
      p += 3;
    }
    if (type === 0) {
      if (p + size > end) throw new ZstdError('truncated raw literals');
      return { literals: src.subarray(p, p + size), next: p + size };
    }
    if (p >= end) throw new ZstdError('truncated RLE literals');
    return { literals: new Uint8Array(size).fill(src[p]!), next: p + 1 };
  }
  const headerBytes = format < 2 ? 3 : format === 2 ? 4 : 5;
  const sizeBits = format < 2 ? 10 : format === 2 ? 14 : 18;
  if (p + headerBytes > end) throw new ZstdError('truncated literals header');
  let header = 0;
  for (let i = 0; i < headerBytes; i++) header += src[p + i]! * 2 ** (8 * i);
  const regenerated = Math.floor(header / 16) % 2 ** sizeBits;
  const compressed = Math.floor(header / 2 ** (4 + sizeBits)) % 2 ** sizeBits;
  p += headerBytes;
  const litEnd = p + compressed;
  if (litEnd > end) throw new ZstdError('truncated compressed literals');
  let table: HuffmanTable;
  if (type === 2) {
    const read = readHuffmanTable(src, p, litEnd);
    table = read.table;
    state.huffman = table;
    p += read.bytes;
  } else {
    if (!state.huffman) throw new ZstdError('treeless literals without a previous Huffman table');
    table = state.huffman;
  }
  const literals = new Uint8Array(regenerated);
  if (format === 0) {
    decodeHuffmanStream(src, p, litEnd, table, literals, 0, regenerated);
  } else {
    if (p + 6 > litEnd) throw new ZstdError('truncated jump table');
    const e1 = p + 6 + (src[p]! | (src[p + 1]! << 8));
    const e2 = e1 + (src[p + 2]! | (src[p + 3]! << 8));
    const e3 = e2 + (src[p + 4]! | (src[p + 5]! << 8));
    const segment = (regenerated + 3) >> 2;
    if (e3 > litEnd || 3 * segment > regenerated) throw new ZstdError('bad jump table');
    decodeHuffmanStream(src, p + 6, e1, table, literals, 0, segment);
    decodeHuffmanStream(src, e1, e2, table, literals, segment, 2 * segment);
    decodeHuffmanStream(src, e2, e3, table, literals, 2 * segment, 3 * segment);
    decodeHuffmanStream(src, e3, litEnd, table, literals, 3 * segment, regenerated);
  }
  return { literals, next: litEnd };
}

function decodeCompressedBlock(src: Uint8Array, p: number, end: number, state: FrameState, out: Output): void {
  const { literals, next } = decodeLiterals(src, p, end, state);
  p = next;
  if (p >= end) throw new ZstdError('missing sequences section');
  let sequences = src[p++]!;
  if (sequences >= 128) {
    if (sequences < 255) {
      if (p >= end) throw new ZstdError('truncated sequence count');
      sequences = ((sequences - 128) << 8) + src[p++]!;
    } else {
      if (p + 2 > end) throw new ZstdError('truncated sequence count');
      sequences = src[p]! + (src[p + 1]! << 8) + 0x7f00;
      p += 2;
    }
  }
  let litPos = 0;
  if (sequences > 0) {
    if (p >= end) throw new ZstdError('missing compression modes');
    const modes = src[p++]!;
    if (modes & 3) throw new ZstdError('reserved bits set in compression modes');
    const pick = (mode: number, predefined: FseTable, previous: FseTable | null, maxLog: number, maxSymbol: number): FseTable => {
      if (mode === 0) return predefined;
      if (mode === 1) {
        if (p >= end) throw new ZstdError('truncated RLE symbol');
        const s = src[p++]!;
        if (s > maxSymbol) throw new ZstdError(`RLE symbol ${s} > ${maxSymbol}`);
        return rleTable(s);
      }
      if (mode === 2) {
        const { table, bytes } = readFseDescription(src, p, end, maxLog, maxSymbol);
        p += bytes;
        return table;
      }
      if (!previous) throw new ZstdError('repeat mode without a previous table');
      return previous;
    };
    const llTable = (state.ll = pick(modes >> 6, LL_PREDEFINED, state.ll, 9, LL_MAX_SYMBOL));
    const ofTable = (state.of = pick((modes >> 4) & 3, OF_PREDEFINED, state.of, 8, OF_MAX_SYMBOL));
    const mlTable = (state.ml = pick((modes >> 2) & 3, ML_PREDEFINED, state.ml, 9, ML_MAX_SYMBOL));

    const stream = new BackwardBits(src, p, end);
    let ll = stream.read(llTable.log);
    let of = stream.read(ofTable.log);
    let ml = stream.read(mlTable.log);
    const reps = state.reps;
    for (let i = 0; i < sequences; i++) {
      const ofCode = ofTable.symbol[of]!;
      const llCode = llTable.symbol[ll]!;
      const mlCode = mlTable.symbol[ml]!;
      if (ofCode > OF_MAX_SYMBOL || llCode > LL_MAX_SYMBOL || mlCode > ML_MAX_SYMBOL) throw new ZstdError('sequence code out of range');
      const offsetValue = 2 ** ofCode + stream.read(ofCode);
      const matchLength = ML_BASE[mlCode]! + stream.read(ML_BITS[mlCode]!);
      const literalLength = LL_BASE[llCode]! + stream.read(LL_BITS[llCode]!);
      let offset: number;
      if (offsetValue > 3) {
        offset = offsetValue - 3;
        reps[2] = reps[1];
        reps[1] = reps[0];
        reps[0] = offset;
      } else {
        const index = offsetValue - 1 + (literalLength === 0 ? 1 : 0);
        if (index === 0) offset = reps[0];
        else {
          offset = index < 3 ? reps[index]! : reps[0] - 1;
          if (index > 1) reps[2] = reps[1];
          reps[1] = reps[0];
          reps[0] = offset;
        }
      }
      if (litPos + literalLength > literals.length) throw new ZstdError('sequence reads past the literals');
      out.reserve(literalLength + matchLength);
      const buf = out.bytes;
      buf.set(literals.subarray(litPos, litPos + literalLength), out.length);
      out.length += literalLength;
      litPos += literalLength;
      if (offset < 1 || offset > out.length) throw new ZstdError(`match offset ${offset} outside the ${out.length} bytes decoded`);
      let o = out.length;
      if (offset >= matchLength) buf.copyWithin(o, o - offset, o - offset + matchLength);
      else for (let k = 0; k < matchLength; k++, o++) buf[o] = buf[o - offset]!;
      out.length += matchLength;
      if (i < sequences - 1) {
        ll = llTable.base[ll]! + stream.read(llTable.bits[ll]!);
        ml = mlTable.base[ml]! + stream.read(mlTable.bits[ml]!);
        of = ofTable.base[of]! + stream.read(ofTable.bits[of]!);
      }
    }
    if (stream.pos !== 0) throw new ZstdError('sequence bitstream length does not match its sequences');
  } else if (p !== end) {
    throw new ZstdError('bytes after an empty sequences section');
  }
  const rest = literals.length - litPos;
  out.reserve(rest);
  out.bytes.set(literals.subarray(litPos), out.length);
  out.length += rest;
}

/** Decompresses one or more concatenated Zstandard frames (skippable frames are skipped). */
export function zstdDecompress(input: Uint8Array, expectedLength?: number): Uint8Array {
  const out = new Output(expectedLength ?? input.length * 4);
  const u32 = (at: number) => (input[at]! | (input[at + 1]! << 8) | (input[at + 2]! << 16) | (input[at + 3]! << 24)) >>> 0;
  let p = 0;
  while (p < input.length) {
    if (p + 4 > input.length) throw new ZstdError(`truncated frame magic at byte ${p}`);
    const magic = u32(p);
    if ((magic & 0xfffffff0) >>> 0 === 0x184d2a50) {
      if (p + 8 > input.length) throw new ZstdError('truncated skippable frame');
      p += 8 + u32(p + 4);
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new ZstdError(`bad frame magic 0x${magic.toString(16)} at byte ${p}`);
    p += 4;
    const descriptor = input[p++]!;
    if (descriptor & 8) throw new ZstdError('reserved bit set in frame header');
    const singleSegment = (descriptor >> 5) & 1;
    const checksum = (descriptor >> 2) & 1;
    const dictBytes = [0, 1, 2, 4][descriptor & 3]!;
    const sizeBytes = [singleSegment, 2, 4, 8][descriptor >> 6]!;
    if (!singleSegment) p++; // window descriptor: the whole output stays in memory anyway
    let dictId = 0;
    for (let i = 0; i < dictBytes; i++) dictId += input[p + i]! * 2 ** (8 * i);
    if (dictId !== 0) throw new ZstdError(`frame needs dictionary ${dictId}; dictionaries are not supported`);
    p += dictBytes;
    let contentSize = -1;
    if (sizeBytes) {
      contentSize = 0;
      for (let i = 0; i < sizeBytes; i++) contentSize += input[p + i]! * 2 ** (8 * i);
      if (sizeBytes === 2) contentSize += 256;
      p += sizeBytes;
    }
    if (p > input.length) throw new ZstdError('truncated frame header');
    const frameStart = out.length;
    const state: FrameState = { huffman: null, ll: null, of: null, ml: null, reps: [1, 4, 8] };
    for (let last = 0; !last; ) {
      if (p + 3 > input.length) throw new ZstdError(`truncated block header at byte ${p}`);
      const header = input[p]! | (input[p + 1]! << 8) | (input[p + 2]! << 16);
      p += 3;
      last = header & 1;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 1) {
        if (p >= input.length) throw new ZstdError('truncated RLE block');
        out.reserve(size);
        out.bytes.fill(input[p]!, out.length, out.length + size);
        out.length += size;
        p += 1;
        continue;
      }
      if (p + size > input.length) throw new ZstdError(`truncated block at byte ${p}`);
      if (type === 0) {
        out.reserve(size);
        out.bytes.set(input.subarray(p, p + size), out.length);
        out.length += size;
      } else if (type === 2) {
        decodeCompressedBlock(input, p, p + size, state, out);
      } else {
        throw new ZstdError('reserved block type');
      }
      p += size;
    }
    if (checksum) p += 4;
    if (contentSize >= 0 && out.length - frameStart !== contentSize) {
      throw new ZstdError(`frame decoded to ${out.length - frameStart} bytes, header says ${contentSize}`);
    }
  }
  if (p > input.length) throw new ZstdError('truncated frame');
  if (expectedLength !== undefined && out.length !== expectedLength) {
    throw new ZstdError(`decoded ${out.length} bytes, expected ${expectedLength}`);
  }
  return out.length === out.bytes.length ? out.bytes : out.bytes.slice(0, out.length);
}
