// The PCR reference format (src/pcr/reference.ts) and the protobuf wire code under it
// (src/pcr/protobuf.ts). Byte sequences below are built by hand from the reference's
// .proto files (mkuchnik/PCR_Release: proto/LightMLRecords.proto and
// tensorflow/proto/progressive_compressed_record.proto), so a wrong field number,
// wire type or packing shows up as a byte mismatch.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeProgressiveScans } from '../../../src/jpeg/encoder.js';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import { ProtoReader, ProtoWriter, ProtobufError } from '../../../src/pcr/protobuf.js';
import {
  parseReferenceIndex,
  readReferenceRecordPrefix,
  referenceGroupEnds,
  referencePrefixLength,
  splitJpegScans,
  writeReferenceIndex,
  writeReferenceRecord,
} from '../../../src/pcr/reference.js';
import { RecordError } from '../../../src/pcr/record.js';
import { syntheticImages } from '../../support/fixtures.js';

const hex = (s: string) =>
  new Uint8Array(
    s
      .trim()
      .split(/\s+/)
      .map((b) => parseInt(b, 16)),
  );
const ascii = (s: string) => Array.from(new TextEncoder().encode(s));
const cat = (...parts: ArrayLike<number>[]) => new Uint8Array(parts.flatMap((p) => Array.from(p)));
const EOI = [0xff, 0xd9];

// --- A hand-built record: labels [3, 300], two scan groups, image 1 has one scan only.
// MetadataRecord (proto2: repeated int32 labels = 1, unpacked; progressive_levels = 2; version = 3)
const META = hex('08 03  08 ac 02  10 02  18 01'); // label 3, label 300, levels 2, version 1
// ScanGroup (repeated bytes image_bytes = 1): group 1 = ["AB", "C"], group 2 = ["D", ""]
const GROUP1 = hex('0a 02 41 42  0a 01 43');
const GROUP2 = hex('0a 01 44  0a 00');
const RECORD = cat(META, GROUP1, GROUP2);
const OFFSETS = [9, 7, 5];
// DatasetOffsetsIndex { records = 1: RecordOffsetsIndex { name = 1: "PCR_0.pcr", offsets = 2 (packed): [9, 7, 5] } }
const ENTRY = cat([0x0a, 0x09], ascii('PCR_0.pcr'), [0x12, 0x03, 0x09, 0x07, 0x05]);
const INDEX = cat([0x0a, ENTRY.length], ENTRY);

describe('protobuf wire format', () => {
  it('round-trips unsigned varints up to 2^53 - 1 with the standard byte patterns', () => {
    const cases: [number, string][] = [
      [0, '00'],
      [1, '01'],
      [127, '7f'],
      [128, '80 01'],
      [300, 'ac 02'],
      [2 ** 31 - 1, 'ff ff ff ff 07'],
      [2 ** 32, '80 80 80 80 10'],
      [Number.MAX_SAFE_INTEGER, 'ff ff ff ff ff ff ff 0f'],
    ];
    for (const [value, bytes] of cases) {
      const encoded = new ProtoWriter().uintRaw(value).finish();
      expect(Array.from(encoded), String(value)).toEqual(Array.from(hex(bytes)));
      expect(new ProtoReader(encoded).uint()).toBe(value);
    }
  });

  it('writes negative int32 as ten sign-extended bytes and reads them back', () => {
    const minusOne = new ProtoWriter().int32Raw(-1).finish();
    expect(Array.from(minusOne)).toEqual(Array.from(hex('ff ff ff ff ff ff ff ff ff 01')));
    for (const v of [-1, -2, -300, -(2 ** 31), 2 ** 31 - 1, 0]) {
      expect(new ProtoReader(new ProtoWriter().int32Raw(v).finish()).int32()).toBe(v);
    }
    expect(new ProtoReader(hex('fe ff ff ff ff ff ff ff ff 01')).int64()).toBe(-2);
    expect(new ProtoReader(minusOne).int64()).toBe(-1);
  });

  it('rejects bad varints with the byte offset', () => {
    expect(() => new ProtoReader(hex('80 80 80 80 80 80 80 80 80 80 01')).uint()).toThrow(/byte 0: varint longer than 10 bytes/);
    expect(() => new ProtoReader(hex('05 80 80')).uint() && new ProtoReader(hex('05 80 80'), 1).uint()).toThrow(/byte 3: truncated varint \(started at byte 1/);
    expect(() => new ProtoReader(hex('ff ff ff ff ff ff ff ff ff 02')).int32()).toThrow(/varint overflows 64 bits/);
    expect(() => new ProtoReader(hex('ff ff ff ff ff ff ff ff 7f')).uint()).toThrow(/too large for a safe integer/);
  });

  it('reads repeated varints packed or not, as parsers must', () => {
    const values: number[] = [];
    const r = new ProtoReader(hex('08 05  0a 03 01 ac 02  08 07'));
    while (!r.done()) r.repeatedVarint(r.key(), (rr) => rr.int32(), values);
    expect(values).toEqual([5, 1, 300, 7]);
  });

  it('writes packed int32 lists as one length-delimited field', () => {
    expect(Array.from(new ProtoWriter().packedInt32(2, [9, 7, 5]).finish())).toEqual([0x12, 0x03, 0x09, 0x07, 0x05]);
    expect(new ProtoWriter().packedInt32(2, []).length).toBe(0);
  });

  it('refuses field 0, wire types 6 and 7, and groups when skipping', () => {
    expect(() => new ProtoReader(hex('00 01')).key()).toThrow(/byte 0: invalid field number 0/);
    expect(() => new ProtoReader(hex('0e')).key()).toThrow(/invalid wire type 6/);
    const r = new ProtoReader(hex('0b'));
    expect(() => r.skip(r.key())).toThrow(ProtobufError);
  });
});

describe('reference format: hand-built bytes from the .proto definitions', () => {
  it('writes exactly the bytes the reference proto2/proto3 schemas give', () => {
    const { bytes, offsets } = writeReferenceRecord([3, 300], [[hex('41 42'), hex('44')], [hex('43')]]);
    expect(offsets).toEqual(OFFSETS);
    expect(Array.from(bytes)).toEqual(Array.from(RECORD));
    expect(Array.from(writeReferenceIndex([{ name: 'PCR_0.pcr', offsets: OFFSETS }]))).toEqual(Array.from(INDEX));
    // Without a version, as the first reference converter wrote them.
    const noVersion = writeReferenceRecord([3, 300], [[hex('41 42'), hex('44')], [hex('43')]], { version: null });
    expect(Array.from(noVersion.bytes.subarray(0, noVersion.offsets[0]))).toEqual(Array.from(META.subarray(0, 7)));
  });

  it('reads the hand-built record and index', () => {
    expect(parseReferenceIndex(INDEX)).toEqual([{ name: 'PCR_0.pcr', offsets: OFFSETS }]);
    const rec = readReferenceRecordPrefix(RECORD, OFFSETS, 'PCR_0.pcr');
    expect(rec.labels).toEqual([3, 300]);
    expect(rec.progressiveLevels).toBe(2);
    expect(rec.version).toBe(1);
    expect(rec.imageCount).toBe(2);
    expect(rec.completeGroups).toBe(2);
    expect(Array.from(rec.images(0, 1))).toEqual([0x41, 0x42, ...EOI]);
    expect(Array.from(rec.images(0, 2))).toEqual([0x41, 0x42, 0x44, ...EOI]);
    expect(Array.from(rec.images(1, 2))).toEqual([0x43, ...EOI]); // padded with an empty chunk
    expect(rec.chunkOffset(1, 1)).toBe(9 + 6);
    expect(rec.chunk(1, 2).byteLength).toBe(0);
  });

  it('accepts what other writers of the same schemas produce: packed labels, no version, unknown fields', () => {
    // proto3 MetadataRecord packs labels: 0a 03 03 ac 02. An unknown field 9 (varint) and 10 (bytes) are skipped.
    const meta = hex('0a 03 03 ac 02  10 02  48 2a  52 02 ff ff');
    const rec = readReferenceRecordPrefix(cat(meta, GROUP1, GROUP2), [meta.length, 7, 5], 'x.pcr');
    expect(rec.labels).toEqual([3, 300]);
    expect(rec.version).toBeUndefined();
    expect(Array.from(rec.images(0, 2))).toEqual([0x41, 0x42, 0x44, ...EOI]);
    // Negative labels are int32: ten bytes each.
    const neg = writeReferenceRecord([-1, 2], [[hex('41')], [hex('42')]]);
    expect(neg.offsets[0]).toBe(11 + 2 + 2 + 2);
    expect(readReferenceRecordPrefix(neg.bytes, neg.offsets, 'n.pcr').labels).toEqual([-1, 2]);
  });

  it('does not append a second EOI to chunks that already end with one', () => {
    const { bytes, offsets } = writeReferenceRecord([0], [[hex('ff d8 01'), hex('02 ff d9')]]);
    const rec = readReferenceRecordPrefix(bytes, offsets, 'e.pcr');
    expect(Array.from(rec.image(0, 2))).toEqual([0xff, 0xd8, 0x01, 0x02, 0xff, 0xd9]);
    expect(Array.from(rec.image(0, 1))).toEqual([0xff, 0xd8, 0x01, 0xff, 0xd9]);
  });

  it('drops the repeats of each entry the reference converter writes, refuses conflicting ones', () => {
    const other = cat([0x0a, 0x09], ascii('PCR_1.pcr'), [0x12, 0x02, 0x04, 0x06]);
    const repeated = cat(INDEX, INDEX, [0x0a, other.length], other, INDEX);
    expect(parseReferenceIndex(repeated)).toEqual([
      { name: 'PCR_0.pcr', offsets: OFFSETS },
      { name: 'PCR_1.pcr', offsets: [4, 6] },
    ]);
    // Offsets written one per key (unpacked) are read too.
    const unpacked = cat([0x0a, 0x09], ascii('PCR_0.pcr'), [0x10, 0x09, 0x10, 0x07, 0x10, 0x05]);
    expect(parseReferenceIndex(cat([0x0a, unpacked.length], unpacked))).toEqual([{ name: 'PCR_0.pcr', offsets: OFFSETS }]);
    const conflicting = cat([0x0a, 0x09], ascii('PCR_0.pcr'), [0x12, 0x02, 0x04, 0x06]);
    expect(() => parseReferenceIndex(cat(INDEX, [0x0a, conflicting.length], conflicting))).toThrow(
      /record PCR_index\.pb, byte 18: DatasetOffsetsIndex: record "PCR_0\.pcr" appears again with different offsets \(first at byte 0\)/,
    );
  });

  it('gives the prefix lengths to Range-read for each group', () => {
    expect(referenceGroupEnds(OFFSETS)).toEqual([9, 16, 21]);
    expect([0, 1, 2].map((g) => referencePrefixLength(OFFSETS, g))).toEqual([9, 16, 21]);
    expect(() => referencePrefixLength(OFFSETS, 3)).toThrow(RangeError);
  });
});

describe('reference format: bad input names the record and the byte offset', () => {
  const read =
    (bytes: Uint8Array, offsets = OFFSETS) =>
    () =>
      readReferenceRecordPrefix(bytes, offsets, 'PCR_7.pcr');

  it('truncated metadata message', () => {
    expect(read(RECORD.slice(0, 5))).toThrow(/record PCR_7\.pcr, byte 5: truncated inside the MetadataRecord, which ends at byte 9/);
  });

  it('a varint cut by the message boundary, and an overlong varint', () => {
    // offsets[0] = 3 ends the metadata inside the two-byte label 300.
    expect(read(RECORD, [4, 12, 5])).toThrow(/record PCR_7\.pcr, byte 4: MetadataRecord: truncated varint \(started at byte 3, message ends at byte 4\)/);
    const garbage = cat(hex('08 80 80 80 80 80 80 80 80 80 80 01'), META.subarray(5), GROUP1, GROUP2);
    expect(read(garbage, [garbage.length - 12, 7, 5])).toThrow(/byte 1: MetadataRecord: varint longer than 10 bytes/);
  });

  it('wrong wire types', () => {
    // labels (field 1) as a 32-bit value: key 0d.
    const fixed = cat(hex('0d 01 00 00 00'), META.subarray(5), GROUP1, GROUP2);
    expect(read(fixed, [9, 7, 5])).toThrow(/byte 0: MetadataRecord: field 1 has wire type 32-bit, expected varint or packed/);
    // image_bytes (field 1) as a varint in group 2: key 08 at byte 16.
    const badGroup = cat(META, GROUP1, hex('08 44  0a 00'));
    expect(read(badGroup, [9, 7, 4])).toThrow(
      /record PCR_7\.pcr, byte 16: ScanGroup 2: image_bytes \(field 1\) has wire type varint, expected length-delimited/,
    );
    // progressive_levels as bytes.
    const badLevels = cat(hex('08 03 08 ac 02 12 01 02 18 01'), GROUP1, GROUP2);
    expect(read(badLevels, [10, 7, 5])).toThrow(/byte 5: MetadataRecord: progressive_levels \(field 2\) has wire type length-delimited/);
  });

  it('a length that runs past its message', () => {
    const long = cat(META, hex('0a 09 41 42  0a 01 43'), GROUP2);
    expect(read(long)).toThrow(
      /record PCR_7\.pcr, byte 10: ScanGroup 1: length-delimited value of 9 bytes at byte 11 runs past the end of the message at byte 16/,
    );
  });

  it('records that disagree with their metadata or the index', () => {
    expect(read(RECORD, [9, 12])).toThrow(/MetadataRecord says 2 scan groups, the index gives 1/);
    const three = cat(META, hex('0a 02 41 42  0a 01 43  0a 00'), GROUP2);
    expect(read(three, [9, 9, 5])).toThrow(/byte 16: ScanGroup 1: more than 2 image_bytes entries/);
    expect(read(RECORD, [9, 4, 12])).toThrow(/byte 13: ScanGroup 1: 1 image_bytes entries, the MetadataRecord has 2 labels/);
    const noLevels = cat(hex('08 03 08 ac 02'), GROUP1, GROUP2);
    expect(read(noLevels, [5, 7, 5])).toThrow(/byte 5: MetadataRecord: the required field progressive_levels \(2\) is missing/);
    const raw = writeReferenceRecord([1], [[hex('41')]], { version: 2 });
    expect(() => readReferenceRecordPrefix(raw.bytes, raw.offsets, 'r.pcr')).toThrow(/version 2 record \(raw scan bytes\)/);
  });

  it('asking for a group the prefix does not hold', () => {
    const rec = readReferenceRecordPrefix(RECORD.slice(0, 20), OFFSETS, 'PCR_7.pcr');
    expect(rec.completeGroups).toBe(1);
    expect(() => rec.image(0, 2)).toThrow(/record PCR_7\.pcr, byte 20: scan group 2 is not complete in this prefix \(have 1\)/);
  });

  it('garbage and truncated indexes', () => {
    expect(() => parseReferenceIndex(INDEX.slice(0, 10))).toThrow(
      /record PCR_index\.pb, byte 1: DatasetOffsetsIndex: length-delimited value of 16 bytes at byte 2 runs past the end of the message at byte 10/,
    );
    expect(() => parseReferenceIndex(hex('0a 02 00 00'))).toThrow(/record PCR_index\.pb, byte 2: DatasetOffsetsIndex: invalid field number 0/);
    expect(() => parseReferenceIndex(hex('0f'), 'idx.pb')).toThrow(/record idx\.pb, byte 0: DatasetOffsetsIndex: invalid wire type 7/);
    const negative = cat([0x0a, 0x09], ascii('PCR_0.pcr'), [0x12, 0x0b, 0x09], hex('ff ff ff ff ff ff ff ff ff 01'));
    expect(() => parseReferenceIndex(cat([0x0a, negative.length], negative))).toThrow(
      /byte 13: DatasetOffsetsIndex: RecordOffsetsIndex.offsets has a negative length -1/,
    );
    const escaping = cat([0x0a, 0x06], ascii('../x/y'), [0x12, 0x02, 0x01, 0x01]);
    expect(() => parseReferenceIndex(cat([0x0a, escaping.length], escaping))).toThrow(/not a plain file name/);
    const badUtf8 = cat([0x0a, 0x01, 0xff], [0x12, 0x02, 0x01, 0x01]);
    expect(() => parseReferenceIndex(cat([0x0a, badUtf8.length], badUtf8))).toThrow(/byte 3: DatasetOffsetsIndex: string field is not valid UTF-8/);
  });
});

// --- Real JPEGs, converted the way the reference converter does (jpegtran -progressive).
const dir = mkdtempSync(join(tmpdir(), 'bytelab-ref-'));

function progressiveJpeg(width: number, height: number, channels: 1 | 3, seed: number): Uint8Array {
  const px = Buffer.alloc(width * height * channels);
  for (let i = 0; i < px.length; i++) px[i] = (((i * 37 + seed * 11) % 256) + ((i / (width * channels)) | 0) * 5) % 256;
  const src = join(dir, `src-${seed}.${channels === 1 ? 'pgm' : 'ppm'}`);
  const baseline = join(dir, `base-${seed}.jpg`);
  writeFileSync(src, Buffer.concat([Buffer.from(`${channels === 1 ? 'P5' : 'P6'}\n${width} ${height}\n255\n`), px]));
  writeFileSync(baseline, execFileSync('cjpeg', ['-quality', '90', src]));
  return new Uint8Array(execFileSync('jpegtran', ['-copy', 'none', '-optimize', '-progressive', baseline]));
}

describe('reference format: real progressive JPEGs', () => {
  // Three colour images (10 scans) and one grayscale (6 scans, padded like the reference does).
  const jpegs = [progressiveJpeg(24, 20, 3, 1), progressiveJpeg(24, 20, 3, 2), progressiveJpeg(24, 20, 1, 3), progressiveJpeg(24, 20, 3, 4)];
  const channels = [3, 3, 1, 3] as const;
  const scans = jpegs.map((j, i) => splitJpegScans(j, `image ${i}`));
  const labels = [4, 1, 0, 9];
  const { bytes, offsets } = writeReferenceRecord(labels, scans);

  it('splits at the end of each scan like the reference (chunk 1 = SOI..scan 1, later = DHT/SOS..scan), dropping EOI', () => {
    expect(scans.map((s) => s.length)).toEqual([10, 10, 6, 10]);
    scans.forEach((chunks, i) => {
      expect(Array.from(cat(...chunks, EOI))).toEqual(Array.from(jpegs[i]!));
      expect([chunks[0]![0], chunks[0]![1]]).toEqual([0xff, 0xd8]);
      for (const c of chunks.slice(1)) expect([0xc4, 0xda]).toContain(c[1]); // DHT or SOS right after the previous scan
      for (const c of chunks) expect([c[0]]).toEqual([0xff]);
    });
  });

  it('splits our own encoder output into exactly its chunks', () => {
    for (const item of syntheticImages(3, 16, 2)) {
      const chunks = encodeProgressiveScans(item.image, { quality: 90 });
      const split = splitJpegScans(cat(...chunks, EOI));
      expect(split.map((c) => Array.from(c))).toEqual(chunks.map((c) => Array.from(c)));
    }
  });

  it('round-trips every image at every group, from the exact prefix and from the whole file', async () => {
    const turbo = await loadTurboJpegNode();
    expect(offsets).toHaveLength(11);
    expect(referenceGroupEnds(offsets)[10]).toBe(bytes.byteLength);
    const index = parseReferenceIndex(writeReferenceIndex([{ name: 'PCR_0.pcr', offsets }]));
    expect(index).toEqual([{ name: 'PCR_0.pcr', offsets }]);
    const whole = readReferenceRecordPrefix(bytes, index[0]!.offsets, 'PCR_0.pcr');
    expect(whole.labels).toEqual(labels);
    for (let g = 1; g <= 10; g++) {
      const prefix = readReferenceRecordPrefix(bytes.slice(0, referencePrefixLength(offsets, g)), offsets, 'PCR_0.pcr');
      expect(prefix.completeGroups).toBe(g);
      expect(readReferenceRecordPrefix(bytes.slice(0, referencePrefixLength(offsets, g) - 1), offsets, 'PCR_0.pcr').completeGroups).toBe(g - 1);
      for (let i = 0; i < jpegs.length; i++) {
        const expected = Array.from(cat(...scans[i]!.slice(0, g), EOI));
        const jpeg = prefix.images(i, g);
        expect(Array.from(jpeg)).toEqual(expected);
        expect(Array.from(whole.images(i, g))).toEqual(expected);
        const img = turbo.decode(jpeg, channels[i]!);
        expect([img.width, img.height]).toEqual([24, 20]);
      }
    }
    for (let i = 0; i < jpegs.length; i++) {
      expect(Array.from(whole.images(i, 10))).toEqual(Array.from(jpegs[i]!));
      expect(turbo.decode(whole.images(i, 10), channels[i]!).data).toEqual(turbo.decode(jpegs[i]!, channels[i]!).data);
    }
  });

  it('metadata-only prefix: labels without images', () => {
    const meta = readReferenceRecordPrefix(bytes.slice(0, offsets[0]), offsets, 'PCR_0.pcr');
    expect(meta.labels).toEqual(labels);
    expect(meta.completeGroups).toBe(0);
    expect(() => meta.image(0, 1)).toThrow(RecordError);
  });

  it('rejects files that are not complete JPEGs', () => {
    expect(() => splitJpegScans(hex('00 11 22 33'), 'a.jpg')).toThrow(/record a\.jpg, byte 0: not a JPEG/);
    const cut = jpegs[0]!.slice(0, 200);
    expect(() => splitJpegScans(jpegs[0]!.slice(0, jpegs[0]!.length - 10), 'c.jpg')).toThrow(
      /record c\.jpg, byte \d+: truncated inside the entropy-coded data of a scan/,
    );
    expect(() => splitJpegScans(cut, 'b.jpg')).toThrow(
      /record b\.jpg, byte \d+: (truncated|marker 0x[0-9a-f]+ segment of \d+ bytes runs past the end of the file)/,
    );
  });
});
