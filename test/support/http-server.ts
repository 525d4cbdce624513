// A real HTTP server on loopback for tests: serves files from memory with Range
// support, and can misbehave on purpose (ignore Range, cut files short).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Misbehaviour = 'none' | 'ignore-range' | 'stall-records';

export interface TestServer {
  url: string;
  files: Map<string, Uint8Array>;
  /** Every request seen: path, Range header, status. */
  requests: { path: string; range: string | undefined; status: number }[];
  misbehave: Misbehaviour;
  close(): Promise<void>;
}

export async function startTestServer(files: Map<string, Uint8Array>): Promise<TestServer> {
  const state: TestServer = { url: '', files, requests: [], misbehave: 'none', close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.slice(1));
    const body = files.get(path);
    const range = req.headers.range;
    const record = (status: number) => state.requests.push({ path, range, status });
    if (!body) {
      record(404);
      res.writeHead(404).end('not found');
      return;
    }
    if (state.misbehave === 'stall-records' && path.endsWith('.pcr')) {
      record(0);
      res.writeHead(206, { 'Content-Length': body.byteLength }); // headers, then silence
      res.write(body.subarray(0, 10));
      return;
    }
    const m = range && state.misbehave !== 'ignore-range' ? /^bytes=(\d+)-(\d*)$/.exec(range) : null;
    if (!m) {
      record(200);
      res.writeHead(200, { 'Content-Length': body.byteLength, 'Accept-Ranges': state.misbehave === 'ignore-range' ? 'none' : 'bytes' }).end(body);
      return;
    }
    const start = Number(m[1]);
    const end = Math.min(m[2] ? Number(m[2]) : body.byteLength - 1, body.byteLength - 1);
    if (start >= body.byteLength) {
      record(416);
      res.writeHead(416, { 'Content-Range': `bytes */${body.byteLength}` }).end();
      return;
    }
    record(206);
    res.writeHead(206, { 'Content-Range': `bytes ${start}-${end}/${body.byteLength}`, 'Content-Length': end - start + 1 }).end(body.subarray(start, end + 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  state.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
