// Record prefixes already fetched, kept in IndexedDB (through idb) so a reload,
// a second epoch or a higher fidelity does not fetch them again: raising the
// fidelity asks the server only for the bytes after the cached prefix, lowering
// it needs no network. Why IndexedDB: bench/results/prefix-cache-store.md.
//
// Two stores: `entries` holds each prefix's metadata (size, checksum, the file's
// validator, last use) and is what eviction walks, least recently used first;
// `bytes` holds the prefix itself. The running total lives in `meta`, updated in
// the same transaction as every write, so the page and several workers can
// share one cache and its size limit. A lower limit applies at once: a cache
// opened with one (a run's workers) evicts down to it before anything else, so
// a run whose every read is a hit shrinks it too, and trim() applies one when
// the person lowers it. A prefix whose bytes no longer match the
// checksum (a cut or altered entry) is dropped and reported, never used.
import { openDB, type DBSchema, type IDBPDatabase, type IDBPTransaction } from 'idb';
import { Fnv1a } from '../shared/hash.js';

export interface CachedPrefix {
  bytes: Uint8Array;
  /** The server's ETag or Last-Modified for the file the bytes came from. */
  validator?: string;
}

interface Entry {
  url: string;
  size: number;
  checksum: number;
  validator?: string;
  usedAt: number;
}

interface Schema extends DBSchema {
  entries: { key: string; value: Entry; indexes: { usedAt: number } };
  bytes: { key: string; value: Uint8Array };
  meta: { key: 'total'; value: number };
}

export interface CacheUsage {
  bytes: number;
  entries: number;
}

const checksum = (bytes: Uint8Array) => {
  const h = new Fnv1a();
  for (let i = 0; i < bytes.byteLength; i++) h.byte(bytes[i]!);
  return h.value;
};

type WriteTx = IDBPTransaction<Schema, ('entries' | 'bytes' | 'meta')[], 'readwrite'>;

/** Deletes the least recently used entries (not `keep`) while `total` exceeds `limitBytes`; returns the total left. */
async function evict(tx: WriteTx, total: number, limitBytes: number, keep?: string): Promise<number> {
  for (let cursor = await tx.objectStore('entries').index('usedAt').openCursor(); cursor && total > limitBytes; cursor = await cursor.continue()) {
    if (cursor.value.url === keep) continue;
    total -= cursor.value.size;
    await Promise.all([cursor.delete(), tx.objectStore('bytes').delete(cursor.value.url)]);
  }
  return total;
}

let lastStamp = 0;
/** Milliseconds since 1970, but strictly increasing here, so two uses in one millisecond keep their order. */
const stamp = () => (lastStamp = Math.max(Date.now(), lastStamp + 1));

export class PrefixCache {
  private db: Promise<IDBPDatabase<Schema>> | undefined;

  /** `limitBytes` 0 keeps nothing. `name` is the IndexedDB database (tests use their own). */
  constructor(
    readonly limitBytes: number,
    private readonly name = 'bytelab-cache',
  ) {}

  /** Whether this context has IndexedDB at all (Node does not, without a stand-in). */
  static get available(): boolean {
    return typeof indexedDB !== 'undefined';
  }

  /** The database; a cache with a limit (0 is the page's reader, which keeps nothing of its own) first evicts down to it. */
  private open(): Promise<IDBPDatabase<Schema>> {
    this.db ??= openDB<Schema>(this.name, 1, {
      upgrade(d) {
        d.createObjectStore('entries', { keyPath: 'url' }).createIndex('usedAt', 'usedAt');
        d.createObjectStore('bytes');
        d.createObjectStore('meta');
      },
    }).then(async (d) => {
      // A trim that fails is not the reads' failure: the next write evicts to the limit anyway.
      if (this.limitBytes > 0) await this.evictTo(d, this.limitBytes).catch(() => undefined);
      return d;
    });
    return this.db;
  }

  /** Evicts the least recently used entries until the cache holds at most `limitBytes` (the person lowered the limit). */
  async trim(limitBytes: number): Promise<void> {
    await this.evictTo(await this.open(), limitBytes);
  }

  private async evictTo(d: IDBPDatabase<Schema>, limitBytes: number): Promise<void> {
    const tx = d.transaction(['entries', 'bytes', 'meta'], 'readwrite');
    const total = await evict(tx, (await tx.objectStore('meta').get('total')) ?? 0, limitBytes);
    await tx.objectStore('meta').put(total, 'total');
    await tx.done;
  }

  /** The cached prefix of `url`, or undefined; 'corrupt' when the stored bytes fail their checksum (the entry is then dropped). */
  async read(url: string): Promise<CachedPrefix | 'corrupt' | undefined> {
    const d = await this.open();
    const tx = d.transaction(['entries', 'bytes'], 'readonly');
    const [entry, bytes] = await Promise.all([tx.objectStore('entries').get(url), tx.objectStore('bytes').get(url), tx.done]);
    if (!entry) return undefined;
    if (!bytes || bytes.byteLength !== entry.size || checksum(bytes) !== entry.checksum) {
      await this.remove(url);
      return 'corrupt';
    }
    // Last use, for eviction. Not awaited: a hit need not wait for a write, and IndexedDB runs this transaction
    // before any later write that overlaps it, so eviction still sees it.
    void this.touch(d, url, entry.checksum).catch(() => undefined);
    return { bytes, ...(entry.validator ? { validator: entry.validator } : {}) };
  }

  /** Marks an entry used now, unless another worker replaced it meanwhile (its size and checksum are then theirs to keep). */
  private async touch(d: IDBPDatabase<Schema>, url: string, checksum: number): Promise<void> {
    const tx = d.transaction('entries', 'readwrite');
    const current = await tx.store.get(url);
    if (current?.checksum === checksum) await tx.store.put({ ...current, usedAt: stamp() });
    await tx.done;
  }

  /** Stores (or replaces) the prefix of `url`, then evicts the least recently used entries until the total fits the limit. */
  async write(url: string, bytes: Uint8Array, validator?: string): Promise<void> {
    if (bytes.byteLength > this.limitBytes) return;
    const d = await this.open();
    const tx = d.transaction(['entries', 'bytes', 'meta'], 'readwrite');
    const entries = tx.objectStore('entries');
    const old = await entries.get(url);
    let total = ((await tx.objectStore('meta').get('total')) ?? 0) - (old?.size ?? 0) + bytes.byteLength;
    const entry: Entry = { url, size: bytes.byteLength, checksum: checksum(bytes), usedAt: stamp(), ...(validator ? { validator } : {}) };
    await Promise.all([entries.put(entry), tx.objectStore('bytes').put(bytes, url)]);
    total = await evict(tx, total, this.limitBytes, url);
    await tx.objectStore('meta').put(total, 'total');
    await tx.done;
  }

  async remove(url: string): Promise<void> {
    const d = await this.open();
    const tx = d.transaction(['entries', 'bytes', 'meta'], 'readwrite');
    const old = await tx.objectStore('entries').get(url);
    if (old) {
      const total = (await tx.objectStore('meta').get('total')) ?? 0;
      await Promise.all([tx.objectStore('entries').delete(url), tx.objectStore('bytes').delete(url), tx.objectStore('meta').put(total - old.size, 'total')]);
    }
    await tx.done;
  }

  async usage(): Promise<CacheUsage> {
    const d = await this.open();
    const tx = d.transaction(['entries', 'meta'], 'readonly');
    const [bytes, entries] = await Promise.all([tx.objectStore('meta').get('total'), tx.objectStore('entries').count(), tx.done]);
    return { bytes: bytes ?? 0, entries };
  }

  async clear(): Promise<void> {
    const d = await this.open();
    const tx = d.transaction(['entries', 'bytes', 'meta'], 'readwrite');
    await Promise.all([tx.objectStore('entries').clear(), tx.objectStore('bytes').clear(), tx.objectStore('meta').clear(), tx.done]);
  }

  close(): void {
    void this.db?.then((d) => d.close());
    this.db = undefined;
  }
}
