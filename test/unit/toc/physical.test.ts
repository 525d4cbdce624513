// Physical encoding: byte round trips, and validation of damaged or hostile bytes.
import { describe, expect, it } from 'vitest';
import {
  TOC_HEADER_BYTES,
  TocFormatError,
  decode,
  decodeLogical,
  decodeToc,
  encodeDense,
  encodePairs,
  encodeToc,
  toBatch,
  type TocLogical,
} from '../../../src/toc/index.js';
import { randomMatrix, rng } from './generators.js';
import { bitsFor, sections, writePacked } from './helpers.js';

/** 10 columns (4-bit column field) and 3 distinct values (2-bit value index): room for bad values. */
function sample(): TocLogical {
  const data = randomMatrix(rng(3), { rows: 40, cols: 10, density: 0.6, distinctValues: 3, repeatRows: 0.4 }, 'f64');
  return encodeDense(data, 40, 10);
}

function expectFormatError(bytes: Uint8Array, message: RegExp, offset?: number): TocFormatError {
  let error: unknown;
  try {
    decodeToc(bytes);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(TocFormatError);
  const formatError = error as TocFormatError;
  expect(formatError.message).toMatch(message);
  expect(formatError.message).toMatch(/at byte \d+/);
  if (offset !== undefined) expect(formatError.offset).toBe(offset);
  return formatError;
}

describe('TOC physical round trip', () => {
  it('random f32 and f64 batches survive bytes exactly', () => {
    const random = rng(11);
    for (let trial = 0; trial < 30; trial++) {
      const rows = Math.floor(random() * 251);
      const cols = 1 + Math.floor(random() * 300);
      const type = trial % 2 ? 'f32' : 'f64';
      const spec = { rows, cols, density: random() * random(), distinctValues: 1 + Math.floor(random() * 300), repeatRows: random(), emptyRows: 0.1 };
      const logical = encodeDense(randomMatrix(random, spec, type), rows, cols);
      const back = decodeToc(encodeToc(logical));
      expect(back).toEqual(logical);
    }
  });

  it('stores 4-byte values for float32 batches unless f64 is asked for', () => {
    const logical = encodePairs(
      [
        [
          [0, 0.5],
          [2, 1.25],
        ],
      ],
      3,
      'f32',
    );
    const small = encodeToc(logical);
    const wide = encodeToc(logical, { valueType: 'f64' });
    expect(small[6]).toBe(4);
    expect(wide[6]).toBe(8);
    expect(wide.length - small.length).toBe(8); // two unique values, 4 more bytes each
    expect(decodeToc(wide).valueType).toBe('f64');
    expect(() => encodeToc(encodePairs([[[0, 0.1]]], 1), { valueType: 'f32' })).toThrow(/float32/);
  });

  it('empty batches encode to the header alone', () => {
    const logical = encodeDense(new Float32Array(0), 0, 0);
    const bytes = encodeToc(logical);
    expect(bytes.length).toBe(TOC_HEADER_BYTES);
    expect(decodeToc(bytes)).toEqual(logical);
    const zeros = encodeDense(new Float32Array(250 * 784), 250, 784);
    expect(decodeLogical(decodeToc(encodeToc(zeros))).data.every((v) => v === 0)).toBe(true);
  });

  it('decodes from a view into a larger buffer', () => {
    const bytes = encodeToc(sample());
    const padded = new Uint8Array(bytes.length + 7);
    padded.set(bytes, 3);
    expect(decodeToc(padded.subarray(3, 3 + bytes.length))).toEqual(sample());
  });
});

describe('TOC physical validation', () => {
  const good = encodeToc(sample());
  const s = sections(good);

  it('every truncation is reported with the offset where the bytes ran out', () => {
    for (let length = 0; length < good.length; length++) {
      const error = expectFormatError(good.slice(0, length), /truncated/);
      expect(error.offset).toBe(length);
    }
  });

  it('trailing bytes, bad magic, version and value width', () => {
    expectFormatError(Uint8Array.from([...good, 0]), /trailing/, good.length);
    const bad = (at: number, value: number) => {
      const copy = good.slice();
      copy[at] = value;
      return copy;
    };
    expectFormatError(bad(1, 0x58), /magic/, 1);
    expectFormatError(bad(4, 2), /version/, 4);
    expectFormatError(bad(6, 5), /value bytes/, 6);
    expectFormatError(bad(28, s.colBits + 1), /column bits/, 28);
  });

  it('a code past the dictionary', () => {
    const bytes = good.slice();
    const row1 = decodeToc(good).rowOffsets[1]!; // first code of row 1
    const nodeCount = toBatch(decodeToc(good)).nodeCount;
    expect(nodeCount).toBeLessThan(2 ** s.codeBits);
    writePacked(bytes, s.codesAt, row1, s.codeBits, nodeCount);
    expectFormatError(bytes, /code \d+ in row 1 points past the dictionary/, s.codesAt + Math.floor((row1 * s.codeBits) / 8));
  });

  it('a code used before it is defined (forward reference) or pointing at the root', () => {
    const logical = decodeToc(good);
    const k = logical.rowOffsets[2]! + 1; // second code of row 2: the node it would define is the limit
    const defined = 1 + logical.firstLayerCol.length + (k - 2); // codes after the first in rows 0..1 and row 2
    const forward = good.slice();
    writePacked(forward, s.codesAt, k, s.codeBits, defined);
    expectFormatError(forward, /past the dictionary/, s.codesAt + Math.floor((k * s.codeBits) / 8));
    const root = good.slice();
    writePacked(root, s.codesAt, 0, s.codeBits, 0);
    expectFormatError(root, /at the root/, s.codesAt);
  });

  it('a column index >= cols', () => {
    const bytes = good.slice();
    writePacked(bytes, s.columnsAt, 2, s.colBits, 12);
    expectFormatError(bytes, /pair 2 has column 12 >= cols 10/, s.columnsAt + 1);
  });

  it('a value index out of range', () => {
    const bytes = good.slice();
    expect(s.values).toBe(3);
    writePacked(bytes, s.valueIndexesAt, 5, s.valueIndexBits, 3);
    expectFormatError(bytes, /value index 3 >= 3 values/, s.valueIndexesAt + 1);
  });

  it('row starts that decrease or run past |D|', () => {
    const bytes = good.slice();
    writePacked(bytes, s.rowStartsAt, 3, s.rowStartBits, 0);
    expectFormatError(bytes, /row 3 starts at code 0, outside \[\d+, \d+\]/, s.rowStartsAt + Math.floor((3 * s.rowStartBits) / 8));
    const past = good.slice();
    writePacked(past, s.rowStartsAt, s.rows - 1, s.rowStartBits, s.codeCount + 1);
    expectFormatError(past, /starts at code/);
    const orphan = good.slice(); // codes before row 0 would belong to no row
    writePacked(orphan, s.rowStartsAt, 0, s.rowStartBits, 1);
    expectFormatError(orphan, /row 0 starts at code 1, outside \[0, 0\]/, s.rowStartsAt);
  });

  it('columns that do not increase along a row', () => {
    // Row [1:a, 2:b] gives codes [1, 2]; swapping them decodes to columns 2 then 1.
    const bytes = encodeToc(
      encodePairs(
        [
          [
            [1, 7],
            [2, 8],
          ],
        ],
        3,
      ),
    );
    const t = sections(bytes);
    writePacked(bytes, t.codesAt, 0, t.codeBits, 2);
    writePacked(bytes, t.codesAt, 1, t.codeBits, 1);
    expectFormatError(bytes, /column 1 follows column 2/, t.codesAt);
  });

  it('header counts that would allocate without backing bytes', () => {
    const bytes = good.slice();
    new DataView(bytes.buffer).setUint32(8, 0xffffffff, true);
    expectFormatError(bytes, /rows exceed/, 8);
    const pairs = encodeToc(encodePairs([[[0, 1]]], 1)); // 0-bit columns and value indexes
    new DataView(pairs.buffer).setUint32(20, 4_000_000_000, true);
    expectFormatError(pairs, /first layer of \d+ pairs exceeds rows x cols/, 20);
  });

  it('random corruption never escapes validation: TocFormatError or a fully in-range batch', () => {
    const random = rng(77);
    let rejected = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const bytes = good.slice();
      const flips = 1 + Math.floor(random() * 3);
      for (let f = 0; f < flips; f++) bytes[Math.floor(random() * bytes.length)] ^= 1 << Math.floor(random() * 8);
      let logical: TocLogical;
      try {
        logical = decodeToc(bytes);
      } catch (e) {
        expect(e).toBeInstanceOf(TocFormatError);
        rejected++;
        continue;
      }
      const batch = toBatch(logical);
      const inRange = (a: Uint32Array, limit: number) => a.every((x) => x < limit);
      expect(inRange(batch.codes, batch.nodeCount) && !batch.codes.includes(0)).toBe(true);
      expect(inRange(batch.nodeKeyCol, batch.cols) && inRange(batch.firstLayerCol, batch.cols)).toBe(true);
      expect(batch.nodeParent.every((p, i) => i === 0 || p < i)).toBe(true);
      expect(decode(batch).data.length).toBe(batch.rows * batch.cols);
    }
    expect(rejected).toBeGreaterThan(0);
  });

  it('in-memory batches get the same checks (offset -1)', () => {
    const logical = decodeToc(good);
    const badCode = { ...logical, codes: logical.codes.map((c, k) => (k === 3 ? 1e6 : c)) };
    for (const run of [() => toBatch(badCode), () => encodeToc(badCode), () => decodeLogical(badCode)]) {
      expect(run).toThrow(TocFormatError);
      expect(run).toThrow(/past the dictionary/);
    }
    try {
      toBatch({ ...logical, firstLayerVal: logical.firstLayerVal.subarray(1) });
      expect.fail('expected a TocFormatError');
    } catch (e) {
      expect((e as TocFormatError).offset).toBe(-1);
    }
  });

  it('bit widths are the minimal ones', () => {
    const logical = decodeToc(good);
    expect(s.colBits).toBe(bitsFor(10));
    expect(s.codeBits).toBe(bitsFor(toBatch(logical).nodeCount));
  });
});
