// Reads a prefix of a record with one HTTP Range request, and copes with
// servers that ignore Range (200 with the whole file) or send too little.
// Datasets built in the browser (idb://local/...) are read from IndexedDB.
import { LOCAL_PREFIX, readLocalFile } from '../storage/local-datasets.js';

export interface PrefixResponse {
  bytes: Uint8Array;
  status: number;
  /** Bytes asked for. */
  requested: number;
  /** Set when the server did something other than answer the range in full (the caller names the file). */
  warning?: string;
}

class FetchError extends Error {
  override name = 'FetchError';
}

/** A record read that makes no progress for this long is abandoned, so a stalled server cannot hang the run. */
const DEFAULT_FETCH_TIMEOUT_MS = 30_000;

/**
 * Fetches bytes [0, length) of `url`. Reads at most `length` bytes off the wire
 * even if the server sends more, and gives up after `timeoutMs`.
 */
export async function fetchPrefix(url: string, length: number, signal?: AbortSignal, timeoutMs = DEFAULT_FETCH_TIMEOUT_MS): Promise<PrefixResponse> {
  if (url.startsWith(LOCAL_PREFIX)) return readLocalPrefix(url, length);
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    return await fetchPrefixOnce(url, length, both);
  } catch (err) {
    if (timeout.aborted && !signal?.aborted) throw new FetchError(`${url}: no complete answer within ${timeoutMs} ms`);
    throw err;
  }
}

async function fetchPrefixOnce(url: string, length: number, signal: AbortSignal): Promise<PrefixResponse> {
  const res = await fetch(url, { headers: { Range: `bytes=0-${length - 1}` }, signal, cache: 'no-store' });
  if (res.status !== 206 && res.status !== 200) {
    await res.body?.cancel();
    throw new FetchError(`${url}: HTTP ${res.status} ${res.statusText}`);
  }
  // Single-page-app servers (Vite's dev server among them) answer a missing file with index.html.
  if ((res.headers.get('content-type') ?? '').startsWith('text/html')) {
    await res.body?.cancel();
    throw new FetchError(`${url}: the server sent an HTML page (HTTP ${res.status}), not a record; the file is probably missing`);
  }
  let warning: string | undefined;
  if (res.status === 206) {
    const range = res.headers.get('content-range');
    if (range && !range.startsWith('bytes 0-')) {
      await res.body?.cancel();
      throw new FetchError(`${url}: server answered a different range (${range})`);
    }
  } else {
    warning = `the server ignored the Range header (HTTP 200 instead of 206); read the first ${length} bytes and dropped the rest`;
  }
  const bytes = await readAtMost(res, length);
  if (bytes.byteLength < length) {
    const note = `asked for ${length} bytes, got ${bytes.byteLength} (file shorter than the manifest says)`;
    warning = warning ? `${warning}; ${note}` : note;
  }
  return { bytes, status: res.status, requested: length, ...(warning ? { warning } : {}) };
}

/** A prefix of a dataset file stored in this browser (src/storage/local-datasets.ts), answered like a Range request. */
async function readLocalPrefix(url: string, length: number): Promise<PrefixResponse> {
  const stored = await readLocalFile(url);
  if (!stored) throw new FetchError(`${url}: not in this browser's storage`);
  const bytes = stored.subarray(0, length);
  return {
    bytes,
    status: 206,
    requested: length,
    ...(bytes.byteLength < length ? { warning: `asked for ${length} bytes, got ${bytes.byteLength} (file shorter than the manifest says)` } : {}),
  };
}

async function readAtMost(res: Response, limit: number): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0);
  const out = new Uint8Array(limit);
  let filled = 0;
  const reader = res.body.getReader();
  try {
    while (filled < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = Math.min(value.byteLength, limit - filled);
      out.set(value.subarray(0, take), filled);
      filled += take;
    }
  } finally {
    // Stop the download once we have what we need (matters when Range was ignored).
    if (filled >= limit) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  return out.subarray(0, filled);
}
