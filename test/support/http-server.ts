// A real HTTP server on loopback for tests: serves files from memory with Range
// support, and can misbehave on purpose (ignore Range, cut files short, drop or
// stall a response, answer 5xx, go away and come back on the same port).
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** ignore-range: answer 200 with the whole file; no-validators: send no ETag and ignore If-Range (as some static hosts do). */
export type Misbehaviour = 'none' | 'ignore-range' | 'no-validators';

/** What to do to one request, instead of answering it properly. */
export type Fault =
  | { status: number }
  /** Send the headers and the first `after` bytes of the body, then close the connection. */
  | { drop: number }
  /** Send the headers and the first `after` bytes, then nothing. */
  | { stall: number }
  /** Claim a Content-Length `lie` bytes longer than the body sent, then close. */
  | { lie: number }
  /** Answer the range's Content-Range but send only its first `short` bytes, with a Content-Length to match. */
  | { short: number }
  /** Send the body `trickle` bytes at a time, one piece every `everyMs`: slow but never stalled; `waitMs` before the headers (latency). */
  | { trickle: number; everyMs: number; waitMs?: number };

export interface TestServer {
  url: string;
  files: Map<string, Uint8Array>;
  /** Every request seen: path, Range header, status. */
  requests: { path: string; range: string | undefined; status: number }[];
  misbehave: Misbehaviour;
  /** Asked for every request before it is answered; a Fault returned is done instead. */
  fault?: ((path: string, range: string | undefined) => Fault | undefined) | undefined;
  /** Stops listening and drops every connection: the next requests fail to connect. */
  goAway(): Promise<void>;
  /** Listens again on the same port. */
  comeBack(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestServer(files: Map<string, Uint8Array>): Promise<TestServer> {
  const state: TestServer = {
    url: '',
    files,
    requests: [],
    misbehave: 'none',
    goAway: async () => undefined,
    comeBack: async () => undefined,
    close: async () => undefined,
  };
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
    const fault = state.fault?.(path, range);
    if (fault) {
      const m = range ? /^bytes=(\d+)-(\d*)$/.exec(range) : null;
      const start = m ? Number(m[1]) : 0;
      const end = Math.min(m?.[2] ? Number(m[2]) : body.byteLength - 1, body.byteLength - 1);
      const part = body.subarray(start, end + 1);
      const head = (length: number) =>
        res.writeHead(m ? 206 : 200, { 'Content-Length': length, ...(m ? { 'Content-Range': `bytes ${start}-${end}/${body.byteLength}` } : {}) });
      if ('status' in fault) {
        record(fault.status);
        res.writeHead(fault.status).end();
      } else if ('drop' in fault) {
        record(-1);
        head(part.byteLength);
        // A graceful close (FIN) after the bytes, so they reach the client before the connection ends.
        res.write(part.subarray(0, fault.drop), () => res.socket?.end());
      } else if ('stall' in fault) {
        record(0);
        head(part.byteLength);
        res.write(part.subarray(0, fault.stall));
      } else if ('short' in fault) {
        record(m ? 206 : 200);
        head(fault.short);
        res.end(part.subarray(0, fault.short));
      } else if ('lie' in fault) {
        record(-2);
        head(part.byteLength + fault.lie);
        res.write(part, () => res.socket?.end());
      } else {
        record(m ? 206 : 200);
        let at = 0;
        const send = () => {
          if (res.destroyed) return;
          res.write(part.subarray(at, at + fault.trickle));
          at += fault.trickle;
          if (at < part.byteLength) setTimeout(send, fault.everyMs);
          else res.end();
        };
        setTimeout(() => {
          if (res.destroyed) return;
          head(part.byteLength);
          send();
        }, fault.waitMs ?? 0);
      }
      return;
    }
    // A strong ETag from the content, and If-Range honoured: a changed file is answered whole (200).
    const validators = state.misbehave !== 'no-validators';
    const etag = `"${body.byteLength}-${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`;
    const ifRange = validators ? req.headers['if-range'] : undefined;
    const fresh = ifRange === undefined || ifRange === etag;
    const m = range && fresh && state.misbehave !== 'ignore-range' ? /^bytes=(\d+)-(\d*)$/.exec(range) : null;
    if (!m) {
      record(200);
      res
        .writeHead(200, {
          'Content-Length': body.byteLength,
          ...(validators ? { ETag: etag } : {}),
          'Accept-Ranges': state.misbehave === 'ignore-range' ? 'none' : 'bytes',
        })
        .end(body);
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
    res
      .writeHead(206, { 'Content-Range': `bytes ${start}-${end}/${body.byteLength}`, 'Content-Length': end - start + 1, ...(validators ? { ETag: etag } : {}) })
      .end(body.subarray(start, end + 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${port}/`;
  let listening = true;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!listening) return resolve();
      listening = false;
      server.closeAllConnections();
      server.close(() => resolve());
    });
  state.goAway = stop;
  state.comeBack = () =>
    new Promise((resolve) => {
      listening = true;
      server.listen(port, '127.0.0.1', resolve);
    });
  state.close = stop;
  return state;
}
