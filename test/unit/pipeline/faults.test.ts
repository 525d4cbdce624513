// Links that fail, in Node against a real HTTP server: dropped and stalled
// answers, 5xx, lying Content-Length, 416, a server that goes away and comes
// back. Each case checks what came out (every image, or exactly the good ones)
// and the pipeline's counters afterwards.
import { afterEach, describe, expect, it } from 'vitest';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import type { PipelineEvent, PipelineOptions } from '../../../src/pipeline/api.js';
import { fetchManifest } from '../../../src/pipeline/base.js';
import { ImagePipeline } from '../../../src/pipeline/image-pipeline.js';
import { pcrRecords } from '../../../src/pipeline/pcr-records.js';
import { buildFixture } from '../../support/fixtures.js';
import { startTestServer, type Fault, type TestServer } from '../../support/http-server.js';
import { testPipelineOptions } from '../../support/pipeline-options.js';

const fixture = await buildFixture({ train: 60, recordSize: 20 }); // 3 records of 20 images
const records = fixture.manifest.splits.train!.records;
const fullBytes = records.reduce((n, r) => n + r.groupEnds[6]!, 0);
/** Fast retries so the tests take milliseconds, not seconds; a stall time a loaded CI machine never reaches by accident. */
const POLICY = { attempts: 3, backoffMs: 10, stallMs: 3000 };
/** For the tests about stalls. */
const SHORT_STALL = { ...POLICY, stallMs: 300 };

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(fault?: (path: string, range: string | undefined, nth: number) => Fault | undefined): Promise<TestServer> {
  const server = await startTestServer(new Map(fixture.files));
  const seen = new Map<string, number>();
  if (fault) {
    server.fault = (path, range) => {
      const nth = (seen.get(path) ?? 0) + 1;
      seen.set(path, nth);
      return fault(path, range, nth);
    };
  }
  servers.push(server);
  return server;
}

async function open(server: TestServer, over: Partial<PipelineOptions> = {}) {
  const events: PipelineEvent[] = [];
  const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => events.push(e));
  await p.open(testPipelineOptions(`${server.url}manifest.json`, { fetchPolicy: POLICY, ...over }));
  return { p, events };
}

async function drain(server: TestServer, over: Partial<PipelineOptions> = {}, afterOpen?: () => void) {
  const { p, events } = await open(server, over);
  afterOpen?.();
  const labels: number[] = [];
  for (let b = await p.next(); b; b = await p.next()) labels.push(...b.y);
  const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
  return { p, labels, warnings };
}

const isRecord = (path: string) => path.endsWith('.pcr');
const second = records[1]!.file;

describe('a failing link', () => {
  it('a connection dropped mid-body: the next try asks only for the missing bytes, every image arrives', async () => {
    const server = await serve((path, _r, nth) => (isRecord(path) && nth === 1 ? { drop: 100 } : undefined));
    const { p, labels, warnings } = await drain(server);
    expect(labels).toHaveLength(60);
    expect(warnings).toEqual([]);
    expect(p.stats).toMatchObject({ retries: 3, recordsSkipped: 0, recordsFetched: 3, bytesFetched: fullBytes });
    const resumed = server.requests
      .filter((r) => isRecord(r.path) && r.status === 206)
      .map((r) => r.range)
      .sort();
    expect(resumed).toEqual(records.map((r) => `bytes=100-${r.groupEnds[6]! - 1}`).sort());
  });

  it('a stalled answer is abandoned after the stall time and tried again', async () => {
    const server = await serve((path, _r, nth) => (path === second && nth === 1 ? { stall: 50 } : undefined));
    const { p, labels } = await drain(server, { fetchPolicy: SHORT_STALL });
    expect(labels).toHaveLength(60);
    expect(p.stats).toMatchObject({ retries: 1, recordsSkipped: 0 });
  });

  it('a slow answer that keeps moving is not a stall: it takes longer than the stall time and still counts as one try', async () => {
    // About 1.3 s for the second record, in pieces 100 ms apart; the stall time is 500 ms.
    const piece = Math.ceil(records[1]!.groupEnds[6]! / 13);
    const server = await serve((path) => (path === second ? { trickle: piece, everyMs: 100 } : undefined));
    const started = Date.now();
    const { p, labels } = await drain(server, { fetchPolicy: { ...POLICY, stallMs: 500 } });
    expect(Date.now() - started).toBeGreaterThan(1000);
    expect(labels).toHaveLength(60);
    expect(p.stats).toMatchObject({ retries: 0, recordsSkipped: 0 });
  });

  it('503 twice, then an answer: retried with backoff, nothing lost', async () => {
    const server = await serve((path, _r, nth) => (path === second && nth <= 2 ? { status: 503 } : undefined));
    const { p, labels } = await drain(server);
    expect(labels).toHaveLength(60);
    expect(p.stats).toMatchObject({ retries: 2, recordsSkipped: 0 });
  });

  it('a record that always answers 500 while the server is up: skipped after its tries, named, the rest train', async () => {
    const server = await serve((path) => (path === second ? { status: 500 } : undefined));
    const { p, labels, warnings } = await drain(server);
    expect(labels).toHaveLength(40);
    expect(p.stats).toMatchObject({ retries: 2, recordsSkipped: 1, recordsFetched: 2, outageMs: 0 });
    expect(warnings).toEqual([`record ${second}: fetch failed: HTTP 500 Internal Server Error (after 3 tries); record skipped`]);
  });

  it('a Content-Length longer than the body sent: the bytes asked for are all there, so no retry', async () => {
    const server = await serve((path, _r, nth) => (path === second && nth === 1 ? { lie: 500 } : undefined));
    const { p, labels } = await drain(server);
    expect(labels).toHaveLength(60);
    expect(p.stats).toMatchObject({ retries: 0, recordsSkipped: 0, bytesFetched: fullBytes });
  });

  it('a body shorter than its Content-Range: the rest is asked for from where it stopped', async () => {
    const server = await serve((path, _r, nth) => (path === second && nth === 1 ? { short: 700 } : undefined));
    const { p, labels } = await drain(server);
    expect(labels).toHaveLength(60);
    expect(p.stats).toMatchObject({ retries: 1, recordsSkipped: 0, bytesFetched: fullBytes });
    expect(server.requests.filter((r) => r.path === second).map((r) => r.range)).toEqual([
      `bytes=0-${records[1]!.groupEnds[6]! - 1}`,
      `bytes=700-${records[1]!.groupEnds[6]! - 1}`,
    ]);
  });

  it('416 (an empty record file): not retried, skipped with the reason', async () => {
    const server = await serve();
    server.files.set(second, new Uint8Array(0));
    const { p, labels, warnings } = await drain(server);
    expect(labels).toHaveLength(40);
    expect(p.stats).toMatchObject({ retries: 0, recordsSkipped: 1 });
    expect(warnings).toEqual([`record ${second}: fetch failed: HTTP 416: byte 0 is past the end of the file (0 bytes); record skipped`]);
  });

  it('a server that goes away and comes back: the pipeline waits for it and loses nothing', async () => {
    const server = await serve();
    const healthy = await drain(server);
    const { p, labels, warnings } = await drain(server, {}, () => {
      void server.goAway();
      setTimeout(() => void server.comeBack(), 500);
    });
    expect(labels).toEqual(healthy.labels);
    expect(p.stats.recordsSkipped).toBe(0);
    expect(p.stats.recordsFetched).toBe(3);
    expect(p.stats.outageMs).toBeGreaterThan(300);
    expect(warnings[0]).toMatch(/^the dataset's server stopped answering \(record .*: network error/);
    expect(warnings[1]).toMatch(/^the dataset's server answers again after \d+\.\d s; the run goes on$/);
  });

  it('the first read through after an outage wakes the reads still waiting out their backoff: all go on at once', async () => {
    const server = await serve();
    const at = new Map<PipelineEvent, number>();
    const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => at.set(e, performance.now()));
    const options = { fetchPolicy: { ...POLICY, backoffMs: 400 }, requestsInFlight: 3, epochs: 3 };
    await p.open(testPipelineOptions(`${server.url}manifest.json`, options));
    // Two records in, so the reads ramp up to three in flight; then the server goes, and each read backs off on its own,
    // their waits sharing one backoff that grows to seconds.
    for (let i = 0; i < 4; i++) await p.next();
    await server.goAway();
    const waiting = p.next();
    await new Promise((r) => setTimeout(r, 4000));
    await server.comeBack();
    await waiting;
    for (let b = await p.next(); b; b = await p.next());
    const events = [...at.keys()];
    const back = events.find((e) => e.type === 'warning' && e.message.includes('answers again'))!;
    const fetchedAfter = events.filter((e) => e.type === 'fetch' && at.get(e)! > at.get(back)!).map((e) => at.get(e)! - at.get(back)!);
    expect(p.stats.recordsFetched).toBe(9);
    // The reads out when it came back: before, those behind the first slept out their backoff, seconds more.
    expect(Math.max(...fetchedAfter)).toBeLessThan(1000);
  });

  it('a server that never comes back: the run fails after the outage limit, saying why, without hanging', async () => {
    const server = await serve();
    const { p } = await open(server, { outageLimitMs: 1000 });
    await server.goAway();
    const started = Date.now();
    await expect(p.next()).rejects.toThrow(/^the dataset's server has not answered for \d+ s \(record .*\); the run stops$/);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('a manifest that does not come', () => {
  it('a server that sends part of it and then nothing: the read fails within its wait, saying so (a run sat at "loading" for good)', async () => {
    const server = await serve((path) => (path.endsWith('manifest.json') ? { stall: 10 } : undefined));
    const url = `${server.url}manifest.json`;
    const t0 = Date.now();
    await expect(fetchManifest(url, undefined, 300)).rejects.toThrow(`${url}: the server did not send it within 0.3 s`);
    expect(Date.now() - t0).toBeLessThan(3000);
    // A stop meanwhile is the stop's, not a timeout.
    const stop = new AbortController();
    const read = fetchManifest(url, stop.signal, 5000);
    stop.abort();
    await expect(read).rejects.not.toThrow('did not send it');
    // One that answers is read as before.
    await expect(fetchManifest(`${(await serve()).url}manifest.json`, undefined, 300)).resolves.toMatchObject({ splits: expect.any(Object) });
  });
});
