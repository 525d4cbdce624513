// Reads byte ranges of dataset files with HTTP Range requests, and survives
// what real links do: a dropped connection resumes from the last byte received,
// a stalled one is abandoned when no byte arrives for a while (a big record on
// a slow link is not), and 5xx, 408 and 429 answers are tried again with
// growing, jittered waits. What cannot get better by trying again (404, 416, an
// HTML page, a wrong range) fails at once with a FetchError. Servers that ignore
// Range get their 200 answer cut to the bytes asked for.
// Datasets built in the browser (idb://local/...) are read from IndexedDB.
import { LOCAL_PREFIX, readLocalFile } from '../storage/local-datasets.js';

export interface FetchPolicy {
  /** Tries per read, the first included. */
  attempts: number;
  /** Wait before the first retry; it doubles each retry (times a random 0.5-1.5). */
  backoffMs: number;
  /** Give up on one try when no byte arrives for this long: lack of progress, not total time. */
  stallMs: number;
}

const DEFAULT_FETCH_POLICY: FetchPolicy = { attempts: 4, backoffMs: 500, stallMs: 15_000 };

/** The data is not there or not usable; trying again cannot help. */
export class FetchError extends Error {
  override name = 'FetchError';
}

/** The link failed (network error, stall, cut body, 5xx/408/429); the same request may work later. */
export class TransientFetchError extends Error {
  override name = 'TransientFetchError';
}

export interface RangeRequest {
  url: string;
  /** First byte wanted (default 0). */
  start?: number;
  /** One past the last byte wanted. */
  end: number;
  signal?: AbortSignal | undefined;
  policy?: Partial<FetchPolicy> | undefined;
  /**
   * An ETag or Last-Modified value from an earlier read (sent as If-Range): if
   * the file changed since, the server answers 200 and `changed` is set.
   */
  validator?: string | undefined;
  /** Called before each retry, with the failure and the wait. */
  onRetry?: ((error: Error, attempt: number, waitMs: number) => void) | undefined;
  /** Called when a try's answer (its headers) arrives, before its body is read. */
  onHeaders?: (() => void) | undefined;
}

export interface RangeResponse {
  /** Bytes [start, start + bytes.byteLength): fewer than asked only when the file is shorter. */
  bytes: Uint8Array;
  /** Status of the answer the bytes finally came from. */
  status: number;
  /** Bytes asked for (end - start). */
  requested: number;
  /** Tries it took (1 when nothing failed). */
  attempts: number;
  /** ETag (or Last-Modified) of the file the bytes are from, if the server gave one. */
  validator?: string;
  /** The server said the file differs from `validator`. */
  changed?: boolean;
  /** Set when the server did something other than answer the range in full (the caller names the file). */
  warning?: string;
}

/** Bytes [start, end) of `url`, tried again on transient failures as `policy` allows. */
export async function fetchRange(request: RangeRequest): Promise<RangeResponse> {
  const { url, end, signal } = request;
  const start = request.start ?? 0;
  if (url.startsWith(LOCAL_PREFIX)) return readLocalRange(url, start, end);
  const policy = { ...DEFAULT_FETCH_POLICY, ...request.policy };
  const sink: Sink = { out: new Uint8Array(Math.max(0, end - start)), filled: 0 };
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = await fetchOnce(url, start, sink, policy.stallMs, signal, request.validator, request.onHeaders);
      return { bytes: sink.out.subarray(0, sink.filled), requested: end - start, attempts: attempt, ...answer };
    } catch (err) {
      if (signal?.aborted || !(err instanceof TransientFetchError) || attempt >= policy.attempts) {
        if (err instanceof TransientFetchError && attempt > 1) err.message += ` (after ${attempt} tries)`;
        throw err;
      }
      const waitMs = Math.round(policy.backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random()));
      request.onRetry?.(err, attempt, waitMs);
      await sleep(waitMs, signal);
    }
  }
}

/** Bytes [0, length) of `url`: a record prefix. */
export function fetchPrefix(url: string, length: number, signal?: AbortSignal, policy?: Partial<FetchPolicy>): Promise<RangeResponse> {
  return fetchRange({ url, end: length, signal, policy });
}

/** Where one read's bytes go; `filled` survives a failed try, so the next one resumes there. */
interface Sink {
  out: Uint8Array;
  filled: number;
}

type Answer = Pick<RangeResponse, 'status' | 'validator' | 'changed' | 'warning'>;

/** One request for the sink's missing bytes, [start + filled, start + out.length). */
async function fetchOnce(
  url: string,
  start: number,
  sink: Sink,
  stallMs: number,
  signal: AbortSignal | undefined,
  validator?: string,
  onHeaders?: () => void,
): Promise<Answer> {
  const from = start + sink.filled;
  const end = start + sink.out.byteLength;
  const attempt = new AbortController();
  let stalled = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The stall clock restarts with every chunk that arrives.
  const progress = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stalled = true;
      attempt.abort();
    }, stallMs);
  };
  const headers: Record<string, string> = { Range: `bytes=${from}-${end - 1}` };
  // If-Range on a resumed read too: the bytes already held must come from the same file.
  if (validator) headers['If-Range'] = validator;
  progress();
  try {
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: signal ? AbortSignal.any([signal, attempt.signal]) : attempt.signal, cache: 'no-store' });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new TransientFetchError(stalled ? `no answer within ${stallMs} ms` : `network error (${(err as Error).message})`);
    }
    onHeaders?.();
    const status = res.status;
    // If-Range takes only a strong validator: a weak ETag (W/"...", as some dev servers send) makes the server send the whole file.
    const etag = res.headers.get('etag');
    const answered = (etag && !etag.startsWith('W/') ? etag : res.headers.get('last-modified')) ?? undefined;
    const changed = validator !== undefined && answered !== validator;
    if (status === 408 || status === 429 || status >= 500) {
      await res.body?.cancel().catch(() => undefined);
      throw new TransientFetchError(`HTTP ${status}${res.statusText ? ` ${res.statusText}` : ''}`);
    }
    if (status === 416) {
      await res.body?.cancel().catch(() => undefined);
      const size = /\/(\d+)$/.exec(res.headers.get('content-range') ?? '')?.[1];
      throw new FetchError(`HTTP 416: byte ${from} is past the end of the file${size ? ` (${size} bytes)` : ''}`);
    }
    if (status !== 206 && status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new FetchError(`HTTP ${status}${res.statusText ? ` ${res.statusText}` : ''}`);
    }
    // Single-page-app servers (Vite's dev server among them) answer a missing file with index.html.
    if ((res.headers.get('content-type') ?? '').startsWith('text/html')) {
      await res.body?.cancel().catch(() => undefined);
      throw new FetchError(`the server sent an HTML page (HTTP ${status}), not a record; the file is probably missing`);
    }
    let fileSize: number | undefined;
    let skip = 0;
    let warning: string | undefined;
    if (status === 206) {
      const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(res.headers.get('content-range') ?? '');
      if (!range || Number(range[1]) !== from) {
        await res.body?.cancel().catch(() => undefined);
        // A server on another origin may send Content-Range and still have the browser hide it from the page.
        if (!res.headers.has('content-range') && res.type === 'cors') {
          throw new FetchError(
            `the server answered bytes=${from}-${end - 1} (HTTP 206) without a Content-Range this page may read: a server on another origin ` +
              'must send Access-Control-Expose-Headers: Content-Range (docs/hosting.md)',
          );
        }
        throw new FetchError(`the server answered a different range (${res.headers.get('content-range') ?? 'no Content-Range'}) to bytes=${from}-${end - 1}`);
      }
      if (range[3] !== '*') fileSize = Number(range[3]);
    } else {
      // The whole file from byte 0 (Range ignored, or the file changed under If-Range): start over from it.
      sink.filled = 0;
      skip = start;
      const length = res.headers.get('content-length');
      if (length !== null) fileSize = Number(length);
      if (!changed) warning = `the server ignored the Range header (HTTP 200 instead of 206); read the bytes asked for and dropped the rest`;
    }
    await readInto(res, sink, skip, progress, () => stalled, signal);
    if (sink.filled < sink.out.byteLength) {
      const held = start + sink.filled;
      // The file has more than we got: the answer was cut (a dropped connection, a Content-Length that lied).
      if (fileSize !== undefined && fileSize > held) throw new TransientFetchError(`the answer ended at byte ${held}; the file has ${fileSize} bytes`);
      const note = shortNote(start, end, held);
      warning = warning ? `${warning}; ${note}` : note;
    }
    return { status, ...(answered ? { validator: answered } : {}), ...(changed ? { changed } : {}), ...(warning ? { warning } : {}) };
  } finally {
    clearTimeout(timer);
  }
}

/** Copies the body into the sink after skipping `skip` bytes; stops reading once the sink is full. */
async function readInto(res: Response, sink: Sink, skip: number, progress: () => void, stalled: () => boolean, signal?: AbortSignal): Promise<void> {
  if (!res.body) return;
  const reader = res.body.getReader();
  const limit = sink.out.byteLength;
  try {
    while (sink.filled < limit) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        if (signal?.aborted) throw err;
        const held = `${sink.filled} of ${limit} bytes`;
        throw new TransientFetchError(stalled() ? `stalled: no byte for a while after ${held}` : `connection dropped after ${held}`);
      }
      if (chunk.done) break;
      progress();
      let value = chunk.value;
      if (skip > 0) {
        const dropped = Math.min(skip, value.byteLength);
        skip -= dropped;
        value = value.subarray(dropped);
      }
      const take = Math.min(value.byteLength, limit - sink.filled);
      sink.out.set(value.subarray(0, take), sink.filled);
      sink.filled += take;
    }
  } finally {
    // Stop the download once we have what we need (matters when Range was ignored).
    if (sink.filled >= limit) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** A range of a dataset file stored in this browser (src/storage/local-datasets.ts), answered like a Range request. */
async function readLocalRange(url: string, start: number, end: number): Promise<RangeResponse> {
  const stored = await readLocalFile(url);
  if (!stored) throw new FetchError(`${url}: not in this browser's storage`);
  const bytes = stored.subarray(start, end);
  const short = bytes.byteLength < end - start;
  return {
    bytes,
    status: 206,
    requested: end - start,
    attempts: 1,
    ...(short ? { warning: shortNote(start, end, start + bytes.byteLength) } : {}),
  };
}

function shortNote(start: number, end: number, held: number): string {
  return `asked for ${end - start} bytes${start > 0 ? ` from byte ${start}` : ''}, got ${held - start} (file shorter than the manifest says)`;
}

/** Waits `ms`, or rejects as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
