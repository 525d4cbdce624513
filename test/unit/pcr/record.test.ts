import { describe, expect, it } from 'vitest';
import { encodeProgressiveScans } from '../../../src/jpeg/encoder.js';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import { RecordError, RecordPrefix, readRecordHeader, writeRecord } from '../../../src/pcr/record.js';
import { syntheticImages } from '../../support/fixtures.js';

const items = syntheticImages(12, 16, 4);
const scans = items.map((it) => encodeProgressiveScans(it.image, { quality: 90 }));
const labels = items.map((it) => it.label);
const { bytes, groupEnds } = writeRecord(labels, scans);
const GROUPS = 6;

describe('PCR record', () => {
  it('lays out metadata, then group 1 of every image, then group 2, ...', () => {
    const plain = writeRecord(labels, scans, false);
    expect(plain.groupEnds).toHaveLength(GROUPS + 1);
    expect(plain.groupEnds[GROUPS]).toBe(plain.bytes.byteLength);
    for (let g = 1; g <= GROUPS; g++) {
      const groupBytes = scans.reduce((n, s) => n + s[g - 1]!.byteLength, 0);
      expect(plain.groupEnds[g]! - plain.groupEnds[g - 1]!).toBe(groupBytes);
    }
    // Group 1 of image 0 starts right after the metadata, with the JPEG SOI marker.
    expect([plain.bytes[plain.groupEnds[0]!], plain.bytes[plain.groupEnds[0]! + 1]]).toEqual([0xff, 0xd8]);
  });

  it('stores the header segments every image shares once per record, and gives whole images back', () => {
    const header = readRecordHeader(bytes, 'r').sharedHeader;
    // SOI, APP0 (JFIF), DQT and SOF2 of same-size grayscale images at one quality.
    expect(header.byteLength).toBeGreaterThan(90);
    expect([header[0], header[1]]).toEqual([0xff, 0xd8]);
    const plain = writeRecord(labels, scans, false);
    expect(plain.bytes.byteLength - bytes.byteLength).toBe(items.length * header.byteLength - header.byteLength - 4);
    for (let g = 1; g <= GROUPS; g++)
      expect(groupEnds[g]! - groupEnds[g - 1]!).toBe(scans.reduce((n, s) => n + s[g - 1]!.byteLength, 0) - (g === 1 ? items.length * header.byteLength : 0));
    const prefix = new RecordPrefix(bytes, 'r');
    for (let i = 0; i < items.length; i++) for (let g = 1; g <= GROUPS; g++) expect(Array.from(prefix.chunk(i, g))).toEqual(Array.from(scans[i]![g - 1]!));
  });

  it('shares only the segments that agree when images differ in size (SOI, APP0, DQT, not SOF)', () => {
    const other = encodeProgressiveScans({ width: 20, height: 12, channels: 1, data: new Uint8Array(240).fill(77) }, { quality: 90 });
    const mixed = writeRecord([0, 1], [scans[0]!, other]);
    const shared = readRecordHeader(mixed.bytes, 'm').sharedHeader;
    expect(shared.byteLength).toBeGreaterThan(60);
    expect(shared.byteLength).toBeLessThan(readRecordHeader(bytes, 'r').sharedHeader.byteLength);
    expect(Array.from(shared)).toEqual(Array.from(other[0]!.subarray(0, shared.byteLength)));
    expect(other[0]![shared.byteLength + 1]).toBe(0xc2); // the next segment is the frame header, which differs
    expect(Array.from(new RecordPrefix(mixed.bytes, 'm').image(1, GROUPS))).toEqual([...other.flatMap((c) => Array.from(c)), 0xff, 0xd9]);
  });

  it('round-trips labels and chunks through the header', () => {
    const header = readRecordHeader(bytes, 'r');
    expect(Array.from(header.labels)).toEqual(labels);
    expect(header.groupEnds).toEqual(groupEnds);
    expect(header.images).toBe(12);
  });

  it('gives every image at every fidelity from the matching prefix, and nothing more', async () => {
    const turbo = await loadTurboJpegNode();
    const full = new RecordPrefix(bytes, 'r');
    for (let g = 1; g <= GROUPS; g++) {
      const prefix = new RecordPrefix(bytes.slice(0, groupEnds[g]), 'r');
      expect(prefix.completeGroups).toBe(g);
      if (g < GROUPS) expect(() => prefix.image(0, g + 1)).toThrow(RecordError);
      for (let i = 0; i < items.length; i++) {
        const jpeg = prefix.image(i, g);
        const expected = [...scans[i]!.slice(0, g).flatMap((c) => Array.from(c)), 0xff, 0xd9];
        expect(Array.from(jpeg)).toEqual(expected);
        expect(Array.from(full.image(i, g))).toEqual(expected);
        const img = turbo.decode(jpeg, 1);
        expect([img.width, img.height]).toEqual([16, 16]);
      }
    }
  });

  it('a prefix one byte short of a group has only the groups before it', () => {
    for (let g = 1; g <= GROUPS; g++) {
      expect(new RecordPrefix(bytes.slice(0, groupEnds[g]! - 1), 'r').completeGroups).toBe(g - 1);
    }
  });

  it('rejects bad input with the record name and byte offset', () => {
    const bad = bytes.slice();
    bad[0] = 0x00;
    expect(() => readRecordHeader(bad, 'train-00003.pcr')).toThrow(/record train-00003\.pcr, byte 0: bad magic/);
    expect(() => readRecordHeader(bytes.slice(0, 10), 'x.pcr')).toThrow(/record x\.pcr, byte 10: only 10 bytes/);
    expect(() => readRecordHeader(bytes.slice(0, groupEnds[0]! - 4), 'x.pcr')).toThrow(/truncated inside the metadata block/);
    const lying = bytes.slice();
    new DataView(lying.buffer).setUint32(8, 99999, true); // image count that disagrees with the metadata size
    expect(() => readRecordHeader(lying, 'x.pcr')).toThrow(/byte 4: inconsistent header/);
  });

  it('refuses images whose scan counts differ, so groups cannot misalign', () => {
    expect(() => writeRecord([0, 1], [scans[0]!, scans[1]!.slice(0, 5)])).toThrow(/would not line up/);
  });
});
