// The prefix cache with the real pipeline, HTTP server and decoder in Node.
// Node has no IndexedDB: fake-indexeddb stands in for the browser's here (the
// cache's code and idb are the real ones); test/e2e/cache.spec.ts runs it on
// Chromium's own IndexedDB across a reload.
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import type { ImageBatch, PipelineEvent, PipelineOptions } from '../../../src/pipeline/api.js';
import { ImagePipeline } from '../../../src/pipeline/image-pipeline.js';
import { pcrRecords } from '../../../src/pipeline/pcr-records.js';
import { PrefixCache } from '../../../src/storage/prefix-cache.js';
import { buildFixture } from '../../support/fixtures.js';
import { startTestServer, type TestServer } from '../../support/http-server.js';
import { testPipelineOptions } from '../../support/pipeline-options.js';

const fixture = await buildFixture({ train: 60, recordSize: 20 }); // 3 records of 20 images
const records = fixture.manifest.splits.train!.records;
const sumEnds = (g: number) => records.reduce((n, r) => n + r.groupEnds[g]!, 0);
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

let dbCount = 0;
/** A cache database of the test's own, so tests cannot see each other's entries. */
const freshCacheName = () => `test-cache-${dbCount++}`;

async function serve(): Promise<TestServer> {
  const server = await startTestServer(new Map(fixture.files));
  servers.push(server);
  return server;
}

async function drain(server: TestServer, over: Partial<PipelineOptions>) {
  const events: PipelineEvent[] = [];
  const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => events.push(e));
  await p.open(testPipelineOptions(`${server.url}manifest.json`, { cacheLimitBytes: 1 << 20, ...over }));
  const xs: Float32Array[] = [];
  for (let b = await p.next(); b; b = await p.next()) xs.push((b as ImageBatch).x);
  p.close();
  const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
  return { p, xs, warnings, stats: p.stats };
}

const recordRanges = (server: TestServer) => server.requests.filter((r) => r.path.endsWith('.pcr')).map((r) => r.range);

describe('prefix cache', () => {
  it('a second epoch reads every record from the cache: no request', async () => {
    const server = await serve();
    const { stats } = await drain(server, { epochs: 2, cacheName: freshCacheName() });
    expect(recordRanges(server)).toHaveLength(3);
    expect(stats).toMatchObject({ recordsFetched: 3, cacheHits: 3, bytesFetched: sumEnds(6), bytesFromCache: sumEnds(6) });
  });

  it('raising the fidelity fetches only the bytes after each cached prefix, and decodes the same pixels as an uncached read', async () => {
    const server = await serve();
    const cacheName = freshCacheName();
    await drain(server, { fidelity: 2, cacheName });
    server.requests.length = 0;
    const { stats, xs } = await drain(server, { fidelity: 6, cacheName });
    expect(recordRanges(server).sort()).toEqual(records.map((r) => `bytes=${r.groupEnds[2]}-${r.groupEnds[6]! - 1}`).sort());
    expect(stats).toMatchObject({ cacheExtended: 3, bytesFetched: sumEnds(6) - sumEnds(2), bytesFromCache: sumEnds(2) });
    const uncached = await drain(server, { fidelity: 6, cacheLimitBytes: 0 });
    expect(xs).toEqual(uncached.xs);
  });

  it('lowering the fidelity needs no network at all', async () => {
    const server = await serve();
    const cacheName = freshCacheName();
    await drain(server, { fidelity: 6, cacheName });
    server.requests.length = 0;
    const { stats, xs } = await drain(server, { fidelity: 1, cacheName });
    expect(recordRanges(server)).toEqual([]);
    expect(stats).toMatchObject({ cacheHits: 3, recordsFetched: 0, bytesFetched: 0, bytesFromCache: sumEnds(1) });
    expect(xs).toEqual((await drain(server, { fidelity: 1, cacheLimitBytes: 0 })).xs);
  });

  it('an altered cached prefix fails its checksum: reported, dropped and read from the server', async () => {
    const server = await serve();
    const cacheName = freshCacheName();
    await drain(server, { cacheName });
    // Flip one byte of the second record's stored prefix, behind the cache's back.
    const url = new URL(records[1]!.file, server.url).href;
    const { openDB } = await import('idb');
    const db = await openDB(cacheName);
    const bytes = (await db.get('bytes', url)) as Uint8Array;
    bytes[500] = bytes[500]! ^ 0xff;
    await db.put('bytes', bytes, url);
    db.close();
    server.requests.length = 0;
    const { stats, warnings, xs } = await drain(server, { cacheName });
    expect(warnings).toEqual([`record ${records[1]!.file}: its cached prefix failed its checksum (cut or altered); dropped and read from the server`]);
    expect(stats).toMatchObject({ cacheCorrupt: 1, cacheHits: 2, recordsFetched: 1 });
    expect(recordRanges(server)).toEqual([`bytes=0-${records[1]!.groupEnds[6]! - 1}`]);
    expect(xs).toEqual((await drain(server, { cacheLimitBytes: 0 })).xs);
  });

  it('a cached prefix whose record header is wrong (checksum fine): dropped and read again, nothing lost', async () => {
    const server = await serve();
    const cacheName = freshCacheName();
    const url = new URL(records[1]!.file, server.url).href;
    const garbage = fixture.files.get(records[1]!.file)!.slice();
    garbage.fill(0x55, 0, 16); // the magic and header
    await new PrefixCache(1 << 20, cacheName).write(url, garbage);
    const { stats, warnings, xs } = await drain(server, { cacheName });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^record ${records[1]!.file}, byte 0: .*that prefix came from the cache, so it was dropped and read again$`));
    expect(stats).toMatchObject({ cacheCorrupt: 1, recordsSkipped: 0 });
    expect(xs).toEqual((await drain(server, { cacheLimitBytes: 0 })).xs);
  });

  it('a record file that changed on the server since it was cached (If-Range): read again whole', async () => {
    const server = await serve();
    const cacheName = freshCacheName();
    await drain(server, { fidelity: 2, cacheName });
    // The second record's file changes on the server (one byte of its last scan group): a new ETag.
    const changed = fixture.files.get(records[1]!.file)!.slice();
    changed[changed.byteLength - 3] = changed[changed.byteLength - 3]! ^ 1;
    server.files.set(records[1]!.file, changed);
    server.requests.length = 0;
    const { warnings } = await drain(server, { fidelity: 6, cacheName });
    expect(warnings.some((w) => w.startsWith(`record ${records[1]!.file}: the file changed on the server since its prefix was cached`))).toBe(true);
    // The If-Range request is answered whole (200, stopped once the range was read), then the prefix is read from byte 0.
    expect(server.requests.filter((r) => r.path === records[1]!.file).map((r) => r.status)).toEqual([200, 206]);
  });

  it('a file now shorter than its cached prefix, on a server without validators (416 on the rest): dropped, read from byte 0', async () => {
    const server = await serve();
    server.misbehave = 'no-validators'; // with an ETag, If-Range would catch the change first (the test above)
    const cacheName = freshCacheName();
    await drain(server, { fidelity: 3, cacheName });
    // The second record's file is cut on the server to less than its cached group-3 prefix.
    const cut = records[1]!.groupEnds[2]! + 10;
    server.files.set(records[1]!.file, fixture.files.get(records[1]!.file)!.subarray(0, cut));
    server.requests.length = 0;
    const { warnings, stats } = await drain(server, { fidelity: 6, cacheName });
    const second = server.requests.filter((r) => r.path === records[1]!.file);
    expect(second.map((r) => r.status)).toEqual([416, 206]);
    expect(second[1]!.range).toBe(`bytes=0-${records[1]!.groupEnds[6]! - 1}`);
    expect(warnings.join('\n')).toMatch(
      /HTTP 416: byte \d+ is past the end of the file .*; the cached prefix \(\d+ bytes\) was dropped and the record read again/,
    );
    expect(warnings.join('\n')).toMatch(/using group 2/); // what the cut file still holds
    expect(stats.recordsSkipped).toBe(0);
  });
});

describe('PrefixCache', () => {
  const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

  it('evicts the least recently used entries to stay within its limit', async () => {
    const cache = new PrefixCache(100, freshCacheName());
    await cache.write('a', bytes(40, 1));
    await cache.write('b', bytes(40, 2));
    expect(await cache.read('a')).toMatchObject({ bytes: bytes(40, 1) }); // a is now the most recent
    await cache.write('c', bytes(40, 3));
    expect(await cache.read('b')).toBeUndefined();
    expect(await cache.usage()).toEqual({ bytes: 80, entries: 2 });
    await cache.write('a', bytes(60, 4)); // replacing counts the difference
    expect(await cache.usage()).toEqual({ bytes: 100, entries: 2 });
  });

  it('keeps nothing larger than its limit, and clear empties it', async () => {
    const cache = new PrefixCache(10, freshCacheName());
    await cache.write('big', bytes(11, 0));
    expect(await cache.usage()).toEqual({ bytes: 0, entries: 0 });
    await cache.write('small', bytes(10, 0));
    await cache.clear();
    expect(await cache.usage()).toEqual({ bytes: 0, entries: 0 });
  });
});
