// `bytelab pcr export --format reference` and `bytelab pcr import --format reference`
// as a user runs them: export is exact (every image at every scan group comes back
// byte for byte through the reference reader), import is lossless (the top group
// decodes to the same pixels), and a reference dataset made the way the reference
// converter makes one (jpegtran -progressive, ragged scan scripts padded with empty
// chunks, index entries repeated per scan group) imports with its bad parts named.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { transcodeToProgressive } from '../../../src/jpeg/transcode.js';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import type { TurboJpeg } from '../../../src/jpeg/turbo.js';
import { buildSplit, makeManifest } from '../../../src/pcr/build.js';
import { validateManifest, type PcrManifest } from '../../../src/pcr/manifest.js';
import { RecordPrefix } from '../../../src/pcr/record.js';
import {
  parseReferenceIndex,
  readReferenceRecordPrefix,
  referencePrefixLength,
  splitJpegScans,
  writeReferenceIndex,
  writeReferenceRecord,
} from '../../../src/pcr/reference.js';
import { buildFixture } from '../../support/fixtures.js';

const work = mkdtempSync(join(tmpdir(), 'bytelab-ref-cli-'));
const bytelab = (...args: string[]) => spawnSync('node', ['bin/bytelab.mjs', ...args], { encoding: 'utf8' });
let turbo: TurboJpeg;

/** A PPM or PGM with some structure (so JPEG has something to code) and some noise. */
function netpbm(w: number, h: number, channels: 1 | 3, seed: number): string {
  const px = Buffer.alloc(w * h * channels);
  let s = seed;
  for (let k = 0; k < px.length; k++) {
    s = (s * 1103515245 + 12345) >>> 0;
    const x = Math.floor(k / channels) % w;
    const y = Math.floor(k / channels / w);
    px[k] = (x * 9 + y * 5 + (k % channels) * 70 + (s >>> 27)) % 256;
  }
  const path = join(work, `img-${seed}.${channels === 3 ? 'ppm' : 'pgm'}`);
  writeFileSync(path, Buffer.concat([Buffer.from(`${channels === 3 ? 'P6' : 'P5'}\n${w} ${h}\n255\n`), px]));
  return path;
}

const cjpeg = (path: string, ...args: string[]) => new Uint8Array(execFileSync('cjpeg', [...args, path]));
/** What the reference converter does to every image before cutting it into scans. */
function jpegtranProgressive(jpeg: Uint8Array): Uint8Array {
  const path = join(work, 'in.jpg');
  writeFileSync(path, jpeg);
  return new Uint8Array(execFileSync('jpegtran', ['-copy', 'none', '-optimize', '-progressive', path]));
}

/** Writes an in-memory dataset (manifest.json + records) to a folder. */
function writeDataset(dir: string, files: Map<string, Uint8Array>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
}

function loadManifest(dir: string): PcrManifest {
  return validateManifest(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')), dir);
}

/** Every image of a split in order: (record, index in record). */
function ourImages(dir: string, m: PcrManifest, split: string): { record: RecordPrefix; i: number }[] {
  return m.splits[split]!.records.flatMap((r) => {
    const record = new RecordPrefix(new Uint8Array(readFileSync(join(dir, r.file))), r.file);
    return Array.from({ length: record.header.images }, (_, i) => ({ record, i }));
  });
}

const same = (a: Uint8Array, b: Uint8Array) => a.byteLength === b.byteLength && Buffer.from(a).equals(Buffer.from(b));

// Our datasets: a grayscale one of fixed size (two splits, several records) and a
// colour one whose images keep their own sizes (one was grayscale, widened).
const gray = join(work, 'gray');
const colour = join(work, 'colour');

beforeAll(async () => {
  turbo = await loadTurboJpegNode();
  writeDataset(gray, (await buildFixture({ train: 45, test: 12, recordSize: 20 })).files);
  const files = new Map<string, Uint8Array>();
  const sizes: [number, number, 1 | 3][] = [
    [40, 24, 3],
    [17, 33, 3],
    [64, 48, 1],
    [9, 12, 3],
    [31, 31, 3],
  ];
  const items = sizes.map(([w, h, c], i) => ({
    scans: transcodeToProgressive(cjpeg(netpbm(w, h, c, 100 + i), '-quality', String(70 + 5 * i)), { colour: 'ycbcr' }).chunks,
    label: i % 3,
  }));
  const records = await buildSplit('train', items, 3, 2, async (name, bytes) => void files.set(name, bytes));
  const manifest = makeManifest({
    name: 'colour',
    classes: ['a', 'b', 'c'],
    image: { width: 32, height: 32, channels: 3 },
    quality: 90,
    variableSize: true,
    splits: { train: { records } },
  });
  files.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest)));
  writeDataset(colour, files);
});

describe('bytelab pcr export --format reference', () => {
  for (const [label, dir] of [
    ['grayscale, two splits', gray],
    ['colour, own sizes', colour],
  ] as const) {
    it(`${label}: one PCR_<k>.pcr per record and a PCR_index.pb per split; every image at every group byte-identical through the reference reader`, () => {
      const out = `${dir}-ref`;
      const r = bytelab('pcr', 'export', dir, '--format', 'reference', '--out', out);
      expect(r.status, r.stderr).toBe(0);
      const m = loadManifest(dir);
      expect(readdirSync(out).sort()).toEqual(Object.keys(m.splits).sort());
      let compared = 0;
      for (const [split, entry] of Object.entries(m.splits)) {
        const names = entry.records.map((_, k) => `PCR_${k}.pcr`);
        expect(readdirSync(join(out, split)).sort()).toEqual([...names, 'PCR_index.pb'].sort());
        const index = parseReferenceIndex(new Uint8Array(readFileSync(join(out, split, 'PCR_index.pb'))));
        expect(index.map((e) => e.name)).toEqual(names);
        entry.records.forEach((ours, k) => {
          const file = new Uint8Array(readFileSync(join(out, split, names[k]!)));
          const offsets = index[k]!.offsets;
          expect(offsets).toHaveLength(m.scanGroups + 1);
          expect(offsets.reduce((a, b) => a + b, 0)).toBe(file.byteLength);
          const mine = new RecordPrefix(new Uint8Array(readFileSync(join(dir, ours.file))), ours.file);
          const full = readReferenceRecordPrefix(file, offsets, names[k]!);
          expect(full.labels).toEqual(Array.from(mine.header.labels));
          expect(full.progressiveLevels).toBe(m.scanGroups);
          expect(full.version).toBe(1);
          for (let g = 1; g <= m.scanGroups; g++) {
            // What a reader of group g fetches: exactly the prefix the index gives.
            const prefix = readReferenceRecordPrefix(file.subarray(0, referencePrefixLength(offsets, g)), offsets, names[k]!);
            expect(prefix.completeGroups).toBe(g);
            for (let i = 0; i < mine.header.images; i++) {
              expect(same(prefix.image(i, g), mine.image(i, g)), `${split} record ${k} image ${i} group ${g}`).toBe(true);
              compared++;
            }
          }
        });
      }
      expect(compared).toBe(Object.values(m.splits).reduce((n, s) => n + s.records.reduce((a, r) => a + r.images, 0), 0) * m.scanGroups);
      expect(r.stdout).toMatch(new RegExp(`PCR_index\\.pb\\?size=${m.image.width}x${m.image.height}&channels=${m.image.channels}&classes=`));
    });
  }

  it('refuses a missing or unknown --format', () => {
    expect(bytelab('pcr', 'export', gray, '--out', join(work, 'nf')).stderr).toMatch(/export needs --format reference/);
    expect(bytelab('pcr', 'export', gray, '--format', 'tfrecord', '--out', join(work, 'nf')).stderr).toMatch(/--format tfrecord: unknown format \(reference\)/);
    expect(existsSync(join(work, 'nf'))).toBe(false);
  });
});

describe('bytelab pcr import --format reference', () => {
  for (const [label, dir] of [
    ['grayscale, two splits', gray],
    ['colour, own sizes', colour],
  ] as const) {
    it(`${label}: export then import decodes to the same pixels at the top group`, () => {
      const back = `${dir}-back`;
      const r = bytelab('pcr', 'import', `${dir}-ref`, '--format', 'reference', '--out', back);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      const original = loadManifest(dir);
      const imported = loadManifest(back);
      expect(Object.keys(imported.splits)).toEqual(Object.keys(original.splits));
      expect(imported.image).toEqual({ width: 64, height: 64, channels: original.image.channels }); // --size default; colour detected
      expect(imported.variableSize).toBe(true);
      expect(imported.scanGroups).toBe(original.scanGroups);
      expect(imported.classes).toEqual(['0', '1', '2', '3'].slice(0, original.classes.length)); // '0'..max label
      expect(imported.msssim).toHaveLength(imported.scanGroups);
      const ch = original.image.channels;
      for (const split of Object.keys(original.splits)) {
        const a = ourImages(dir, original, split);
        const b = ourImages(back, imported, split);
        expect(b).toHaveLength(a.length);
        a.forEach(({ record, i }, k) => {
          const { record: rb, i: ib } = b[k]!;
          expect(rb.header.labels[ib]).toBe(record.header.labels[i]);
          const da = turbo.decode(record.image(i, original.scanGroups), ch);
          const db = turbo.decode(rb.image(ib, imported.scanGroups), ch);
          expect([db.width, db.height]).toEqual([da.width, da.height]);
          expect(same(db.data, da.data), `${split} image ${k}`).toBe(true);
        });
      }
    });
  }

  describe('a reference dataset made as the reference converter makes it', () => {
    const ref = join(work, 'handmade');
    // Per-image scan scripts differ: jpegtran's 10-scan colour and 6-scan gray scripts,
    // a 4:4:4 file, and a baseline file of one scan; records are padded to their longest script.
    const originals: { jpeg: Uint8Array; label: number; scans: number }[] = [];
    let truncatedAt = 0;

    beforeAll(() => {
      const make = (w: number, h: number, c: 1 | 3, seed: number, label: number, how: 'progressive' | 'baseline', ...cjpegArgs: string[]) => {
        const base = cjpeg(netpbm(w, h, c, seed), ...cjpegArgs);
        const jpeg = how === 'progressive' ? jpegtranProgressive(base) : base;
        const scans = splitJpegScans(jpeg);
        originals.push({ jpeg, label, scans: scans.length });
        return scans;
      };
      const r0: Uint8Array[][] = [
        make(40, 24, 3, 1, 0, 'progressive'),
        make(17, 33, 1, 2, 1, 'progressive'),
        make(23, 9, 3, 3, 2, 'progressive', '-sample', '1x1'),
        make(30, 30, 3, 4, 1, 'baseline'),
      ];
      const bad = [new TextEncoder().encode('not a jpeg'), new Uint8Array(0)]; // image 4 of record 0
      const r1: Uint8Array[][] = [make(50, 20, 1, 5, 2, 'progressive'), make(8, 8, 1, 6, 0, 'progressive'), make(33, 17, 3, 7, 2, 'progressive')];
      const negative = make(12, 12, 1, 8, -1, 'progressive'); // record 1, image 3: a label the classes cannot hold
      originals.pop();
      const rec0 = writeReferenceRecord([0, 1, 2, 1, 0], [...r0, bad]);
      const rec1 = writeReferenceRecord([2, 0, 2, -1], [...r1, negative]);
      const rec2 = writeReferenceRecord([0, 1], [make(20, 20, 3, 9, 0, 'progressive'), make(21, 21, 3, 10, 1, 'progressive')]);
      originals.splice(-2); // record 2 is cut short below: its images are not expected back
      truncatedAt = referencePrefixLength(rec2.offsets, 2) + 3;
      mkdirSync(join(ref, 'train'), { recursive: true });
      writeFileSync(join(ref, 'train', 'PCR_0.pcr'), rec0.bytes);
      writeFileSync(join(ref, 'train', 'PCR_1.pcr'), rec1.bytes);
      writeFileSync(join(ref, 'train', 'PCR_2.pcr'), rec2.bytes.subarray(0, truncatedAt));
      // The reference converter writes each record's index entry once per scan group.
      const entries = [rec0, rec1, rec2].map((r, k) => ({ name: `PCR_${k}.pcr`, offsets: r.offsets }));
      const index = entries.flatMap((e) => Array.from({ length: e.offsets.length - 1 }, () => writeReferenceIndex([e])));
      writeFileSync(join(ref, 'train', 'PCR_index.pb'), Buffer.concat(index));
    });

    it('the hand-made records really are ragged and padded', () => {
      expect(originals.map((o) => o.scans)).toEqual([10, 6, 10, 1, 6, 6, 10]);
      const index = parseReferenceIndex(new Uint8Array(readFileSync(join(ref, 'train', 'PCR_index.pb'))));
      expect(index.map((e) => e.offsets.length - 1)).toEqual([10, 10, 10]);
      const rec0 = readReferenceRecordPrefix(new Uint8Array(readFileSync(join(ref, 'train', 'PCR_0.pcr'))), index[0]!.offsets, 'PCR_0.pcr');
      expect(rec0.chunk(1, 7).byteLength).toBe(0); // the gray image's padding
      expect(rec0.chunk(3, 2).byteLength).toBe(0); // the baseline image's padding
    });

    it('imports every good image losslessly, names the bad image, the bad label and the truncated record, and goes on', () => {
      const out = join(work, 'handmade-back');
      const r = bytelab('pcr', 'import', ref, '--format', 'reference', '--size', '24x24', '--classes', 'cat,dog,bird', '--record-size', '3', '--out', out);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/skipped train\/PCR_0\.pcr image 4: .*\(chunk 1 at byte \d+\)/);
      expect(r.stderr).toMatch(/skipped train\/PCR_1\.pcr image 3: label -1 is not one of the 3 classes given by --classes/);
      expect(r.stderr).toMatch(new RegExp(`skipped train/PCR_2\\.pcr: byte ${truncatedAt}: truncated: scan group 3 of 10 ends at byte \\d+`));
      expect(r.stdout).toMatch(/train: 7 images in 3 records; YCbCr \(10 scan groups\), 3 classes; 2 image\(s\) and 1 record\(s\) left out/);
      const m = loadManifest(out);
      expect(m.classes).toEqual(['cat', 'dog', 'bird']);
      expect(m.image).toEqual({ width: 24, height: 24, channels: 3 });
      expect(m.variableSize).toBe(true);
      const images = ourImages(out, m, 'train');
      expect(images).toHaveLength(originals.length);
      images.forEach(({ record, i }, k) => {
        const o = originals[k]!;
        expect(record.header.labels[i], `image ${k}`).toBe(o.label);
        // Lossless whatever the image's own script: gray ones widened, the baseline one made progressive.
        const want = turbo.decode(o.jpeg, 3);
        const got = turbo.decode(record.image(i, 10), 3);
        expect([got.width, got.height]).toEqual([want.width, want.height]);
        expect(same(got.data, want.data), `image ${k}`).toBe(true);
      });
    });

    it('--channels 1 keeps the gray images and names each colour one (that would need a lossy re-encode)', () => {
      const out = join(work, 'handmade-gray');
      const r = bytelab('pcr', 'import', ref, '--format', 'reference', '--channels', '1', '--out', out);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr.match(/colour JPEG in a grayscale dataset/g)).toHaveLength(4);
      expect(r.stderr).toMatch(/skipped train\/PCR_1\.pcr image 3: label -1 is not one of the 3 classes\n/); // classes '0'..'2' from the labels
      const m = loadManifest(out);
      expect(m.scanGroups).toBe(6);
      expect(m.classes).toEqual(['0', '1', '2']);
      expect(ourImages(out, m, 'train')).toHaveLength(3);
    });

    it('says what is wrong with bad arguments and a folder without an index', () => {
      expect(bytelab('pcr', 'import', ref, '--out', join(work, 'x')).stderr).toMatch(/import needs --format reference/);
      expect(bytelab('pcr', 'import', ref, '--format', 'reference', '--channels', '2', '--out', join(work, 'x')).stderr).toMatch(
        /--channels must be 1, 3 or auto/,
      );
      expect(bytelab('pcr', 'import', ref, '--format', 'reference', '--size', 'big', '--out', join(work, 'x')).stderr).toMatch(/--size must look like 64x64/);
      expect(bytelab('pcr', 'import', work, '--format', 'reference', '--out', join(work, 'x')).stderr).toMatch(
        /no PCR_index\.pb, neither in the folder nor in a subfolder per split/,
      );
      expect(bytelab('pcr', 'frobnicate').stderr).toMatch(/unknown verb "frobnicate" \(.*\bexport, import\b/);
      expect(existsSync(join(work, 'x', 'manifest.json'))).toBe(false);
    });
  });
});
