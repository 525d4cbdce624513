// TOC dataset files: frames and records round trip, and every damaged frame is a
// TocFormatError naming the record, the batch and the absolute byte offset.
import { describe, expect, it } from 'vitest';
import { ManifestError } from '../../../src/shared/errors.js';
import {
  readTocFrame,
  readTocRecord,
  TOC_FRAME_HEADER_BYTES,
  tocRecordName,
  TocSplitWriter,
  validateTocManifest,
  writeTocRecord,
  type TocFrame,
  type TocManifest,
} from '../../../src/toc/dataset.js';
import { decodeLogical, decodeToc, encodeDense, encodeToc, TocFormatError, type TocLogical } from '../../../src/toc/index.js';
import { randomMatrix, rng } from './generators.js';
import { sections, writePacked } from './helpers.js';

const CLASSES = 5;

/** A labelled batch of `rows` rows with float32 values. */
function batch(seed: number, rows: number, cols = 12): TocFrame {
  const random = rng(seed);
  const data = randomMatrix(random, { rows, cols, density: 0.4, distinctValues: 4, repeatRows: 0.3, emptyRows: 0.1 }, 'f32');
  const labels = Uint16Array.from({ length: rows }, () => Math.floor(random() * CLASSES));
  return { labels, logical: encodeDense(data, rows, cols) };
}

/** Frame bytes assembled by hand, to build what writeTocRecord never writes. */
function rawFrame(rows: number, labels: number[], toc: Uint8Array, labelBytes = 2 * rows): Uint8Array {
  const pad = (4 - (labelBytes % 4)) % 4;
  const out = new Uint8Array(16 + labelBytes + pad + toc.length);
  const view = new DataView(out.buffer);
  out.set([0x54, 0x4f, 0x43, 0x42]);
  view.setUint32(4, rows, true);
  view.setUint32(8, labelBytes, true);
  view.setUint32(12, toc.length, true);
  labels.forEach((l, i) => view.setUint16(16 + 2 * i, l, true));
  out.set(toc, 16 + labelBytes + pad);
  return out;
}

function expectFrameError(run: () => unknown, record: string, batchIndex: number, offset: number, message: RegExp): void {
  let error: unknown;
  try {
    run();
  } catch (e) {
    error = e;
  }
  expect(error, 'expected a TocFormatError').toBeInstanceOf(TocFormatError);
  const e = error as TocFormatError;
  expect(e.message).toContain(`${record} batch ${batchIndex}: `);
  expect(e.message).toMatch(message);
  expect(e.message).toContain(`(at byte ${offset})`);
  expect(e.offset).toBe(offset);
}

describe('TOC record files', () => {
  const frames = [batch(1, 250), batch(2, 250), batch(3, 7), batch(4, 1)];
  const { bytes, entries } = writeTocRecord(frames);

  it('lays frames out back to back: header, u16 labels, padding to 4, TOC bytes', () => {
    expect(entries.map((e) => e.rows)).toEqual([250, 250, 7, 1]);
    expect(entries[0]!.offset).toBe(0);
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.offset).toBe(entries[i - 1]!.offset + entries[i - 1]!.bytes);
    expect(bytes.length).toBe(entries[3]!.offset + entries[3]!.bytes);
    const view = new DataView(bytes.buffer);
    entries.forEach((e, i) => {
      expect(String.fromCharCode(...bytes.subarray(e.offset, e.offset + 4))).toBe('TOCB');
      expect(view.getUint32(e.offset + 4, true)).toBe(e.rows);
      expect(view.getUint32(e.offset + 8, true)).toBe(2 * e.rows);
      const toc = encodeToc(frames[i]!.logical, { valueType: 'f32' });
      expect(view.getUint32(e.offset + 12, true)).toBe(toc.length);
      const tocAt = e.offset + 16 + 2 * e.rows + ((4 - ((2 * e.rows) % 4)) % 4);
      expect(bytes.subarray(tocAt, tocAt + toc.length)).toEqual(toc);
      expect(e.bytes).toBe(tocAt - e.offset + toc.length);
      for (let r = 0; r < e.rows; r++) expect(view.getUint16(e.offset + 16 + 2 * r, true)).toBe(frames[i]!.labels[r]);
    });
    // 7 rows: 14 label bytes, 2 bytes of padding.
    expect(entries[2]!.bytes - 16 - 14 - 2).toBe(encodeToc(frames[2]!.logical).length);
  });

  it('reads back the same labels and matrices, frame by frame and as a record', () => {
    const record = { file: 'train-00000.tocr', batches: entries };
    const read = readTocRecord(bytes, record, { classes: CLASSES, columns: 12 });
    read.forEach((f, i) => {
      expect(f.labels).toEqual(frames[i]!.labels);
      expect(f.logical.valueType).toBe('f32');
      expect(decodeLogical(f.logical).data).toEqual(decodeLogical(frames[i]!.logical).data);
      expect(readTocFrame(bytes, entries[i]!, record.file, i, { classes: CLASSES })).toEqual(f);
    });
    expect(() => readTocRecord(bytes.subarray(0, bytes.length - 1), record, { classes: CLASSES })).toThrow(TocFormatError);
    const longer = new Uint8Array(bytes.length + 3);
    longer.set(bytes);
    expect(() => readTocRecord(longer, record, { classes: CLASSES })).toThrow(/frames end at/);
  });

  it('refuses values that float32 cannot hold and labels that do not match the rows', () => {
    const f64 = encodeDense(Float64Array.of(0.1, 0, 0.2, 0.3), 2, 2);
    expect(() => writeTocRecord([{ labels: Uint16Array.of(0, 1), logical: f64 }])).toThrow(/float32/);
    expect(() => writeTocRecord([{ labels: Uint16Array.of(0), logical: frames[0]!.logical }])).toThrow(/1 labels for 250 rows/);
  });

  it('names records train-00000.tocr, test-00012.tocr', () => {
    expect(tocRecordName('train', 0)).toBe('train-00000.tocr');
    expect(tocRecordName('test', 12)).toBe('test-00012.tocr');
  });
});

describe('damaged frames give TocFormatError with record, batch and absolute byte offset', () => {
  const frames = [batch(11, 30), batch(12, 9), batch(13, 20)];
  const { bytes, entries } = writeTocRecord(frames);
  const name = 'train-00007.tocr';
  const target = 1; // the middle frame: its offsets are not frame-relative by accident
  const e = entries[target]!;
  const labelsAt = e.offset + TOC_FRAME_HEADER_BYTES;
  const tocAt = labelsAt + 18 + 2; // 9 rows: 18 label bytes + 2 padding
  const read = (record: Uint8Array, entry = e, classes = CLASSES, columns?: number) =>
    readTocFrame(record, entry, name, target, { classes, ...(columns === undefined ? {} : { columns }) });
  const damaged = (edit: (b: Uint8Array, view: DataView) => void): Uint8Array => {
    const copy = bytes.slice();
    edit(copy, new DataView(copy.buffer));
    return copy;
  };

  it('bad magic', () => {
    expectFrameError(() => read(damaged((b) => (b[e.offset + 2] = 0x58))), name, target, e.offset + 2, /bad magic, expected 'TOCB'/);
  });

  it('a frame offset that points into another frame', () => {
    expectFrameError(() => read(bytes, { ...e, offset: e.offset + 4 }), name, target, e.offset + 4, /bad magic/);
  });

  it('truncated frame header and truncated frame', () => {
    const cut = bytes.subarray(0, e.offset + 10);
    expectFrameError(() => read(cut), name, target, cut.length, /truncated frame header/);
    const cutToc = bytes.subarray(0, e.offset + e.bytes - 5);
    expectFrameError(() => read(cutToc), name, target, cutToc.length, /truncated frame: needs bytes/);
  });

  it('rows that disagree with the manifest', () => {
    expectFrameError(() => read(bytes, { ...e, rows: 10 }), name, target, e.offset + 4, /frame has 9 rows, the manifest says 10/);
  });

  it('rows that disagree with the TOC header', () => {
    // A frame that says 3 rows (and carries 3 labels) around the TOC of a 2-row batch.
    const toc = encodeToc(encodeDense(Float32Array.of(1, 0, 0, 0.5), 2, 2));
    const frame = rawFrame(3, [0, 1, 2], toc);
    const record = new Uint8Array(40 + frame.length);
    record.set(frame, 40);
    const entry = { offset: 40, bytes: frame.length, rows: 3 };
    expectFrameError(() => readTocFrame(record, entry, name, 4, { classes: 3 }), name, 4, 40 + 16 + 6 + 2 + 8, /TOC header has 2 rows, the frame has 3/);
  });

  it('label bytes other than 2 x rows, and sizes that do not add up to the manifest', () => {
    expectFrameError(
      () => read(damaged((_, v) => v.setUint32(e.offset + 8, 20, true))),
      name,
      target,
      e.offset + 8,
      /label bytes 20, expected 2 x 9 rows = 18/,
    );
    expectFrameError(() => read(bytes, { ...e, bytes: e.bytes + 1 }), name, target, e.offset + 12, /the manifest says/);
    expectFrameError(() => read(damaged((_, v) => v.setUint32(e.offset + 12, 1, true))), name, target, e.offset + 12, /frame is \d+ bytes \(TOC 1\)/);
  });

  it('zero rows and non-zero padding', () => {
    expectFrameError(() => read(damaged((_, v) => v.setUint32(e.offset + 4, 0, true))), name, target, e.offset + 4, /0 rows/);
    expectFrameError(() => read(damaged((b) => (b[tocAt - 1] = 7))), name, target, tocAt - 1, /padding after the labels is not zero/);
  });

  it('a label out of range', () => {
    const row = 6;
    expectFrameError(
      () => read(damaged((_, v) => v.setUint16(labelsAt + 2 * row, CLASSES, true))),
      name,
      target,
      labelsAt + 2 * row,
      /label 5 of row 6 is not below 5 classes/,
    );
    // The same bytes are fine for a dataset with more classes.
    expect(
      read(
        damaged((_, v) => v.setUint16(labelsAt + 2 * row, CLASSES, true)),
        e,
        CLASSES + 1,
      ).labels[row],
    ).toBe(CLASSES);
  });

  it('corrupt TOC bytes: decodeToc errors are shifted to the file offset', () => {
    expectFrameError(() => read(damaged((b) => (b[tocAt + 1] = 0))), name, target, tocAt + 1, /TOC: bad magic, expected 'TOC1'/);
    expectFrameError(() => read(damaged((b) => (b[tocAt + 7] = 1))), name, target, tocAt + 7, /TOC: reserved byte is not 0/);
    // A code past the dictionary, deep inside the TOC bytes.
    const toc = bytes.slice(tocAt, e.offset + e.bytes);
    const s = sections(toc);
    writePacked(toc, s.codesAt, 0, s.codeBits, (1 << s.codeBits) - 1); // first code: only |I| nodes exist yet
    let inner = -1;
    try {
      decodeToc(toc);
    } catch (err) {
      inner = (err as TocFormatError).offset;
    }
    expect(inner).toBeGreaterThanOrEqual(s.codesAt);
    const withBadCode = damaged((b) => b.set(toc, tocAt));
    expectFrameError(() => read(withBadCode), name, target, tocAt + inner, /TOC: code \d+ in row \d+ points past the dictionary/);
  });

  it('float64 TOC values and the wrong number of columns', () => {
    const logical: TocLogical = frames[target]!.logical;
    const f64 = encodeToc(logical, { valueType: 'f64' });
    const frame = rawFrame(9, Array.from(frames[target]!.labels), f64);
    expectFrameError(() => readTocFrame(frame, { offset: 0, bytes: frame.length, rows: 9 }, name, 0, { classes: CLASSES }), name, 0, 16 + 20 + 6, /float64/);
    expectFrameError(() => read(bytes, e, CLASSES, 13), name, target, tocAt + 12, /TOC has 12 columns, the dataset has 13/);
  });
});

describe('TocSplitWriter', () => {
  it('cuts rows into batches and batches into records, and the records read back', () => {
    const written = new Map<string, Uint8Array>();
    const writer = new TocSplitWriter({ split: 'test', columns: 6, classes: 3, batchRows: 4, batchesPerRecord: 2, onRecord: (f, b) => written.set(f, b) });
    const rows: Array<[number[], number[], number]> = [];
    for (let r = 0; r < 11; r++) {
      const cols = [r % 6, 5].filter((c, i, a) => a.indexOf(c) === i).sort((a, b) => a - b);
      const vals = cols.map((c) => (c === 5 ? 1 : Math.fround(r / 16)));
      rows.push([cols, vals, r % 3]);
      writer.addRow(cols, vals, cols.length, r % 3);
    }
    expect(() => writer.addRow([0], [1], 1, 3)).toThrow(RangeError);
    const split = writer.finish();
    expect(writer.rows).toBe(11);
    expect(split.records.map((r) => r.file)).toEqual(['test-00000.tocr', 'test-00001.tocr']);
    expect(split.records.map((r) => r.batches.map((b) => b.rows))).toEqual([[4, 4], [3]]);
    let r = 0;
    for (const record of split.records) {
      for (const f of readTocRecord(written.get(record.file)!, record, { classes: 3, columns: 6 })) {
        const dense = decodeLogical(f.logical).data;
        for (let i = 0; i < f.logical.rows; i++, r++) {
          const [cols, vals, label] = rows[r]!;
          expect(f.labels[i]).toBe(label);
          const expected = new Float64Array(6);
          cols.forEach((c, k) => (expected[c] = vals[k]!));
          expect(Array.from(dense.subarray(i * 6, i * 6 + 6))).toEqual(Array.from(expected));
        }
      }
    }
    expect(r).toBe(11);
  });
});

describe('validateTocManifest', () => {
  const { entries } = writeTocRecord([batch(21, 10), batch(22, 5)]);
  const good = (): TocManifest => ({
    format: 'bytelab-toc',
    version: 1,
    name: 'tiny',
    classes: ['a', 'b', 'c', 'd', 'e'],
    columns: 12,
    featureNames: Array.from({ length: 12 }, (_, i) => `f${i}`),
    rows: { train: 15 },
    splits: { train: { records: [{ file: 'train-00000.tocr', batches: entries }] } },
  });

  it('accepts a well-formed manifest', () => {
    expect(validateTocManifest(good())).toEqual(good());
  });

  const cases: Array<[string, (m: TocManifest) => void, RegExp]> = [
    ['format', (m) => ((m as { format: string }).format = 'bytelab-pcr'), /format is "bytelab-pcr"/],
    ['version', (m) => ((m as { version: number }).version = 2), /unsupported version 2/],
    ['classes', (m) => (m.classes = []), /classes/],
    ['featureNames', (m) => m.featureNames.pop(), /featureNames must have columns = 12/],
    ['rows', (m) => (m.rows.train = 16), /rows.train is 16, the batches of split train hold 15/],
    ['offsets', (m) => (m.splits.train.records[0]!.batches[1]!.offset += 1), /batch 1: offset \d+, expected \d+/],
    ['file name', (m) => (m.splits.train.records[0]!.file = '../x.tocr'), /bad file name/],
    ['split name', (m) => ((m.splits as Record<string, unknown>).valid = m.splits.train), /unknown split "valid"/],
    ['bytes', (m) => (m.splits.train.records[0]!.batches[0]!.bytes = 20), /bytes must be an integer >= /],
  ];
  for (const [what, edit, message] of cases) {
    it(`rejects a bad ${what}`, () => {
      const m = good();
      edit(m);
      expect(() => validateTocManifest(JSON.parse(JSON.stringify(m)), 'ds/manifest.json')).toThrow(ManifestError);
      expect(() => validateTocManifest(JSON.parse(JSON.stringify(m)), 'ds/manifest.json')).toThrow(message);
    });
  }
});
