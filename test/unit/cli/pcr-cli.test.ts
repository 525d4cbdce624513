// The `bytelab pcr` command as a user runs it: build from idx files and from a
// folder, inspect, extract, and every extracted JPEG decoded by native djpeg.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encode as encodePng } from 'fast-png';
import { gzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { syntheticImages } from '../../support/fixtures.js';

const work = mkdtempSync(join(tmpdir(), 'bytelab-cli-'));
const bytelab = (...args: string[]) => spawnSync('node', ['bin/bytelab.mjs', ...args], { encoding: 'utf8' });

/** Writes synthetic images and labels as gzipped idx files, as (Fashion-)MNIST ships them. */
function writeIdx(n: number): { images: string; labels: string } {
  const items = syntheticImages(n, 28, 10);
  const img = new Uint8Array(16 + n * 784);
  const view = new DataView(img.buffer);
  view.setUint32(0, 0x803);
  view.setUint32(4, n);
  view.setUint32(8, 28);
  view.setUint32(12, 28);
  items.forEach((it, i) => img.set(it.image.data, 16 + i * 784));
  const lab = new Uint8Array(8 + n);
  new DataView(lab.buffer).setUint32(0, 0x801);
  new DataView(lab.buffer).setUint32(4, n);
  items.forEach((it, i) => (lab[8 + i] = it.label));
  const paths = { images: join(work, 'images.gz'), labels: join(work, 'labels.gz') };
  writeFileSync(paths.images, gzipSync(img));
  writeFileSync(paths.labels, gzipSync(lab));
  return paths;
}

describe('bytelab pcr', () => {
  const idx = writeIdx(50);
  const out = join(work, 'ds');

  it('builds from idx files into records of --record-size', () => {
    const r = bytelab('pcr', 'build', '--idx', idx.images, '--labels', idx.labels, '--limit', '45', '--record-size', '20', '--out', out);
    expect(r.status, r.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.splits.train.records.map((x: { images: number }) => x.images)).toEqual([20, 20, 5]);
    expect(manifest.scanGroups).toBe(6);
  });

  it('inspect --json reports images, groups and the bytes to read per group', () => {
    const r = bytelab('pcr', 'inspect', out, '--json');
    expect(r.status, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.images).toBe(45);
    expect(s.scanGroups).toBe(6);
    expect(s.groups).toHaveLength(6);
    const bytes = s.groups.map((g: { bytes: number }) => g.bytes);
    expect([...bytes].sort((a, b) => a - b)).toEqual(bytes);
    expect(bytes[5]).toBe(
      readdirSync(out)
        .filter((f) => f.endsWith('.pcr'))
        .reduce((n, f) => n + readFileSync(join(out, f)).byteLength, 0),
    );
    expect(s.groups[0].fractionOfFull).toBeLessThan(0.6);
  });

  for (const group of [1, 3, 6]) {
    it(`extract --group ${group} writes INDEX_LABEL.jpg files that djpeg decodes`, () => {
      const dir = join(work, `g${group}`);
      const r = bytelab('pcr', 'extract', out, '--group', String(group), '--out', dir);
      expect(r.status, r.stderr).toBe(0);
      const files = readdirSync(dir).sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
      expect(files).toHaveLength(45);
      expect(files[3]).toBe('3_3.jpg'); // synthetic label = index % 10
      for (const f of files) {
        const decoded = spawnSync('djpeg', ['-pnm', join(dir, f)]);
        expect(decoded.status).toBe(0);
        expect(decoded.stderr.toString()).toBe(''); // no "corrupt data" warnings
        expect(decoded.stdout.subarray(0, 9).toString()).toBe('P5\n28 28\n');
      }
    });
  }

  it('builds from a mixed folder: JPEGs transcoded losslessly, gray widened, RGB-coded re-encoded, bad files named and left out', () => {
    const root = join(work, 'folder');
    for (const cls of ['cats', 'dogs']) mkdirSync(join(root, cls), { recursive: true });
    const ppm = join(work, 'x.ppm');
    const pgm = join(work, 'x.pgm');
    const originals: string[] = [];
    for (let i = 0; i < 4; i++) {
      // Odd sizes and different subsamplings: each JPEG keeps its own size in the records.
      const [w, h] = [40 + 7 * i, 30 + 3 * i];
      const px = Buffer.from(Array.from({ length: w * h * 3 }, (_, k) => (k * 13 + i * 50 + ((k / w) | 0) * 3) % 256));
      writeFileSync(ppm, Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), px]));
      const path = join(root, i % 2 ? 'cats' : 'dogs', `${i}.jpg`);
      writeFileSync(path, execFileSync('cjpeg', ['-quality', '80', '-sample', i % 2 ? '2x2' : '1x1', ...(i === 3 ? ['-progressive'] : []), ppm]));
      originals.push(path);
    }
    writeFileSync(pgm, Buffer.concat([Buffer.from('P5\n20 20\n255\n'), Buffer.alloc(400, 90)]));
    writeFileSync(join(root, 'cats', 'gray.jpg'), execFileSync('cjpeg', [pgm]));
    writeFileSync(ppm, Buffer.concat([Buffer.from('P6\n16 16\n255\n'), Buffer.alloc(768, 200)]));
    writeFileSync(join(root, 'dogs', 'rgb.jpg'), execFileSync('cjpeg', ['-rgb', ppm]));
    const rgba = new Uint8Array(20 * 20 * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 7) % 256));
    writeFileSync(join(root, 'dogs', 'alpha.png'), encodePng({ width: 20, height: 20, data: rgba, channels: 4 }));
    writeFileSync(join(root, 'cats', 'broken.jpg'), Buffer.from('not a jpeg at all'));
    writeFileSync(join(root, 'dogs', 'empty.png'), Buffer.alloc(0));
    writeFileSync(join(root, 'cats', 'arith.jpg'), execFileSync('cjpeg', ['-arithmetic', pgm]));
    // Read as what they are, whatever their names say (a JPEG named .png was refused as a broken PNG).
    writeFileSync(join(root, 'cats', 'jpeg-named.png'), execFileSync('cjpeg', [ppm]));
    writeFileSync(join(root, 'dogs', 'png-named.jpg'), encodePng({ width: 20, height: 20, data: rgba, channels: 4 }));
    // A folder below a class folder holds more of that class.
    mkdirSync(join(root, 'cats', 'kittens'));
    writeFileSync(join(root, 'cats', 'kittens', 'k.jpg'), execFileSync('cjpeg', [ppm]));

    const out = join(work, 'fds');
    const r = bytelab('pcr', 'build', '--folder', root, '--size', '32x32', '--test-fraction', '0', '--out', out);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/converted .*gray\.jpg: .*widened/i);
    expect(r.stderr).toMatch(/converted .*rgb\.jpg: re-encoded at quality 90 \(lossy\): RGB-coded/);
    // Said as what they are (before: both "not a JPEG: no SOI marker at byte 0").
    expect(r.stderr).toMatch(/skipped .*broken\.jpg: .*neither a PNG nor a JPEG: it starts 6e 6f 74 20/);
    expect(r.stderr).toMatch(/skipped .*empty\.png: .*the file is empty/);
    expect(r.stderr).toMatch(/skipped .*arith\.jpg: .*arithmetic/i);
    expect(r.stderr).toMatch(/colour mode: YCbCr \(10 scan groups\); 2 file\(s\) converted, 3 file\(s\) left out/);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(manifest.classes).toEqual(['cats', 'dogs']);
    expect(manifest.image).toEqual({ width: 32, height: 32, channels: 3 });
    expect(manifest.variableSize).toBe(true);
    expect(manifest.scanGroups).toBe(10);
    expect(manifest.splits.train.records[0].images).toBe(10);
    expect(r.stderr).not.toMatch(/-named/);

    // Lossless: every original JPEG comes back pixel-identical at the top scan group.
    const extracted = join(work, 'fds-x');
    expect(bytelab('pcr', 'extract', out, '--group', '10', '--out', extracted).status).toBe(0);
    const decodedOriginals = new Set(originals.map((p) => execFileSync('djpeg', ['-pnm', p]).toString('base64')));
    const decodedExtracted = readdirSync(extracted).map((f) => execFileSync('djpeg', ['-pnm', join(extracted, f)]).toString('base64'));
    expect(decodedExtracted.filter((d) => decodedOriginals.has(d))).toHaveLength(4);
  });

  it('says what is wrong with bad arguments and bad files', () => {
    expect(bytelab('pcr', 'build', '--out', join(work, 'x')).stderr).toMatch(/give --idx IMAGES --labels LABELS, or --folder DIR/);
    const junk = join(work, 'junk.gz');
    writeFileSync(junk, gzipSync(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])));
    const r = bytelab('pcr', 'build', '--idx', junk, '--labels', idx.labels, '--out', join(work, 'y'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/junk\.gz: not an unsigned-byte idx file \(bad magic at byte 0\)/);
    expect(existsSync(join(work, 'y', 'manifest.json'))).toBe(false);
    expect(bytelab('pcr', 'extract', out, '--group', '9', '--out', join(work, 'z')).stderr).toMatch(/the dataset has 6 scan groups/);
  });
});

// ------------------------------------------------------------------ bundled

describe('the bundled default dataset', () => {
  const dir = 'public/datasets/fashion-mnist-mini';
  // npm test installs the package (scripts/setup.mjs); run alone on a machine without it, the case says why it is skipped.
  const source = '/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz';
  it.skipIf(!existsSync(source))(
    `${dir} is what node scripts/datasets.mjs mini builds from Debian's dataset-fashion-mnist, byte for byte (needs ${source}: npm test installs it)`,
    () => {
      const out = join(work, 'mini');
      const r = spawnSync('node', ['scripts/datasets.mjs', 'mini', '--out', out], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      // The bundled folder is the build's files and its README (where the data comes from, its licence).
      expect([...readdirSync(out), 'README.md'].sort()).toEqual(readdirSync(dir).sort());
      for (const f of readdirSync(out)) expect(readFileSync(join(out, f)).equals(readFileSync(join(dir, f))), f).toBe(true);
    },
    180_000,
  );
});
