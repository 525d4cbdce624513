// The pipeline end to end in Node: a real HTTP server with Range requests, the
// real encoder and the real wasm decoder. Bad input cases included.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { transcodeToProgressive } from '../../../src/jpeg/transcode.js';
import { buildSplit, makeManifest } from '../../../src/pcr/build.js';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import type { Batch, ImageBatch, PipelineEvent, PipelineOptions } from '../../../src/pipeline/api.js';
import { ImagePipeline } from '../../../src/pipeline/image-pipeline.js';
import { pcrRecords } from '../../../src/pipeline/pcr-records.js';
import { buildFixture } from '../../support/fixtures.js';
import { startTestServer, type TestServer } from '../../support/http-server.js';
import { testPipelineOptions } from '../../support/pipeline-options.js';

const tmp = mkdtempSync(join(tmpdir(), 'bytelab-pipe-'));
const RECORD_SIZE = 20;
const fixture = await buildFixture({ train: 60, recordSize: RECORD_SIZE }); // 3 records of 20
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(mutate?: (files: Map<string, Uint8Array>) => void): Promise<TestServer> {
  const files = new Map(fixture.files);
  mutate?.(files);
  const server = await startTestServer(files);
  servers.push(server);
  return server;
}

function imageBatch(b: Batch): ImageBatch {
  if (b.kind !== 'image') throw new Error(`expected an image batch, got ${b.kind}`);
  return b;
}

function options(server: TestServer, over: Partial<PipelineOptions> = {}): PipelineOptions {
  return testPipelineOptions(`${server.url}manifest.json`, over);
}

async function drain(server: TestServer, over: Partial<PipelineOptions> = {}, onBatch?: (p: ImagePipeline, i: number) => void) {
  const events: PipelineEvent[] = [];
  const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => events.push(e));
  await p.open(options(server, over));
  const labels: number[] = [];
  let echoed = 0; // the batches' own count of their echoed copies
  for (let i = 0; ; i++) {
    const next = await p.next();
    if (!next) break;
    const b = imageBatch(next);
    expect(b.x.length).toBe(b.size * 16 * 16);
    labels.push(...b.y);
    echoed += b.echoed!;
    onBatch?.(p, i);
  }
  const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
  const fetches = events.flatMap((e) => (e.type === 'fetch' ? [e] : []));
  return { p, labels, echoed, warnings, fetches };
}

describe('image pipeline', () => {
  it('streams every image once per epoch, with one Range request per record', async () => {
    const server = await serve();
    const { labels, warnings, p } = await drain(server);
    expect(labels).toHaveLength(60);
    expect(warnings).toEqual([]);
    const recordRequests = server.requests.filter((r) => r.path.endsWith('.pcr'));
    expect(recordRequests).toHaveLength(3);
    expect(recordRequests.every((r) => r.status === 206)).toBe(true);
    expect(p.stats.bytesFetched).toBe(fixture.manifest.splits.train!.records.reduce((n, r) => n + r.groupEnds[6]!, 0));
  });

  it("keeps its reads in flight across an epoch's end: the next epoch's first records are asked for before it begins", async () => {
    const server = await serve();
    const records = () => server.requests.filter((r) => r.path.endsWith('.pcr')).length;
    const atEpoch: number[] = [];
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => e.type === 'epoch' && atEpoch.push(records()));
    await p.open(options(server, { epochs: 2, requestsInFlight: 2 }));
    let examples = 0;
    for (let b = await p.next(); b; b = await p.next()) {
      examples += b.size;
      await new Promise((ok) => setTimeout(ok, 20)); // a trainer's step: time for the reads ahead to reach the server
    }
    expect(examples).toBe(120);
    expect(records()).toBe(6);
    // 3 records an epoch, 2 reads out: when epoch 1 begins, its first record has long been asked for (a wait per epoch otherwise).
    expect(atEpoch[1]).toBeGreaterThan(3);
  });

  it('ramps its reads in flight: no more than the records arrived, so the first record has the link to itself', async () => {
    const server = await serve();
    // Answers that take a while (about 60 ms a record), so reads started together all reach the server before one ends.
    server.fault = (path) => (path.endsWith('.pcr') ? { trickle: 1024, everyMs: 10 } : undefined);
    const records = () => server.requests.filter((r) => r.path.endsWith('.pcr')).length;
    const atFetch: number[] = [];
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => e.type === 'fetch' && atFetch.push(records()));
    await p.open(options(server, { epochs: 2, requestsInFlight: 3, prefetch: 1 }));
    while (await p.next());
    // Records asked for when each of the first three came: the first alone, the second alone after it, then two at once.
    expect(atFetch.slice(0, 3)).toEqual([1, 2, 4]);
    expect(atFetch).toHaveLength(6);
  });

  it('ramps straight to the reads that keep the link busy when answers are slow to start and fast once going', async () => {
    const server = await serve();
    // 150 ms before each answer, then the record at once: a read is nearly all wait, as from a distant CDN.
    server.fault = (path) => (path.endsWith('.pcr') ? { trickle: 1 << 20, everyMs: 10, waitMs: 150 } : undefined);
    const records = () => server.requests.filter((r) => r.path.endsWith('.pcr')).length;
    const atFetch: number[] = [];
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => e.type === 'fetch' && atFetch.push(records()));
    await p.open(options(server, { epochs: 2, requestsInFlight: 3, prefetch: 1 }));
    while (await p.next());
    // The first alone (nothing is known of the link yet), then all three slots at once, not one more per record arrived.
    expect(atFetch.slice(0, 2)).toEqual([1, 4]);
    expect(atFetch).toHaveLength(6);
  });

  it('takes a change of reads in flight mid-run: raised, the reads start at once; lowered, no new read until fewer are out', async () => {
    const server = await serve();
    server.fault = (path) => (path.endsWith('.pcr') ? { trickle: 512, everyMs: 10 } : undefined); // a record takes about 0.2 s
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await p.open(options(server, { epochs: 6, requestsInFlight: 1, prefetch: 1 }));
    const maxOut: number[] = [];
    let seen = 0;
    const watch = setInterval(() => (seen = Math.max(seen, p.statsNow().readsOut)), 2);
    try {
      while (p.statsNow().recordsFetched < 3) await p.next(); // past the ramp: 3 records have arrived
      maxOut.push(seen);
      p.setRequestsInFlight(3);
      await new Promise((ok) => setTimeout(ok, 30));
      expect(p.statsNow()).toMatchObject({ requestsInFlight: 3, readsOut: 3 });
      p.setRequestsInFlight(1);
      const fetched = p.statsNow().recordsFetched;
      while (p.statsNow().recordsFetched < fetched + 3) await p.next(); // the three out drain
      seen = 0;
      for (let i = 0; i < 3; i++) await p.next();
      maxOut.push(seen);
    } finally {
      clearInterval(watch);
      p.close();
    }
    expect(maxOut).toEqual([1, 1]);
    expect(() => p.setRequestsInFlight(0)).toThrow(/reads in flight must be >= 1/);
  });

  it('reads at most an epoch ahead: a split of one record is not read for several epochs at once', async () => {
    const one = await buildFixture({ train: 20, recordSize: 20 });
    const server = await startTestServer(new Map(one.files));
    servers.push(server);
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await p.open(options(server, { epochs: 3, requestsInFlight: 4, prefetch: 1 }));
    await p.next();
    await new Promise((ok) => setTimeout(ok, 200));
    // The epoch in hand and the next one's read: not all three epochs' copies of the same record in flight.
    expect(server.requests.filter((r) => r.path.endsWith('.pcr')).length).toBeLessThanOrEqual(2);
    p.close();
  });

  it('scales x to [0, 1] and keeps labels with their images', async () => {
    const server = await serve();
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await p.open(options(server));
    const b = imageBatch((await p.next())!);
    expect(Math.min(...b.x)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...b.x)).toBeLessThanOrEqual(1);
    // Fixture class k has a bright bar at column (k + 0.5) * 16 / 4: the brightest column tells the label.
    for (let i = 0; i < b.size; i++) {
      const colSums = Array.from({ length: 16 }, (_, x) => Array.from({ length: 16 }, (_, y) => b.x[i * 256 + y * 16 + x]!).reduce((s, v) => s + v, 0));
      const brightest = colSums.indexOf(Math.max(...colSums));
      expect(Math.floor((brightest * 4) / 16)).toBe(b.y[i]);
    }
  });

  it('fetches fewer bytes at a lower scan group, and a change applies from the next record requested', async () => {
    const server = await serve();
    // One request in flight, so "the next record requested" is the next record.
    const { fetches } = await drain(server, { batchSize: RECORD_SIZE, prefetch: 1, requestsInFlight: 1 }, (p, i) => {
      if (i === 0) p.setFidelity(2);
    });
    const ends = fixture.manifest.splits.train!.records.map((r) => r.groupEnds);
    expect(fetches[0]!.requested).toBe(ends[0]![6]);
    expect(fetches.slice(-1)[0]!.level).toBe(2);
    expect(fetches.slice(-1)[0]!.requested).toBe(ends[2]![2]);
    expect(ends[2]![2]! / ends[2]![6]!).toBeLessThan(0.8);
    // The Range header on the wire matches.
    expect(server.requests.filter((r) => r.path.endsWith('.pcr')).slice(-1)[0]!.range).toBe(`bytes=0-${ends[2]![2]! - 1}`);
  });

  it('echoes: e = 2 doubles the examples without fetching more', async () => {
    const server = await serve();
    const { labels, p } = await drain(server, { echoFactor: 2 });
    expect(labels).toHaveLength(120);
    expect(p.stats.recordsFetched).toBe(3);
  });

  it('echo modes: whole batches repeated, or examples before or after the random flip, with their counters', async () => {
    const server = await serve();
    const batches = await drain(server, { echoFactor: 2, echoMode: 'batches' });
    expect(batches.labels).toHaveLength(120);
    expect(batches.p.stats).toMatchObject({ examplesRead: 60, examplesEchoed: 60, duplicatesInBatches: 0, recordsFetched: 3 });
    expect(batches.echoed).toBe(60);

    // In order, no shuffle, batches of 10: each example's two copies sit side by side.
    const pixelsOf = async (echoMode: 'examples' | 'examples-after-augment') => {
      const events: PipelineEvent[] = [];
      const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => events.push(e));
      await p.open(options(server, { echoFactor: 2, echoMode, augment: true }));
      const pairs: boolean[] = [];
      for (let b = await p.next(); b; b = await p.next()) {
        const x = imageBatch(b).x;
        const per = x.length / b.size;
        for (let i = 0; i < b.size; i += 2) pairs.push(x.subarray(i * per, (i + 1) * per).every((v, k) => v === x[(i + 1) * per + k]));
      }
      return { pairs, stats: p.stats };
    };
    const after = await pixelsOf('examples-after-augment');
    expect(after.pairs.every(Boolean)).toBe(true); // copies made after the flip are identical
    expect(after.stats).toMatchObject({ examplesEchoed: 60, duplicatesInBatches: 60 });
    const before = await pixelsOf('examples');
    expect(before.pairs.filter((same) => !same).length).toBeGreaterThan(10); // each copy flipped on its own draw
    expect(before.stats).toMatchObject({ examplesEchoed: 60, duplicatesInBatches: 60 });
  });

  it('each batch says how many of its examples are echoed copies: the rest, summed, are the examples read, in every echo mode', async () => {
    const server = await serve();
    for (const echoMode of ['examples', 'examples-after-augment', 'batches'] as const) {
      // Fractional, shuffled, two epochs: copies land in other batches than their example, and some examples get none.
      const { p, labels, echoed } = await drain(server, { echoMode, echoFactor: 1.5, shuffleBuffer: 32, augment: true, epochs: 2, batchSize: 8 });
      expect(echoed, echoMode).toBe(p.stats.examplesEchoed);
      expect(labels.length - echoed, echoMode).toBe(p.stats.examplesRead);
      expect(p.stats.examplesRead).toBe(120);
      expect(echoed, echoMode).toBeGreaterThan(20);
      expect(echoed, echoMode).toBeLessThan(100);
    }
  });

  it('scales images stored at their own sizes (a transcoded JPEG collection) to the model input', async () => {
    const files = new Map<string, Uint8Array>();
    const items = [
      [40, 24],
      [17, 33],
      [64, 64],
      [9, 12],
    ].map(([w, h], i) => {
      const px = Buffer.from(Array.from({ length: w! * h! * 3 }, (_, k) => (k * 7 + i * 60) % 256));
      const ppm = join(tmp, `v${i}.ppm`);
      writeFileSync(ppm, Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), px]));
      return { scans: transcodeToProgressive(new Uint8Array(execFileSync('cjpeg', [ppm])), { colour: 'ycbcr' }).chunks, label: i % 2 };
    });
    const records = await buildSplit('train', items, 3, 2, async (name, bytes) => void files.set(name, bytes));
    const manifest = makeManifest({
      name: 'variable',
      classes: ['a', 'b'],
      image: { width: 16, height: 16, channels: 3 },
      quality: 90,
      variableSize: true,
      splits: { train: { records } },
    });
    files.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest)));
    const server = await startTestServer(files);
    servers.push(server);
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await p.open({ ...options(server), batchSize: 4, fidelity: 10 });
    const b = imageBatch((await p.next())!);
    expect(b.size).toBe(4);
    expect(b.x.length).toBe(4 * 16 * 16 * 3);
    expect(Array.from(b.y)).toEqual([0, 1, 0, 1]);
  });

  it('decodes to another size than the manifest says where asked (imageSize): the model input follows', async () => {
    const server = await serve();
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    const info = await p.open(options(server, { imageSize: { width: 8, height: 8 } }));
    expect(info.inputShape).toEqual([8, 8, 1]);
    // The same bytes are read: only the decode changes.
    expect(info.bytesPerLevel.at(-1)).toBe(fixture.manifest.splits.train!.records.reduce((n, r) => n + r.groupEnds[6]!, 0));
    const b = imageBatch((await p.next())!);
    expect(b.x.length).toBe(b.size * 8 * 8);
    // The bright bar of class k (column (k + 0.5) * 16 / 4 at 16 px) is at column (k + 0.5) * 8 / 4 at 8 px.
    for (let i = 0; i < b.size; i++) {
      const colSums = Array.from({ length: 8 }, (_, x) => Array.from({ length: 8 }, (_, y) => b.x[i * 64 + y * 8 + x]!).reduce((s, v) => s + v, 0));
      expect(Math.floor((colSums.indexOf(Math.max(...colSums)) * 4) / 8)).toBe(b.y[i]);
    }
    const bad = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await expect(bad.open(options(server, { imageSize: { width: 0, height: 8 } }))).rejects.toThrow(/image size must be whole numbers/);
  });

  describe('bad input: reports the record and goes on with the rest', () => {
    const second = fixture.manifest.splits.train!.records[1]!;

    it('a truncated record: uses the groups that arrived', async () => {
      const server = await serve((files) => files.set(second.file, files.get(second.file)!.subarray(0, second.groupEnds[3]! + 5)));
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(60);
      expect(warnings.join('\n')).toMatch(new RegExp(`${second.file}.*(shorter|truncated at byte ${second.groupEnds[3]! + 5})`));
      expect(warnings.join('\n')).toMatch(/using group 3/);
    });

    it('a record cut inside its metadata: skipped with a message, the others still train', async () => {
      const server = await serve((files) => files.set(second.file, files.get(second.file)!.subarray(0, 30)));
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(new RegExp(`record ${second.file}, byte 30: truncated inside the metadata block.*record skipped`));
    });

    it('a manifest whose offsets lie: follows the record header and fetches what is missing', async () => {
      const server = await serve((files) => {
        const m = structuredClone(fixture.manifest);
        m.splits.train!.records[1]!.groupEnds = m.splits.train!.records[1]!.groupEnds.map((e, g) => (g === 0 ? e : e - 50));
        files.set('manifest.json', new TextEncoder().encode(JSON.stringify(m)));
      });
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(60);
      expect(warnings.join('\n')).toMatch(
        new RegExp(`record ${second.file}: the manifest says .* ending at byte ${second.groupEnds[6]! - 50}, .* ending at byte ${second.groupEnds[6]}`),
      );
    });

    it('a server that ignores Range: reads only the needed prefix of the 200 response', async () => {
      const server = await serve();
      server.misbehave = 'ignore-range';
      const { labels, warnings, p } = await drain(server, { fidelity: 2 });
      expect(labels).toHaveLength(60);
      expect(warnings.filter((w) => /ignored the Range header \(HTTP 200/.test(w))).toHaveLength(3);
      expect(p.stats.bytesFetched).toBe(fixture.manifest.splits.train!.records.reduce((n, r) => n + r.groupEnds[2]!, 0));
    });

    it('a corrupt scan inside one image: that image is left out, named by record and index', async () => {
      const server = await serve((files) => {
        const bytes = files.get(second.file)!.slice();
        // Image 7's chunk in group 2 starts after images 0..6 of that group.
        const lengthsAt = 16 + 2 * RECORD_SIZE;
        const view = new DataView(bytes.buffer);
        let at = second.groupEnds[1]!;
        for (let i = 0; i < 7; i++) at += view.getUint32(lengthsAt + 4 * (RECORD_SIZE + i), true);
        const len = view.getUint32(lengthsAt + 4 * (RECORD_SIZE + 7), true);
        bytes.fill(0xff, at + 8, at + len); // 0xFF runs are invalid entropy data
        files.set(second.file, bytes);
      });
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(59);
      expect(warnings.join('\n')).toMatch(new RegExp(`record ${second.file}, image 7 \\(chunk at byte \\d+\\): .*image left out`));
    });

    it('a server that stalls every record: each read gives up after retries, nothing hangs', async () => {
      const server = await serve();
      server.fault = (path) => (path.endsWith('.pcr') ? { stall: 10 } : undefined);
      const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
      await p.open(options(server, { fetchPolicy: { stallMs: 300, attempts: 2, backoffMs: 10 } }));
      await expect(p.next()).rejects.toThrow(/no readable data in split "train"/);
      expect(p.stats.recordsSkipped).toBe(3);
      expect(p.stats.retries).toBe(3);
    });

    it('a record with a different number of scan groups than the manifest: skipped', async () => {
      const server = await serve((files) => {
        const bytes = files.get(second.file)!.slice();
        new DataView(bytes.buffer).setUint16(12, 10, true);
        files.set(second.file, bytes);
      });
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(new RegExp(`record ${second.file}, byte (4|12): .*record skipped`));
    });

    it('a missing record file: skipped, the run goes on', async () => {
      const server = await serve((files) => files.delete(second.file));
      const { labels, warnings } = await drain(server);
      expect(labels).toHaveLength(40);
      expect(warnings.join('\n')).toMatch(new RegExp(`${second.file}.*HTTP 404.*record skipped`));
    });
  });
});

describe('seeds', () => {
  it('the same seed gives the same example order on every run; another seed another order', async () => {
    const server = await serve();
    const run = async (seed: number) => (await drain(server, { seed, shuffleBuffer: 32, echoFactor: 1.5, augment: true, epochs: 2 })).labels;
    const a = await run(7);
    expect(await run(7)).toEqual(a);
    expect(await run(8)).not.toEqual(a);
  });
});

describe('record order', () => {
  it('a split opened shuffling keeps drawing shuffled record orders when the shuffle buffer control goes to 1 mid-run', async () => {
    // Readers, tabs and resumes draw the same orders only if the change of a live control cannot change them.
    const fixture12 = await buildFixture({ train: 240, recordSize: RECORD_SIZE }); // 12 records
    const server = await startTestServer(new Map(fixture12.files));
    servers.push(server);
    const order = async (change: boolean) => {
      const records: string[] = [];
      const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => e.type === 'fetch' && records.push(e.record));
      await p.open(options(server, { epochs: 3, shuffleBuffer: 64, prefetch: 1, requestsInFlight: 1 }));
      await p.next();
      if (change) p.setShuffleBuffer(1);
      while (await p.next());
      return records;
    };
    const kept = await order(false);
    expect(kept).toHaveLength(36);
    expect(await order(true)).toEqual(kept);
  });
});

describe('partitions (InputSplit)', () => {
  it('the ranks of one count read disjoint records that together cover each epoch once, shuffled or not', async () => {
    const fixture6 = await buildFixture({ train: 120, recordSize: RECORD_SIZE }); // 6 records
    const server = await startTestServer(new Map(fixture6.files));
    servers.push(server);
    for (const shuffleBuffer of [0, 64]) {
      const all = await drain(server, { epochs: 2, shuffleBuffer });
      const ranks = await Promise.all([0, 1, 2, 3].map((rank) => drain(server, { epochs: 2, shuffleBuffer, partition: { count: 4, rank } })));
      const perEpoch = (fetches: { record: string }[]) => [fetches.slice(0, fetches.length / 2), fetches.slice(fetches.length / 2)];
      for (const epoch of [0, 1]) {
        const records = ranks.flatMap((r) => perEpoch(r.fetches)[epoch]!.map((f) => f.record));
        expect(new Set(records).size).toBe(6); // disjoint...
        expect(records).toHaveLength(6); // ...and every record once
      }
      expect(ranks.map((r) => r.fetches.length / 2)).toEqual([2, 2, 1, 1]); // 6 records over 4 ranks
      expect(ranks.flatMap((r) => r.labels).sort()).toEqual([...all.labels].sort());
    }
  });

  it('a share whose epoch holds only a missing record reads on into the next epoch; in a fixed order it gives up, named', async () => {
    const fixture6 = await buildFixture({ train: 120, recordSize: RECORD_SIZE }); // 6 records of 20, one of them missing
    const missing = fixture6.manifest.splits.train!.records[4]!.file;
    const server = await startTestServer(new Map([...fixture6.files].filter(([path]) => !path.endsWith(missing))));
    servers.push(server);
    // Shuffled: each epoch gives the missing record to some rank. Every rank reads on, and all the good records come, 4 times.
    const ranks = await Promise.all([0, 1, 2, 3, 4, 5].map((rank) => drain(server, { epochs: 4, shuffleBuffer: 64, partition: { count: 6, rank } })));
    expect(ranks.map((r) => r.fetches.length).reduce((a, b) => a + b)).toBe(20); // 4 epochs of 5 good records
    expect(ranks.flatMap((r) => r.labels)).toHaveLength(4 * 5 * 20);
    expect(ranks.filter((r) => r.labels.length < 4 * 20).length).toBeGreaterThan(0); // some rank met the missing record
    // In order: rank 4 holds only the missing record, in every epoch. It gives up at its first epoch's end, and says which.
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await p.open(options(server, { epochs: 4, shuffleBuffer: 0, partition: { count: 6, rank: 4 } }));
    await expect(p.next()).rejects.toThrow(
      expect.objectContaining({ name: 'NoReadableData', message: expect.stringMatching(/"train" \(partition 5 of 6\): its one record failed/) }),
    );
    expect(p.stats.recordsSkipped).toBe(1);
    // Its loop has ended: its clock stops, or upstream would read busy for as long as the run goes on.
    const busy = p.statsNow().loopBusyMs;
    await new Promise((r) => setTimeout(r, 60));
    expect(p.statsNow().loopBusyMs).toBe(busy);
    // Opened and never read (a reader that had left, in a continued run): not busy at all.
    const unread = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await unread.open(options(server, { partition: { count: 6, rank: 4 } }));
    await new Promise((r) => setTimeout(r, 60));
    expect(unread.statsNow().loopBusyMs).toBe(0);
  });

  it('shuffled shares of one record each, half the records missing: no rank gives up, though some draw bad records many epochs running', async () => {
    const fixture6 = await buildFixture({ train: 120, recordSize: RECORD_SIZE });
    const missing = fixture6.manifest.splits.train!.records.slice(0, 3).map((r) => r.file);
    const server = await startTestServer(new Map([...fixture6.files].filter(([path]) => !missing.some((m) => path.endsWith(m)))));
    servers.push(server);
    const ranks = await Promise.all([0, 1, 2, 3, 4, 5].map((rank) => drain(server, { epochs: 30, shuffleBuffer: 64, partition: { count: 6, rank } })));
    expect(ranks.flatMap((r) => r.labels)).toHaveLength(30 * 3 * 20); // every good record, every epoch
  });

  it('a rank beyond the records, or a bad partition, is refused at open', async () => {
    const server = await serve();
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
    await expect(p.open(options(server, { partition: { count: 4, rank: 3 } }))).rejects.toThrow('partition rank 3 of 4 holds no records: split "train" has 3');
    await expect(p.open(options(server, { partition: { count: 2, rank: 2 } }))).rejects.toThrow(/rank from 0 to count - 1, got rank 2 of 2/);
  });
});
