// A static file server on loopback for benches that read datasets over HTTP:
// the files of one directory, held in memory, with Range support (206, 416) and
// an optional slow link. The link adds a fixed wait before each answer's headers
// (time to first byte) and paces each answer's body to a byte rate: since HTTP/1.1
// sends one answer at a time on a connection, that caps each connection, not the
// server as a whole. Counts requests, body bytes, new connections and how late
// the pacing ran, so a bench can say what the link really did.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface LinkProfile {
  /** Wait before the headers of every answer (time to first byte), ms; 0: none. */
  latencyMs: number;
  /** Body bytes per second per answer (so per connection); 0: no cap, the body is written at once. */
  bytesPerSecond: number;
}

export interface LinkCounters {
  requests: number;
  /** Body bytes written (206 and 200 answers). */
  bodyBytes: number;
  /** TCP connections accepted (keep-alive connections are reused across requests). */
  connections: number;
  /** Paced answers: how much later than latency + size / rate each one ended, ms. */
  lateMs: number[];
}

export interface LinkServer {
  /** Base URL, ending in '/'. */
  url: string;
  profile: LinkProfile;
  counters: LinkCounters;
  /** Zeroes the counters (the profile stays). */
  reset(): void;
  close(): Promise<void>;
}

/** Bytes written per paced write: 8 KiB, about 4 ms of a 2 MB/s link. */
export const PACE_CHUNK = 8192;

const emptyCounters = (): LinkCounters => ({ requests: 0, bodyBytes: 0, connections: 0, lateMs: [] });

/** Serves every file of `dir` (not its subdirectories) under its own name. */
export async function startLinkServer(dir: string, profile: LinkProfile): Promise<LinkServer> {
  const files = new Map<string, Uint8Array>();
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isFile()) files.set(e.name, new Uint8Array(readFileSync(join(dir, e.name))));
  const state: LinkServer = { url: '', profile, counters: emptyCounters(), reset: () => void (state.counters = emptyCounters()), close: async () => undefined };

  /** Writes `body` paced to the profile's rate: chunk k at start + k * PACE_CHUNK / rate, the end at start + size / rate. */
  const send = (res: ServerResponse, body: Uint8Array) => {
    const rate = state.profile.bytesPerSecond;
    if (rate <= 0) {
      res.end(body);
      return;
    }
    const start = performance.now();
    let at = 0;
    const step = () => {
      if (res.destroyed) return;
      if (at >= body.byteLength) {
        res.end();
        state.counters.lateMs.push(performance.now() - start - (body.byteLength / rate) * 1000);
        return;
      }
      res.write(body.subarray(at, at + PACE_CHUNK));
      at = Math.min(at + PACE_CHUNK, body.byteLength);
      setTimeout(step, Math.max(0, start + (at / rate) * 1000 - performance.now()));
    };
    step();
  };

  const server: Server = createServer((req, res) => {
    const answer = () => {
      state.counters.requests++;
      const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.slice(1));
      const file = files.get(name);
      if (!file) {
        res.writeHead(404).end('not found');
        return;
      }
      const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      if (!m) {
        state.counters.bodyBytes += file.byteLength;
        res.writeHead(200, { 'Content-Length': file.byteLength, 'Accept-Ranges': 'bytes' });
        send(res, file);
        return;
      }
      const start = Number(m[1]);
      const end = Math.min(m[2] ? Number(m[2]) : file.byteLength - 1, file.byteLength - 1);
      if (start >= file.byteLength) {
        res.writeHead(416, { 'Content-Range': `bytes */${file.byteLength}` }).end();
        return;
      }
      state.counters.bodyBytes += end - start + 1;
      res.writeHead(206, { 'Content-Range': `bytes ${start}-${end}/${file.byteLength}`, 'Content-Length': end - start + 1, 'Accept-Ranges': 'bytes' });
      send(res, file.subarray(start, end + 1));
    };
    if (state.profile.latencyMs > 0) setTimeout(answer, state.profile.latencyMs);
    else answer();
  });
  server.on('connection', () => void state.counters.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
