// The lab reading the PCR reference implementation's format directly
// (src/pipeline/reference-records.ts), end to end in Node: a real HTTP server
// with Range requests, records written by the reference-format writer, the real
// wasm decoder. What goes over the wire is checked against
// referencePrefixLength(offsets, g); bad records are named and the rest trains.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { splitToReference } from '../../../src/cli/pcr-reference.js';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import { resize } from '../../../src/pcr/pixels.js';
import {
  parseReferenceIndex,
  readReferenceRecordPrefix,
  referencePrefixLength,
  splitJpegScans,
  writeReferenceIndex,
  writeReferenceRecord,
  type ReferenceIndexEntry,
} from '../../../src/pcr/reference.js';
import type { Batch, ImageBatch, PipelineEvent, PipelineOptions } from '../../../src/pipeline/api.js';
import { ImagePipeline } from '../../../src/pipeline/image-pipeline.js';
import { pcrRecords } from '../../../src/pipeline/pcr-records.js';
import { isReferenceIndexUrl, referenceRecords, referenceSplitUrl, referenceUrlOptions } from '../../../src/pipeline/reference-records.js';
import { buildFixture } from '../../support/fixtures.js';
import { startTestServer, type TestServer } from '../../support/http-server.js';
import { testPipelineOptions } from '../../support/pipeline-options.js';

const tmp = mkdtempSync(join(tmpdir(), 'bytelab-refpipe-'));
const RECORD_SIZE = 20;
const fixture = await buildFixture({ train: 60, test: 20, recordSize: RECORD_SIZE }); // train: 3 records of 20; 16x16 gray, 4 classes

/** The fixture as the reference format: train/PCR_<k>.pcr + train/PCR_index.pb, the same for test; and our manifest beside it. */
function referenceFiles(): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  for (const [split, entry] of Object.entries(fixture.manifest.splits)) {
    const ref = splitToReference(entry.records.map((r) => ({ file: r.file, bytes: fixture.files.get(r.file)! })));
    for (const [name, bytes] of ref) files.set(`${split}/${name}`, bytes);
  }
  for (const [name, bytes] of fixture.files) files.set(`ours/${name}`, bytes);
  return files;
}
const base = referenceFiles();
const index: ReferenceIndexEntry[] = parseReferenceIndex(base.get('train/PCR_index.pb')!);
const prefixLength = (k: number, g: number) => referencePrefixLength(index[k]!.offsets, g);

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(mutate?: (files: Map<string, Uint8Array>) => void, files = base): Promise<TestServer> {
  const copy = new Map(files);
  mutate?.(copy);
  const server = await startTestServer(copy);
  servers.push(server);
  return server;
}

function imageBatch(b: Batch): ImageBatch {
  if (b.kind !== 'image') throw new Error(`expected an image batch, got ${b.kind}`);
  return b;
}

function options(server: TestServer, over: Partial<PipelineOptions> = {}, query = ''): PipelineOptions {
  return testPipelineOptions(`${server.url}train/PCR_index.pb${query}`, over);
}

async function drain(server: TestServer, over: Partial<PipelineOptions> = {}, onBatch?: (p: ImagePipeline, i: number) => void, query = '') {
  const events: PipelineEvent[] = [];
  const p = new ImagePipeline(referenceRecords, await loadTurboJpegNode(), (e) => events.push(e));
  const info = await p.open(options(server, over, query));
  const labels: number[] = [];
  const batches: ImageBatch[] = [];
  for (let i = 0; ; i++) {
    const next = await p.next();
    if (!next) break;
    const b = imageBatch(next);
    expect(b.x.length).toBe(b.size * info.inputShape.reduce((a, c) => a * c, 1));
    labels.push(...b.y);
    batches.push(b);
    onBatch?.(p, i);
  }
  const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
  const fetches = events.flatMap((e) => (e.type === 'fetch' ? [e] : []));
  return { p, info, labels, batches, warnings, fetches };
}

const recordRequests = (server: TestServer) => server.requests.filter((r) => r.path.endsWith('.pcr'));

describe('reference pipeline', () => {
  it(
    'opens on PCR_index.pb with one small Range request for the first record, then one Range request per record of exactly referencePrefixLength(offsets, ' +
      'g)',
    async () => {
      const server = await serve();
      const { info, labels, warnings, p, fetches } = await drain(server);
      expect(warnings).toEqual([]);
      expect(labels).toHaveLength(60);
      expect(info).toMatchObject({
        kind: 'image',
        name: 'train',
        classes: ['0', '1', '2', '3'],
        inputShape: [16, 16, 1],
        image: { width: 16, height: 16, channels: 1 },
        fidelityLevels: 6,
        examples: 60,
      });
      expect(info.bytesPerLevel).toEqual([1, 2, 3, 4, 5, 6].map((g) => [0, 1, 2].reduce((n, k) => n + prefixLength(k, g), 0)));
      // The index whole (no Range), then the first record's metadata and the head of its first image.
      expect(server.requests[0]).toMatchObject({ path: 'train/PCR_index.pb', range: undefined, status: 200 });
      const requests = recordRequests(server);
      expect(requests).toHaveLength(4);
      expect(requests[0]).toMatchObject({
        path: 'train/PCR_0.pcr',
        range: `bytes=0-${Math.min(prefixLength(0, 1), index[0]!.offsets[0]! + 2048) - 1}`,
        status: 206,
      });
      expect(requests.slice(1).map((r) => [r.path, r.range, r.status])).toEqual(
        [0, 1, 2].map((k) => [`train/PCR_${k}.pcr`, `bytes=0-${prefixLength(k, 6) - 1}`, 206]),
      );
      expect(fetches.map((f) => f.requested)).toEqual([0, 1, 2].map((k) => prefixLength(k, 6)));
      expect(fetches.map((f) => f.examples)).toEqual([20, 20, 20]);
      expect(p.stats.bytesFetched).toBe([0, 1, 2].reduce((n, k) => n + prefixLength(k, 6), 0));
    },
  );

  it('yields the very batches the bytelab format yields from the same images', async () => {
    const server = await serve();
    const ref = await drain(server, { fidelity: 3 });
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await p.open({ ...options(server, { fidelity: 3 }), manifestUrl: `${server.url}ours/manifest.json` });
    for (const b of ref.batches) {
      const o = imageBatch((await p.next())!);
      expect(Array.from(b.y)).toEqual(Array.from(o.y));
      expect(Buffer.from(b.x.buffer).equals(Buffer.from(o.x.buffer))).toBe(true);
    }
    expect(await p.next()).toBeNull();
  });

  it('lowering the scan group mid-run lowers the bytes asked for the next record', async () => {
    const server = await serve();
    const { fetches } = await drain(server, { batchSize: RECORD_SIZE, prefetch: 1, requestsInFlight: 1 }, (p, i) => {
      if (i === 0) p.setFidelity(2);
    });
    expect(fetches[0]!.requested).toBe(prefixLength(0, 6));
    expect(fetches.slice(-1)[0]).toMatchObject({ level: 2, requested: prefixLength(2, 2) });
    expect(prefixLength(2, 2) / prefixLength(2, 6)).toBeLessThan(0.8);
    expect(recordRequests(server).slice(-1)[0]!.range).toBe(`bytes=0-${prefixLength(2, 2) - 1}`);
  });

  it('takes size, channels, classes and name from the index URL', async () => {
    const server = await serve();
    const { info, batches, labels } = await drain(server, {}, undefined, '?size=8x12&channels=3&classes=a,b,c,d&name=Tiny');
    expect(info).toMatchObject({ name: 'Tiny', classes: ['a', 'b', 'c', 'd'], inputShape: [12, 8, 3], image: { width: 8, height: 12, channels: 3 } });
    expect(labels).toHaveLength(60);
    expect(batches[0]!.x.length).toBe(10 * 12 * 8 * 3);
  });

  it('echoes without fetching more, and flips keep every example', async () => {
    const server = await serve();
    const { labels, p } = await drain(server, { echoFactor: 2, augment: true, shuffleBuffer: 50 });
    expect(labels).toHaveLength(120);
    expect(p.stats.recordsFetched).toBe(3);
    expect([0, 1, 2, 3].map((c) => labels.filter((l) => l === c).length)).toEqual([30, 30, 30, 30]);
  });

  it('finds the other splits beside train/ (the export layout), or where the query says', async () => {
    const server = await serve((files) => {
      for (const [name, bytes] of [...files]) if (name.startsWith('test/')) files.set(name.replace('test/', 'held-out/'), bytes);
    });
    const test = await drain(server, { split: 'test' });
    expect(test.labels).toHaveLength(20);
    expect(server.requests.some((r) => r.path === 'test/PCR_index.pb')).toBe(true);
    const other = await drain(server, { split: 'test' }, undefined, '?test=../held-out/PCR_index.pb&classes=4');
    expect(other.labels).toHaveLength(20);
    expect(server.requests.some((r) => r.path === 'held-out/PCR_0.pcr')).toBe(true);
    // A split that is not there: open says so (the lab then trains without accuracy).
    const p = new ImagePipeline(referenceRecords, await loadTurboJpegNode(), () => undefined);
    await expect(p.open(options(server, { split: 'validation' }))).rejects.toThrow(/no split "validation": .*validation\/PCR_index\.pb: HTTP 404/);
  });

  describe('a ragged dataset: per-image scan scripts differ, records padded to their longest', () => {
    const ppm = (w: number, h: number, c: 1 | 3, seed: number) => {
      const px = Buffer.from(Array.from({ length: w * h * c }, (_, k) => (k * 7 + seed * 31 + ((k / (w * c)) | 0) * 5) % 256));
      const path = join(tmp, `r${seed}.${c === 3 ? 'ppm' : 'pgm'}`);
      writeFileSync(path, Buffer.concat([Buffer.from(`${c === 3 ? 'P6' : 'P5'}\n${w} ${h}\n255\n`), px]));
      return path;
    };
    const jpegs: Uint8Array[] = [];
    const image = (w: number, h: number, c: 1 | 3, seed: number, progressive: boolean) => {
      let jpeg = new Uint8Array(execFileSync('cjpeg', [ppm(w, h, c, seed)]));
      if (progressive) {
        writeFileSync(join(tmp, 'in.jpg'), jpeg);
        jpeg = new Uint8Array(execFileSync('jpegtran', ['-copy', 'none', '-optimize', '-progressive', join(tmp, 'in.jpg')]));
      }
      jpegs.push(jpeg);
      return splitJpegScans(jpeg);
    };
    // Record 0: colour (10 scans), gray (6), baseline colour (1). Record 1: gray only, so 6 groups.
    const rec0 = writeReferenceRecord([0, 1, 0], [image(40, 24, 3, 1, true), image(17, 33, 1, 2, true), image(30, 30, 3, 3, false)]);
    const rec1 = writeReferenceRecord([1, 1], [image(20, 20, 1, 4, true), image(9, 14, 1, 5, true)]);
    const files = new Map<string, Uint8Array>([
      ['r/PCR_0.pcr', rec0.bytes],
      ['r/PCR_1.pcr', rec1.bytes],
      [
        'r/PCR_index.pb',
        writeReferenceIndex([
          { name: 'PCR_0.pcr', offsets: rec0.offsets },
          { name: 'PCR_1.pcr', offsets: rec1.offsets },
        ]),
      ],
    ]);

    it('images with fewer scans than the group are used whole; each record is read to min(g, its own groups)', async () => {
      const server = await serve(undefined, files);
      const p = new ImagePipeline(referenceRecords, await loadTurboJpegNode(), () => undefined);
      const info = await p.open({ ...options(server, { fidelity: 8, batchSize: 5 }), manifestUrl: `${server.url}r/PCR_index.pb?size=16x16` });
      expect(info.fidelityLevels).toBe(10);
      expect(info.image).toEqual({ width: 16, height: 16, channels: 3 }); // colour: the first image is
      const b = imageBatch((await p.next())!);
      expect(Array.from(b.y)).toEqual([0, 1, 0, 1, 1]);
      const ranges = recordRequests(server)
        .slice(1)
        .map((r) => r.range);
      expect(ranges).toEqual([`bytes=0-${referencePrefixLength(rec0.offsets, 8) - 1}`, `bytes=0-${referencePrefixLength(rec1.offsets, 6) - 1}`]);
      // The baseline image (one scan) at group 8 is the whole image: the same pixels as its full decode, scaled.
      const turbo = await loadTurboJpegNode();
      const want = resize(turbo.decode(jpegs[2]!, 3, undefined, { width: 16, height: 16 }), 16, 16).data;
      const got = b.x.subarray(2 * 768, 3 * 768);
      expect(Array.from(got, (v) => Math.round(v * 255))).toEqual(Array.from(want));
      // And the gray image of record 0 at group 8 is its whole 6-scan self.
      const full = resize(turbo.decode(jpegs[1]!, 3, undefined, { width: 16, height: 16 }), 16, 16).data;
      expect(Array.from(b.x.subarray(768, 2 * 768), (v) => Math.round(v * 255))).toEqual(Array.from(full));
    });

    it('defaults: size from the first image (fitted into 64x64), channels from its colour, classes from the first record', async () => {
      const server = await serve(undefined, files);
      const p = new ImagePipeline(referenceRecords, await loadTurboJpegNode(), () => undefined);
      const info = await p.open({ ...options(server), manifestUrl: `${server.url}r/PCR_index.pb` });
      // Record 1's count is estimated from its metadata length.
      expect(info).toMatchObject({ name: 'r', image: { width: 40, height: 24, channels: 3 }, classes: ['0', '1'], examples: 3 + 2 });
    });
  });

  describe('bad input: names the record and the byte offset, and goes on with the rest', () => {
    const second = 'train/PCR_1.pcr';

    it('a truncated record: uses the groups that arrived', async () => {
      const cut = prefixLength(1, 3) + 5;
      const server = await serve((files) => files.set(second, files.get(second)!.subarray(0, cut)));
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(60);
      expect(warnings.join('\n')).toMatch(new RegExp(`record PCR_1\\.pcr: asked for ${prefixLength(1, 6)} bytes, got ${cut}`));
      expect(warnings.join('\n')).toMatch(
        new RegExp(`record PCR_1\\.pcr: truncated at byte ${cut}, scan group 6 would end at byte ${prefixLength(1, 6)}; using group 3`),
      );
    });

    it('a record cut inside its metadata: skipped with the byte offset, the others train', async () => {
      const server = await serve((files) => files.set(second, files.get(second)!.subarray(0, 30)));
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(
        new RegExp(`record PCR_1\\.pcr, byte 30: truncated inside the MetadataRecord, which ends at byte ${index[1]!.offsets[0]}; record skipped`),
      );
    });

    it('corrupt metadata: skipped with the byte offset, the others train', async () => {
      const server = await serve((files) => {
        const bytes = files.get(second)!.slice();
        bytes[10] = 0x0f; // a field key with the invalid wire type 7
        files.set(second, bytes);
      });
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(/record PCR_1\.pcr, byte 10: MetadataRecord: invalid wire type 7 .*; record skipped/);
    });

    it('an index whose offsets do not match the record: skipped with the byte offset, the others train', async () => {
      const wrong = index.map((e, k) => (k === 1 ? { ...e, offsets: e.offsets.map((v, g) => (g === 1 ? v - 7 : g === 2 ? v + 7 : v)) } : e));
      const server = await serve((files) => files.set('train/PCR_index.pb', writeReferenceIndex(wrong)));
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(/record PCR_1\.pcr, byte \d+: ScanGroup 1: .*; record skipped/);
    });

    it('an index that names a record with fewer groups than its metadata says: skipped', async () => {
      const wrong = index.map((e, k) => (k === 1 ? { ...e, offsets: e.offsets.slice(0, 5) } : e));
      const server = await serve((files) => files.set('train/PCR_index.pb', writeReferenceIndex(wrong)));
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(/record PCR_1\.pcr, byte 0: MetadataRecord says 6 scan groups, the index gives 4; record skipped/);
    });

    it('a first record that cannot be read: open takes the metadata of the next, training goes on', async () => {
      const server = await serve((files) => files.set('train/PCR_0.pcr', new Uint8Array(5)));
      const { labels, warnings, info } = await drain(server);
      expect(info.fidelityLevels).toBe(6);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(/record PCR_0\.pcr, byte 5: truncated inside the MetadataRecord.*; record skipped/);
    });

    it('a missing record file: skipped, the run goes on', async () => {
      const server = await serve((files) => files.delete(second));
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(/record PCR_1\.pcr: fetch failed: .*HTTP 404.*record skipped/);
    });

    it('a corrupt scan in one image: that image is left out, named by record, index and byte', async () => {
      const server = await serve((files) => {
        const bytes = files.get(second)!.slice();
        const rec = readReferenceRecordPrefix(bytes, index[1]!.offsets, 'PCR_1.pcr');
        const at = rec.chunkOffset(7, 2);
        bytes.fill(0xff, at + 8, at + rec.chunk(7, 2).byteLength);
        files.set(second, bytes);
      });
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(59);
      expect(warnings.join('\n')).toMatch(/record PCR_1\.pcr, image 7 \(chunk at byte \d+\): .*image left out/);
    });

    it('labels outside the classes the URL gives: those images are left out and said so', async () => {
      const server = await serve();
      const { labels, warnings } = await drain(server, {}, undefined, '?classes=2');
      expect(new Set(labels)).toEqual(new Set([0, 1]));
      expect(labels).toHaveLength(30);
      expect(warnings.join('\n')).toMatch(/record PCR_0\.pcr, image 2: label 2 is not one of the 2 classes .*image left out/);
    });

    it('a corrupt index or bad options: open fails and says where', async () => {
      const server = await serve((files) => files.set('train/PCR_index.pb', files.get('train/PCR_index.pb')!.subarray(0, 9)));
      const p = new ImagePipeline(referenceRecords, await loadTurboJpegNode(), () => undefined);
      await expect(p.open(options(server))).rejects.toThrow(
        /record PCR_index\.pb, byte 1: DatasetOffsetsIndex: length-delimited value of \d+ bytes at byte 2 runs past the end of the message at byte 9/,
      );
      await expect(new ImagePipeline(referenceRecords, await loadTurboJpegNode(), () => undefined).open(options(server, {}, '?size=huge'))).rejects.toThrow(
        /size must look like 64x64/,
      );
    });
  });
});

describe('reference URLs', () => {
  it('the worker dispatches on a path ending in .pb, query or not', () => {
    expect(isReferenceIndexUrl('http://h/d/train/PCR_index.pb?size=64x64&classes=10')).toBe(true);
    expect(isReferenceIndexUrl('idb://local/abc/PCR_index.pb')).toBe(true);
    expect(isReferenceIndexUrl('http://h/d/manifest.json?x=.pb')).toBe(false);
  });

  it('options and their errors', () => {
    expect(referenceUrlOptions('http://h/PCR_index.pb?size=28x28&channels=1&classes=3')).toEqual({
      size: { width: 28, height: 28 },
      channels: 1,
      classes: ['0', '1', '2'],
    });
    expect(referenceUrlOptions('http://h/PCR_index.pb?classes=cat,dog%20x')).toEqual({ classes: ['cat', 'dog x'] });
    expect(referenceUrlOptions('http://h/PCR_index.pb')).toEqual({});
    expect(() => referenceUrlOptions('http://h/PCR_index.pb?channels=4')).toThrow(/channels must be 1 or 3/);
    expect(() => referenceUrlOptions('http://h/PCR_index.pb?classes=a,,b')).toThrow(/empty name/);
  });

  it('split URLs', () => {
    const u = 'http://h/ds/train/PCR_index.pb?size=8x8';
    expect(referenceSplitUrl(u, 'train')).toBe(u);
    expect(referenceSplitUrl(u, 'test')).toBe('http://h/ds/test/PCR_index.pb?size=8x8');
    expect(referenceSplitUrl('http://h/ds/PCR_index.pb', 'train')).toBe('http://h/ds/PCR_index.pb');
    expect(referenceSplitUrl('http://h/ds/PCR_index.pb', 'test')).toBeUndefined();
    expect(referenceSplitUrl('http://h/ds/PCR_index.pb?test=val/PCR_index.pb', 'test')).toBe('http://h/ds/val/PCR_index.pb?test=val/PCR_index.pb');
  });
});
