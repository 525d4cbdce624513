#!/usr/bin/env node
// A slow link in front of a dataset server, for experiments (docs/hosting.md).
//
//   node scripts/throttle-proxy.mjs --target http://localhost:8081 [--port 8082] [--delay 80] [--rate 2m]
//     Forwards every request (method, path, all headers: Range, If-Range, Origin...)
//     and every answer (status, headers, body). --delay waits that many ms before
//     forwarding each request, so each answer's first byte comes that much later.
//     --rate caps the bytes/s of all answers together, one shared link; k and m
//     as in nginx (1024, 1048576).
//
//   node scripts/throttle-proxy.mjs measure URL [--parallel 4] [--range bytes=0-99999]
//     After one warm-up request (the connection open, as the browser's would be),
//     fetches URL (N copies at once) and prints what the link really delivered:
//     time to first byte, bytes, and bytes/s over each whole answer and over all of them.
import { createServer, request as httpRequest, Agent } from 'node:http';
import { parseArgs } from 'node:util';

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    target: { type: 'string' },
    port: { type: 'string', default: '8082' },
    delay: { type: 'string', default: '0' },
    rate: { type: 'string', default: '0' },
    parallel: { type: 'string', default: '1' },
    range: { type: 'string' },
  },
});
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const bytes = (text) => {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/.exec(text);
  if (!m) throw new Error(`${text}: bytes per second, e.g. 500k or 2m (0 = no limit)`);
  return Number(m[1]) * { '': 1, k: 1024, m: 1024 ** 2 }[m[2]];
};
const fmt = (n) => (n >= 1024 ** 2 ? `${(n / 1024 ** 2).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${Math.round(n)} B`);

if (positionals[0] === 'measure') await measure(positionals[1], Number(opt.parallel), opt.range);
else proxy();

function proxy() {
  if (!opt.target) throw new Error('--target http://host:port (the server to forward to) is required');
  const target = new URL(opt.target);
  const delay = Number(opt.delay);
  const rate = bytes(opt.rate);
  const agent = new Agent({ keepAlive: true });
  // The link: one queue for all answers. Each piece of an answer takes its
  // turn and its time (size / rate) on it, as packets on one wire would.
  let linkFreeAt = 0;
  const PIECE = 16 * 1024;
  const send = async (res, chunk) => {
    for (let at = 0; at < chunk.byteLength; at += PIECE) {
      const piece = chunk.subarray(at, at + PIECE);
      if (rate > 0) {
        const now = performance.now();
        linkFreeAt = Math.max(now, linkFreeAt) + (piece.byteLength / rate) * 1000;
        await sleep(linkFreeAt - now);
      }
      if (res.destroyed) return;
      if (!res.write(piece)) await new Promise((ok) => res.once('drain', ok));
    }
  };
  const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);
  const keep = (headers) => Object.fromEntries(Object.entries(headers).filter(([name]) => !hopByHop.has(name)));

  createServer(async (req, res) => {
    if (delay > 0) await sleep(delay);
    const up = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...keep(req.headers), host: target.host }, agent },
      async (answer) => {
        res.writeHead(answer.statusCode ?? 502, keep(answer.headers));
        res.flushHeaders(); // headers go out at once, as on a real link: only the body waits its turn on the wire
        res.on('close', () => answer.destroy()); // the browser gave up: stop reading upstream
        try {
          for await (const chunk of answer) await send(res, chunk);
          res.end();
        } catch {
          res.destroy(); // upstream cut: cut the answer too, so the browser sees it
        }
      },
    );
    up.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`throttle-proxy: ${err.message}`);
    });
    req.pipe(up);
  }).listen(Number(opt.port), '127.0.0.1', () => {
    const limits = [delay > 0 ? `+${delay} ms before each request` : '', rate > 0 ? `${fmt(rate)}/s shared by all answers` : ''].filter(Boolean);
    console.log(`throttle-proxy: http://localhost:${opt.port} -> ${target.origin} (${limits.join(', ') || 'no limits'})`);
  });
}

async function measure(url, parallel, range) {
  if (!url) throw new Error('measure URL: the file to fetch');
  const one = async () => {
    const t0 = performance.now();
    const res = await fetch(url, { headers: range ? { Range: range } : {}, cache: 'no-store' });
    const reader = res.body.getReader();
    let ttfb;
    let n = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      ttfb ??= performance.now() - t0;
      n += value.byteLength;
    }
    return { status: res.status, n, ttfb: ttfb ?? performance.now() - t0, ms: performance.now() - t0 };
  };
  await (await fetch(url, { headers: { Range: 'bytes=0-0' }, cache: 'no-store' })).arrayBuffer(); // warm-up, not counted
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: parallel }, one));
  const wall = performance.now() - t0;
  for (const [i, r] of results.entries()) {
    const after = r.ms - r.ttfb;
    console.log(
      `#${i + 1} HTTP ${r.status}: first byte ${r.ttfb.toFixed(0)} ms, ${fmt(r.n)} in ${r.ms.toFixed(0)} ms` +
        ` = ${fmt((r.n / r.ms) * 1000)}/s (${after > 0 ? `${fmt((r.n / after) * 1000)}/s after the first byte` : 'one piece'})`,
    );
  }
  const total = results.reduce((s, r) => s + r.n, 0);
  console.log(`all ${parallel}: ${fmt(total)} in ${wall.toFixed(0)} ms = ${fmt((total / wall) * 1000)}/s`);
}
