// Physical encoding of TOC (§3.2): value indexing + bit packing of I and D, behind
// a 32-byte header. Decoding validates every field so that the result can be
// uploaded to GPU storage buffers without any index being out of range.
//
// Layout (all integers little-endian; byte offsets):
//   0  'TOC1'         4  u16 version (1)   6  u8 value bytes (4 | 8)   7  u8 reserved (0)
//   8  u32 rows      12  u32 cols         16  u32 V (unique values)
//  20  u32 |I|       24  u32 |D| (codes)
//  28  u8 column bits   29 u8 value-index bits   30 u8 code bits   31 u8 row-start bits
//  32  V values (f32 or f64), then four bit-packed sections, each starting on a
//      byte boundary: |I| columns, |I| value indexes, `rows` row starts, |D| codes.

import { bitsFor, packBits, packedBytes, unpackBits } from './bits.js';
import { ValueDictionary } from './hash.js';
import { buildPrefixTree } from './tree.js';
import type { Locator, TocSection } from './tree.js';
import { TocFormatError } from './types.js';
import type { TocLogical, ValueType } from './types.js';

const TOC_MAGIC = 'TOC1';
const TOC_VERSION = 1;
export const TOC_HEADER_BYTES = 32;
/** Largest row count accepted: bounds allocations made from header fields. */
export const TOC_MAX_ROWS = 1 << 20;

export interface PhysicalOptions {
  /** Value width to store; defaults to the batch's own. 'f64' matches the paper's baselines. */
  valueType?: ValueType;
}

interface Header {
  valueBytes: number;
  rows: number;
  cols: number;
  valueCount: number;
  firstLayerSize: number;
  codeCount: number;
  colBits: number;
  valueIndexBits: number;
  codeBits: number;
  rowStartBits: number;
}

/** Byte offsets of each section, derived from the header alone. */
function layoutOf(h: Header) {
  const columnsAt = TOC_HEADER_BYTES + h.valueCount * h.valueBytes;
  const valueIndexesAt = columnsAt + packedBytes(h.firstLayerSize, h.colBits);
  const rowStartsAt = valueIndexesAt + packedBytes(h.firstLayerSize, h.valueIndexBits);
  const codesAt = rowStartsAt + packedBytes(h.rows, h.rowStartBits);
  const end = codesAt + packedBytes(h.codeCount, h.codeBits);
  return { columnsAt, valueIndexesAt, rowStartsAt, codesAt, end };
}

/** Serialises a logical batch (validated first) to TOC1 bytes. */
export function encodeToc(logical: TocLogical, options: PhysicalOptions = {}): Uint8Array {
  const { rows, cols, firstLayerCol, firstLayerVal, codes, rowOffsets } = logical;
  if (rows > TOC_MAX_ROWS) throw new RangeError(`${rows} rows exceed the limit of ${TOC_MAX_ROWS}`);
  const { nodeCount } = buildPrefixTree(logical);
  const valueType = options.valueType ?? logical.valueType;

  // Value indexing: each distinct value stored once, pairs refer to it by index.
  const dictionary = new ValueDictionary();
  const valueIndex = new Uint32Array(firstLayerVal.length);
  for (let p = 0; p < firstLayerVal.length; p++) {
    const v = firstLayerVal[p];
    if (valueType === 'f32' && Math.fround(v) !== v && !Number.isNaN(v)) {
      throw new RangeError(`value ${v} does not fit float32; encode with valueType 'f64'`);
    }
    valueIndex[p] = dictionary.idOf(v);
  }
  const values = dictionary.values;

  const header: Header = {
    valueBytes: valueType === 'f64' ? 8 : 4,
    rows,
    cols,
    valueCount: values.length,
    firstLayerSize: firstLayerCol.length,
    codeCount: codes.length,
    colBits: bitsFor(cols),
    valueIndexBits: bitsFor(values.length),
    codeBits: bitsFor(nodeCount),
    rowStartBits: bitsFor(codes.length + 1),
  };
  const layout = layoutOf(header);
  const out = new Uint8Array(layout.end);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 4; i++) out[i] = TOC_MAGIC.charCodeAt(i);
  view.setUint16(4, TOC_VERSION, true);
  view.setUint8(6, header.valueBytes);
  view.setUint32(8, rows, true);
  view.setUint32(12, cols, true);
  view.setUint32(16, header.valueCount, true);
  view.setUint32(20, header.firstLayerSize, true);
  view.setUint32(24, header.codeCount, true);
  view.setUint8(28, header.colBits);
  view.setUint8(29, header.valueIndexBits);
  view.setUint8(30, header.codeBits);
  view.setUint8(31, header.rowStartBits);
  values.forEach((v, i) => {
    const at = TOC_HEADER_BYTES + i * header.valueBytes;
    if (header.valueBytes === 8) view.setFloat64(at, v, true);
    else view.setFloat32(at, v, true);
  });
  packBits(out, layout.columnsAt, firstLayerCol, header.colBits);
  packBits(out, layout.valueIndexesAt, valueIndex, header.valueIndexBits);
  packBits(out, layout.rowStartsAt, rowOffsets.subarray(0, rows), header.rowStartBits);
  packBits(out, layout.codesAt, codes, header.codeBits);
  return out;
}

/** Parses and validates TOC1 bytes; throws TocFormatError naming the field and byte offset. */
export function decodeToc(bytes: Uint8Array): TocLogical {
  const fail = (problem: string, offset: number): never => {
    throw new TocFormatError(problem, offset);
  };
  if (bytes.length < TOC_HEADER_BYTES) {
    fail(`truncated header: ${bytes.length} of ${TOC_HEADER_BYTES} bytes`, bytes.length);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < 4; i++) {
    if (bytes[i] !== TOC_MAGIC.charCodeAt(i)) fail(`bad magic, expected '${TOC_MAGIC}'`, i);
  }
  const version = view.getUint16(4, true);
  if (version !== TOC_VERSION) fail(`unsupported version ${version}`, 4);
  const h = readHeader(view, fail);
  const layout = layoutOf(h);

  const sections: Array<[string, number, number]> = [
    ['values', TOC_HEADER_BYTES, layout.columnsAt],
    ['first-layer columns', layout.columnsAt, layout.valueIndexesAt],
    ['first-layer value indexes', layout.valueIndexesAt, layout.rowStartsAt],
    ['row starts', layout.rowStartsAt, layout.codesAt],
    ['codes', layout.codesAt, layout.end],
  ];
  for (const [name, start, end] of sections) {
    if (end > bytes.length) fail(`truncated ${name}: needs bytes ${start}..${end}, buffer has ${bytes.length}`, bytes.length);
  }
  if (bytes.length > layout.end) fail(`${bytes.length - layout.end} trailing bytes`, layout.end);

  const values = new Float64Array(h.valueCount);
  for (let i = 0; i < h.valueCount; i++) {
    const at = TOC_HEADER_BYTES + i * h.valueBytes;
    values[i] = h.valueBytes === 8 ? view.getFloat64(at, true) : view.getFloat32(at, true);
  }
  const firstLayerCol = unpackBits(bytes, layout.columnsAt, h.firstLayerSize, h.colBits);
  const valueIndex = unpackBits(bytes, layout.valueIndexesAt, h.firstLayerSize, h.valueIndexBits);
  const firstLayerVal = new Float64Array(h.firstLayerSize);
  for (let p = 0; p < h.firstLayerSize; p++) {
    const index = valueIndex[p];
    if (index >= h.valueCount) {
      const offset = layout.valueIndexesAt + Math.floor((p * h.valueIndexBits) / 8);
      fail(`first-layer pair ${p} has value index ${index} >= ${h.valueCount} values`, offset);
    }
    firstLayerVal[p] = values[index];
  }
  const rowOffsets = new Uint32Array(h.rows + 1);
  rowOffsets.set(unpackBits(bytes, layout.rowStartsAt, h.rows, h.rowStartBits));
  rowOffsets[h.rows] = h.codeCount;
  const codes = unpackBits(bytes, layout.codesAt, h.codeCount, h.codeBits);

  const logical: TocLogical = {
    rows: h.rows,
    cols: h.cols,
    valueType: h.valueBytes === 8 ? 'f64' : 'f32',
    firstLayerCol,
    firstLayerVal,
    codes,
    rowOffsets,
  };
  const bitsAt: Record<TocSection, [number, number]> = {
    firstLayerCol: [layout.columnsAt, h.colBits],
    rowOffsets: [layout.rowStartsAt, h.rowStartBits],
    codes: [layout.codesAt, h.codeBits],
  };
  const locate: Locator = (section, index) => {
    if (section === 'rowOffsets' && index === h.rows) return 24; // the implicit end is |D|
    const [start, bits] = bitsAt[section];
    return start + Math.floor((index * bits) / 8);
  };
  const { nodeCount } = buildPrefixTree(logical, locate);
  if (h.codeBits !== bitsFor(nodeCount)) fail(`code bits ${h.codeBits}, expected ${bitsFor(nodeCount)}`, 30);
  return logical;
}

/** Reads header fields and checks them against each other and the limits. */
function readHeader(view: DataView, fail: (problem: string, offset: number) => never): Header {
  const h: Header = {
    valueBytes: view.getUint8(6),
    rows: view.getUint32(8, true),
    cols: view.getUint32(12, true),
    valueCount: view.getUint32(16, true),
    firstLayerSize: view.getUint32(20, true),
    codeCount: view.getUint32(24, true),
    colBits: view.getUint8(28),
    valueIndexBits: view.getUint8(29),
    codeBits: view.getUint8(30),
    rowStartBits: view.getUint8(31),
  };
  if (h.valueBytes !== 4 && h.valueBytes !== 8) fail(`value bytes ${h.valueBytes}, expected 4 or 8`, 6);
  if (view.getUint8(7) !== 0) fail('reserved byte is not 0', 7);
  if (h.rows > TOC_MAX_ROWS) fail(`${h.rows} rows exceed the limit of ${TOC_MAX_ROWS}`, 8);
  // Every pair of I is unique and every code covers >= 1 pair of a row, so both
  // counts are <= rows * cols; this also bounds arrays whose bit width is 0.
  const cells = h.rows * h.cols;
  if (h.valueCount > h.firstLayerSize) fail(`${h.valueCount} values but only ${h.firstLayerSize} pairs`, 16);
  if (h.firstLayerSize > cells) fail(`first layer of ${h.firstLayerSize} pairs exceeds rows x cols`, 20);
  if (h.codeCount > cells) fail(`${h.codeCount} codes exceed rows x cols`, 24);
  if (h.colBits !== bitsFor(h.cols)) fail(`column bits ${h.colBits}, expected ${bitsFor(h.cols)}`, 28);
  if (h.valueIndexBits !== bitsFor(h.valueCount)) {
    fail(`value-index bits ${h.valueIndexBits}, expected ${bitsFor(h.valueCount)}`, 29);
  }
  if (h.codeBits > 32 || (h.codeCount > 0 && h.codeBits === 0)) fail(`code bits ${h.codeBits} out of range`, 30);
  if (h.rowStartBits !== bitsFor(h.codeCount + 1)) {
    fail(`row-start bits ${h.rowStartBits}, expected ${bitsFor(h.codeCount + 1)}`, 31);
  }
  return h;
}
