// The link's busy time (link-clock.ts), the network part of the upstream time
// behind the page's R and auto echo: first on a made-up clock, then through a
// real shared link (scripts/throttle-proxy.mjs) with the trainer fast and slow.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import { ImagePipeline } from '../../../src/pipeline/image-pipeline.js';
import { LinkClock } from '../../../src/pipeline/link-clock.js';
import { pcrRecords } from '../../../src/pipeline/pcr-records.js';
import { buildFixture } from '../../support/fixtures.js';
import { startTestServer } from '../../support/http-server.js';
import { testPipelineOptions } from '../../support/pipeline-options.js';

function fakeClock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('link clock', () => {
  it('counts bodies on the link at the same time once, and waits once per slot', () => {
    const c = fakeClock();
    const link = new LinkClock(4, c.now);
    const reads = [link.read(), link.read(), link.read(), link.read()];
    c.advance(100); // four answers awaited together: 4 x 100 / 4
    for (const r of reads) r.headers();
    c.advance(1000); // four bodies sharing the link
    reads.slice(0, 3).forEach((r) => r.done());
    c.advance(200);
    expect(link.busyMs()).toBe(100 + 1200); // a body still in flight counts up to now
    reads[3]!.done();
    c.advance(500); // nothing in flight
    expect(link.busyMs()).toBe(1300);
  });

  it('gives the same time for the same bytes on a shared link whether one read or four are out', () => {
    // A link of 1 byte/ms with no latency: four reads of 1000 bytes take 4000 ms together, or 1000 ms each one after another.
    const together = fakeClock();
    const a = new LinkClock(4, together.now);
    const four = [a.read(), a.read(), a.read(), a.read()];
    for (const r of four) r.headers();
    together.advance(4000);
    for (const r of four) r.done();
    const alone = fakeClock();
    const b = new LinkClock(4, alone.now);
    for (let i = 0; i < 4; i++) {
      const r = b.read();
      r.headers();
      alone.advance(1000);
      r.done();
      alone.advance(300); // the trainer is the slow side: the link idles between reads
    }
    expect(a.busyMs()).toBe(4000);
    expect(b.busyMs()).toBe(4000);
  });

  it('puts a failed try back to waiting, and ignores calls after the end', () => {
    const c = fakeClock();
    const link = new LinkClock(2, c.now);
    const r = link.read();
    r.headers();
    c.advance(300); // a body that broke off
    r.retry();
    c.advance(200); // backoff and the next answer: waiting, over 2 slots
    r.headers();
    c.advance(100);
    r.done();
    r.done();
    r.headers();
    c.advance(1000);
    expect(link.busyMs()).toBe(300 + 100 + 100);
  });
});

describe('reads to fill the link', () => {
  /** One whole read: `waitMs` to the answer's headers, then `bodyMs` of body. */
  function read(link: LinkClock, c: ReturnType<typeof fakeClock>, waitMs: number, bodyMs: number): void {
    const r = link.read();
    c.advance(waitMs);
    r.headers();
    c.advance(bodyMs);
    r.done();
  }

  it('is 1 until a read has ended, and on a link that bandwidth bounds', () => {
    const c = fakeClock();
    const link = new LinkClock(4, c.now);
    expect(link.readsToFill()).toBe(1);
    read(link, c, 40, 3900); // 157 kB at 40 kB/s
    expect(link.readsToFill()).toBe(1);
  });

  it('is 1 + wait / body, rounded, where latency bounds the link, and follows a link that changes', () => {
    const c = fakeClock();
    const link = new LinkClock(4, c.now);
    read(link, c, 200, 100);
    expect(link.readsToFill()).toBe(3);
    read(link, c, 30, 100); // means 115 and 100: 2.15
    expect(link.readsToFill()).toBe(2);
    for (let i = 0; i < 24; i++) read(link, c, 50, 3); // a CDN: 50 ms to the first byte, 3 ms of body
    expect(link.readsToFill()).toBeGreaterThan(10);
    for (let i = 0; i < 16; i++) read(link, c, 40, 3900);
    expect(link.readsToFill()).toBe(1);
  });

  it('learns nothing from a read that failed or retried (its wait is a backoff, its body cut short)', () => {
    const c = fakeClock();
    const link = new LinkClock(4, c.now);
    read(link, c, 200, 100); // a link latency bounds: 3
    expect(link.readsToFill()).toBe(3);
    const failed = link.read(); // headers, then the body breaks off after 1 ms
    c.advance(10);
    failed.headers();
    c.advance(1);
    failed.failed();
    const retried = link.read(); // a try that broke off, a long backoff, then a whole answer with a 1 ms body
    retried.headers();
    c.advance(10);
    retried.retry();
    c.advance(5000);
    retried.headers();
    c.advance(1);
    retried.done();
    expect(link.readsToFill()).toBe(3);
  });

  it('takes a body too fast for the clock as a link that latency bounds', () => {
    const c = fakeClock();
    const link = new LinkClock(4, c.now);
    read(link, c, 50, 0);
    expect(link.readsToFill()).toBe(Number.POSITIVE_INFINITY);
  });
});

// Through a real link: bytes/s shared by all answers (the same proxy the benches use).
const RATE = 40 * 1024;
const fixture = await buildFixture({ train: 120, recordSize: 10 }); // 12 records of 10 16x16 images
const server = await startTestServer(new Map(fixture.files));
const proxy = await startProxy(server.url, RATE);
afterAll(async () => {
  proxy.child.kill();
  await server.close();
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise((ok) => s.close(ok));
  return port;
}

async function startProxy(target: string, rate: number): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['scripts/throttle-proxy.mjs', '--target', target, '--port', String(port), '--rate', String(rate)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('throttle-proxy:') && ok());
    child.on('exit', (code) => fail(new Error(`throttle-proxy exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}/` };
}

/** Reads the split through the link, waiting `trainerMs` per batch; the pipeline's upstream time per byte, in ms. */
async function upstreamMsPerByte(trainerMs: number): Promise<number> {
  const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
  await p.open(testPipelineOptions(`${proxy.url}manifest.json`, { requestsInFlight: 4 }));
  while (await p.next()) await new Promise((ok) => setTimeout(ok, trainerMs));
  p.close();
  const stats = p.statsNow();
  return stats.linkBusyMs / stats.bytesFetched;
}

describe('upstream time over a shared link', () => {
  it('reads the link at its rate whether the pipeline or the trainer is the slow side', async () => {
    const linkMsPerByte = 1000 / RATE;
    const upstreamBound = await upstreamMsPerByte(0);
    // ~110 ms of link per batch; a trainer at 300 ms per batch leaves one read out at a time once the reads ahead are done.
    const trainerBound = await upstreamMsPerByte(300);
    expect(upstreamBound / linkMsPerByte).toBeGreaterThan(0.8);
    expect(upstreamBound / linkMsPerByte).toBeLessThan(1.5);
    // Summing read times over the 4 slots read this case at about half the link's time.
    expect(trainerBound / linkMsPerByte).toBeGreaterThan(0.8);
    expect(trainerBound / linkMsPerByte).toBeLessThan(1.5);
  }, 30_000);
});
