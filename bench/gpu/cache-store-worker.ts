// The dedicated worker of the prefix-cache store benchmark: caches record
// prefixes (bytes plus length, ETag and SHA-256) in IndexedDB (through idb),
// the Cache API and OPFS (sync access handles), the way the pipeline worker
// would, and times each operation. Every byte read back is checked against the
// SHA-256 of what was written. Started by bench/gpu/cache-store.ts; the driver
// is bench/prefix-cache-store.ts.
import { type IDBPDatabase, deleteDB, openDB } from 'idb';

export type StoreName = 'idb' | 'cache' | 'opfs';
export const STORES: StoreName[] = ['idb', 'cache', 'opfs'];
export type OpName = 'write' | 'read' | 'extend' | 'readFull' | 'cold' | 'delete';
export const OPS: OpName[] = ['write', 'read', 'extend', 'readFull', 'cold', 'delete'];

export interface CacheStoreConfig {
  mode: 'bench' | 'persist-write' | 'persist-check';
  entries: number;
  rounds: number;
  warmup: number;
  manifestUrl: string;
  /** Index of the first store pass to run: a worker restarted after a stall resumes with the pass that stalled. */
  resumeFrom: number;
}

/** What navigator.storage.estimate() said, with Chromium's per-type breakdown when it gives one. */
export interface Usage {
  usage: number;
  quota: number;
  details?: Record<string, number>;
}

export interface SizeClass {
  name: string;
  /** Per entry: group-2 prefix length and full length, in bytes. */
  prefixBytes: number;
  fullBytes: number;
  source: string;
}

export interface StoreRun {
  round: number;
  warmup: boolean;
  sizeClass: string;
  store: StoreName;
  /** Position of this store within its round and size class (0 = first). */
  position: number;
  ms: Record<OpName, number>;
  /** Payload bytes each op moves: the same numerator for every store. */
  bytes: Record<OpName, number>;
  /** Before writing, after writing the prefixes, after extending, after deleting. */
  usage: { before: Usage; afterWrite: Usage; afterExtend: Usage; afterDelete: Usage };
}

export interface Availability {
  indexedDB: boolean;
  caches: boolean;
  getDirectory: boolean;
  createSyncAccessHandle: boolean;
  persisted: boolean | null;
  quota: number;
}

/** A store pass in which one storage call never settled; the page restarted the worker and ran the pass again. */
export interface Stall {
  pass: number;
  round: number;
  sizeClass: string;
  store: StoreName;
  /** The operation (or set-up step) and entry index it stopped at, and the call it was waiting on. */
  at: string;
  probe: string;
}

export interface CacheStoreResults {
  config: CacheStoreConfig;
  entries: number;
  classes: SizeClass[];
  availability: Availability;
  runs: StoreRun[];
  stalls: Stall[];
}

export interface PersistResults {
  mode: 'persist-write' | 'persist-check';
  /** Per store: whether the entry written before the browser restart was read back intact. */
  found: Record<StoreName, boolean>;
  detail: Record<StoreName, string>;
}

export type WorkerMessage =
  | { type: 'progress'; text: string }
  | { type: 'run'; run: StoreRun }
  | { type: 'stall'; stall: Stall }
  | { type: 'done'; results: CacheStoreResults | PersistResults }
  | { type: 'error'; message: string };

// --- worker globals (this file is type-checked with the DOM lib; these are the WebWorker shapes it uses)

interface SyncAccessHandle {
  read(buffer: Uint8Array, options?: { at?: number }): number;
  write(buffer: Uint8Array, options?: { at?: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}
type SyncFileHandle = FileSystemFileHandle & { createSyncAccessHandle(): Promise<SyncAccessHandle> };
const scope = self as unknown as { postMessage(m: WorkerMessage): void; onmessage: ((e: MessageEvent<CacheStoreConfig>) => void) | null };
const post = (m: WorkerMessage): void => scope.postMessage(m);

// --- entries

type Bytes = Uint8Array<ArrayBuffer>;

interface Meta {
  length: number;
  etag: string;
  hash: string;
}

interface Entry {
  key: string;
  /** Own buffer (IndexedDB clones a view's whole buffer). */
  prefix: Bytes;
  /** The full record; `full.subarray(prefix.length)` is what a fidelity increase fetches. */
  full: Bytes;
  prefixMeta: Meta;
  fullMeta: Meta;
}

async function sha256(bytes: Bytes): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function meta(bytes: Bytes): Promise<Meta> {
  const hash = await sha256(bytes);
  return { length: bytes.length, etag: `"${hash.slice(0, 16)}-${bytes.length}"`, hash };
}

function randomBytes(n: number): Bytes {
  const out = new Uint8Array(n);
  for (let at = 0; at < n; at += 65536) crypto.getRandomValues(out.subarray(at, Math.min(n, at + 65536)));
  return out;
}

interface ManifestRecord {
  file: string;
  groupEnds: number[];
}

async function loadRecords(manifestUrl: string): Promise<{ url: string; groupEnds: number[]; bytes: Bytes }[]> {
  const manifest = (await (await fetch(manifestUrl)).json()) as { splits: Record<string, { records: ManifestRecord[] }> };
  const records = Object.values(manifest.splits).flatMap((s) => s.records);
  return Promise.all(
    records.map(async (r) => {
      const url = new URL(r.file, manifestUrl).href;
      const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
      if (bytes.length !== r.groupEnds.at(-1)) throw new Error(`${url}: ${bytes.length} bytes, manifest says ${r.groupEnds.at(-1)}`);
      return { url, groupEnds: r.groupEnds, bytes };
    }),
  );
}

/**
 * Two size classes. "records": entry i is bundled record i mod R, real bytes, its group-2 prefix then the full record.
 * "256 KiB": full entries of 256 KiB of random bytes (incompressible, like JPEG scans), prefix at the same group-2 share as record i mod R.
 */
async function buildClasses(manifestUrl: string, n: number): Promise<{ cls: SizeClass; entries: Entry[] }[]> {
  const records = await loadRecords(manifestUrl);
  const withMeta = async (key: string, full: Bytes, prefixLength: number): Promise<Entry> => {
    const prefix = full.slice(0, prefixLength);
    return { key, prefix, full, prefixMeta: await meta(prefix), fullMeta: await meta(full) };
  };
  const real: Entry[] = [];
  const big: Entry[] = [];
  for (let i = 0; i < n; i++) {
    const r = records[i % records.length]!;
    real.push(await withMeta(`${r.url}?entry=${i}`, r.bytes, r.groupEnds[2]!));
    const share = r.groupEnds[2]! / r.groupEnds.at(-1)!;
    big.push(await withMeta(new URL(`/bench/synthetic-256k/${i}.bin`, manifestUrl).href, randomBytes(256 * 1024), Math.round(256 * 1024 * share)));
  }
  const sum = (es: Entry[], f: (e: Entry) => number) => es.reduce((s, e) => s + f(e), 0);
  const describe = (name: string, es: Entry[], source: string): { cls: SizeClass; entries: Entry[] } => ({
    cls: { name, prefixBytes: sum(es, (e) => e.prefix.length), fullBytes: sum(es, (e) => e.full.length), source },
    entries: es,
  });
  return [
    describe('records', real, `${records.length} bundled Fashion-MNIST PCR records (real bytes), entry i = record i mod ${records.length}`),
    describe('256 KiB', big, 'random bytes, 256 KiB full, prefix at the group-2 share of record i mod R'),
  ];
}

// A watchdog: when a storage call has not settled for STALL_MS, the worker reports a stall (where, which call, and whether the
// store still answers a fresh request) and the page restarts it on the same pass, instead of the bench hanging.
const STALL_MS = 15_000;
const OPFS_DIR = 'bytelab-prefix-bench-opfs';
const watch = {
  pass: -1,
  round: 0,
  sizeClass: '',
  store: 'idb' as StoreName,
  stage: 'starting',
  entry: 0,
  step: '',
  file: '',
  seen: '',
  since: performance.now(),
  fired: false,
};
const within = <T>(p: Promise<T>, ms: number): Promise<string> =>
  Promise.race([
    p.then(
      () => 'answered',
      (e: Error) => `failed (${e.name})`,
    ),
    new Promise<string>((r) => setTimeout(() => r(`no answer in ${ms / 1000} s`), ms)),
  ]);
async function probe(): Promise<string> {
  const syncHandle = async (dir: FileSystemDirectoryHandle, name: string, create: boolean) => {
    const f = (await dir.getFileHandle(name, { create })) as SyncFileHandle;
    (await f.createSyncAccessHandle()).close();
  };
  const root = await navigator.storage.getDirectory();
  const fresh = syncHandle(root, 'bytelab-probe', true).then(() => root.removeEntry('bytelab-probe'));
  const parts = [`a new OPFS file + sync handle ${await within(fresh, 5000)}`];
  if (watch.store === 'opfs' && watch.file) {
    const sameFile = root.getDirectoryHandle(OPFS_DIR).then((dir) => syncHandle(dir, watch.file, false));
    parts.push(`the stalled file through a new file handle ${await within(sameFile, 5000)}`);
  }
  const idb = (async () => {
    const db = await openDB('bytelab-probe', 1, { upgrade: (d) => void d.createObjectStore('s') });
    await db.put('s', 1, 'k');
    db.close();
    await deleteDB('bytelab-probe');
  })();
  parts.push(`a new IndexedDB database ${await within(idb, 5000)}`);
  return parts.join('; ');
}
setInterval(() => {
  const now = `${watch.stage}#${watch.entry}`;
  if (now !== watch.seen) [watch.seen, watch.since] = [now, performance.now()];
  else if (performance.now() - watch.since > STALL_MS && !watch.fired && watch.pass >= 0) {
    watch.fired = true;
    const { pass, round, sizeClass, store } = watch;
    const at = `${watch.stage}, entry ${watch.entry}${watch.step ? `, waiting on ${watch.step}` : ''}`;
    void probe().then((p) => post({ type: 'stall', stall: { pass, round, sizeClass, store, at, probe: p } }));
  }
}, 1000);
const stage = (label: string) => void ([watch.stage, watch.entry, watch.step] = [label, 0, '']);

// --- the three stores

interface Store {
  readonly name: StoreName;
  /** Opens the connection / cache / directory. */
  open(): Promise<void>;
  /** Drops the connection / cache / directory handle. */
  close(): void;
  put(key: string, bytes: Bytes, meta: Meta): Promise<void>;
  get(key: string): Promise<{ bytes: Bytes; meta: Meta }>;
  /** Make the entry hold `full` (whose first `from` bytes it already holds); the caller has the full bytes in memory, as the pipeline has after a fetch. */
  extend(key: string, full: Bytes, from: number, meta: Meta): Promise<void>;
  remove(key: string): Promise<void>;
  /** Removes the database / cache / directory (untimed clean-up). */
  destroy(): Promise<void>;
}

interface IdbValue extends Meta {
  bytes: Bytes;
}

/** One object store keyed by URL; one relaxed-durability transaction per operation (a cache may lose its last writes on a crash). */
class IdbStore implements Store {
  readonly name = 'idb';
  private db?: IDBPDatabase;
  constructor(private readonly dbName: string) {}
  async open() {
    this.db = await openDB(this.dbName, 1, { upgrade: (db) => void db.createObjectStore('prefixes') });
  }
  close() {
    this.db?.close();
    this.db = undefined;
  }
  private async write(key: string, value: IdbValue) {
    const tx = this.db!.transaction('prefixes', 'readwrite', { durability: 'relaxed' });
    await Promise.all([tx.store.put(value, key), tx.done]);
  }
  put(key: string, bytes: Bytes, m: Meta) {
    return this.write(key, { ...m, bytes });
  }
  async get(key: string) {
    const v = (await this.db!.get('prefixes', key)) as IdbValue | undefined;
    if (!v) throw new Error(`idb: no entry for ${key}`);
    return { bytes: v.bytes, meta: { length: v.length, etag: v.etag, hash: v.hash } };
  }
  extend(key: string, full: Bytes, _from: number, m: Meta) {
    return this.write(key, { ...m, bytes: full }); // no append: the whole value is rewritten
  }
  async remove(key: string) {
    const tx = this.db!.transaction('prefixes', 'readwrite', { durability: 'relaxed' });
    await Promise.all([tx.store.delete(key), tx.done]);
  }
  async destroy() {
    this.close();
    await deleteDB(this.dbName);
  }
}

/** One cache; an entry is a Response whose body is the bytes and whose headers carry the metadata. */
class CacheApiStore implements Store {
  readonly name = 'cache';
  private cache?: Cache;
  constructor(private readonly cacheName: string) {}
  async open() {
    this.cache = await caches.open(this.cacheName);
  }
  close() {
    this.cache = undefined;
  }
  put(key: string, bytes: Bytes, m: Meta) {
    const headers = { 'content-type': 'application/octet-stream', etag: m.etag, 'x-bytelab-length': String(m.length), 'x-bytelab-sha256': m.hash };
    return this.cache!.put(key, new Response(bytes, { headers }));
  }
  async get(key: string) {
    const r = await this.cache!.match(key);
    if (!r) throw new Error(`cache: no entry for ${key}`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    const h = r.headers;
    return { bytes, meta: { length: Number(h.get('x-bytelab-length')), etag: h.get('etag') ?? '', hash: h.get('x-bytelab-sha256') ?? '' } };
  }
  extend(key: string, full: Bytes, _from: number, m: Meta) {
    return this.put(key, full, m); // no append: the whole response is rewritten
  }
  async remove(key: string) {
    if (!(await this.cache!.delete(key))) throw new Error(`cache: nothing deleted for ${key}`);
  }
  async destroy() {
    this.close();
    await caches.delete(this.cacheName);
  }
}

/** A file per entry in one OPFS directory: a 256-byte header (JSON metadata) then the bytes. A sync access handle is opened per operation. */
class OpfsStore implements Store {
  static readonly HEADER = 256;
  readonly name = 'opfs';
  private dir?: FileSystemDirectoryHandle;
  constructor(private readonly dirName: string) {}
  async open() {
    const root = await navigator.storage.getDirectory();
    this.dir = await root.getDirectoryHandle(this.dirName, { create: true });
  }
  close() {
    this.dir = undefined;
  }
  private async handle(key: string, create: boolean): Promise<SyncAccessHandle> {
    watch.file = encodeURIComponent(key);
    watch.step = 'getFileHandle';
    const file = (await this.dir!.getFileHandle(watch.file, { create })) as SyncFileHandle;
    watch.step = 'createSyncAccessHandle';
    const handle = await file.createSyncAccessHandle();
    watch.step = '';
    return handle;
  }
  private static header(m: Meta): Bytes {
    const json = new TextEncoder().encode(JSON.stringify(m));
    if (json.length > OpfsStore.HEADER - 2) throw new Error('opfs: metadata too long');
    const h = new Uint8Array(OpfsStore.HEADER);
    new DataView(h.buffer).setUint16(0, json.length);
    h.set(json, 2);
    return h;
  }
  private static readHeader(handle: SyncAccessHandle): Meta {
    const h = new Uint8Array(OpfsStore.HEADER);
    if (handle.read(h, { at: 0 }) !== OpfsStore.HEADER) throw new Error('opfs: short header');
    const n = new DataView(h.buffer).getUint16(0);
    return JSON.parse(new TextDecoder().decode(h.subarray(2, 2 + n))) as Meta;
  }
  async put(key: string, bytes: Bytes, m: Meta) {
    const handle = await this.handle(key, true);
    try {
      handle.truncate(0);
      handle.write(OpfsStore.header(m), { at: 0 });
      handle.write(bytes, { at: OpfsStore.HEADER });
    } finally {
      handle.close();
    }
  }
  async get(key: string) {
    const handle = await this.handle(key, false);
    try {
      const m = OpfsStore.readHeader(handle);
      const bytes = new Uint8Array(m.length);
      const n = handle.read(bytes, { at: OpfsStore.HEADER });
      if (n !== m.length) throw new Error(`opfs: read ${n} of ${m.length} bytes for ${key}`);
      return { bytes, meta: m };
    } finally {
      handle.close();
    }
  }
  async extend(key: string, full: Bytes, from: number, m: Meta) {
    const handle = await this.handle(key, false);
    try {
      const old = OpfsStore.readHeader(handle);
      if (old.length !== from) throw new Error(`opfs: ${key} holds ${old.length} bytes, expected ${from}`);
      handle.write(full.subarray(from), { at: OpfsStore.HEADER + from }); // append only the missing bytes
      handle.write(OpfsStore.header(m), { at: 0 });
    } finally {
      handle.close();
    }
  }
  async remove(key: string) {
    await this.dir!.removeEntry(encodeURIComponent(key));
  }
  async destroy() {
    this.close();
    const root = await navigator.storage.getDirectory();
    await root.removeEntry(this.dirName, { recursive: true }).catch((e: DOMException) => {
      if (e.name !== 'NotFoundError') throw e;
    });
  }
}

const makeStore = (name: StoreName, container = name === 'opfs' ? OPFS_DIR : `bytelab-prefix-bench-${name}`): Store =>
  name === 'idb' ? new IdbStore(container) : name === 'cache' ? new CacheApiStore(container) : new OpfsStore(container);

// --- the benchmark

async function usage(): Promise<Usage> {
  const e = (await navigator.storage.estimate()) as StorageEstimate & { usageDetails?: Record<string, number> };
  return { usage: e.usage ?? 0, quota: e.quota ?? 0, details: e.usageDetails ? { ...e.usageDetails } : undefined };
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled(n: number, seed: number): number[] {
  const rand = mulberry32(seed);
  const xs = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

/** Throws unless every entry read back has the bytes (SHA-256) and metadata written at that stage. */
async function verify(store: StoreName, op: OpName, entries: Entry[], got: { bytes: Bytes; meta: Meta }[], stage: 'prefix' | 'full') {
  for (let i = 0; i < entries.length; i++) {
    const want = stage === 'prefix' ? entries[i]!.prefixMeta : entries[i]!.fullMeta;
    const g = got[i];
    if (!g) throw new Error(`${store} ${op}: entry ${i} was not read`);
    const hash = await sha256(g.bytes);
    if (g.bytes.length !== want.length || hash !== want.hash || g.meta.length !== want.length || g.meta.hash !== want.hash || g.meta.etag !== want.etag)
      throw new Error(
        `${store} ${op}: entry ${i} (${entries[i]!.key}) read back ${g.bytes.length} bytes, sha256 ${hash.slice(0, 16)}…, meta ` +
          `${JSON.stringify(g.meta)}; wrote ${want.length} bytes, sha256 ${want.hash.slice(0, 16)}…`,
      );
  }
}

async function storeRun(name: StoreName, entries: Entry[], round: number, seed: number): Promise<Omit<StoreRun, 'sizeClass' | 'position'>> {
  const store = makeStore(name);
  stage('destroy before');
  // Start empty, whatever an earlier run left behind; a worker stopped after a stall may hold its locks for a moment.
  for (let attempt = 1; ; attempt++) {
    try {
      await store.destroy();
      break;
    } catch (err) {
      if (attempt === 20) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  const ms = {} as Record<OpName, number>;
  const time = async (op: OpName, body: () => Promise<void>) => {
    stage(op);
    const t0 = performance.now();
    await body();
    ms[op] = performance.now() - t0;
  };
  const readAll = async (order: number[]) => {
    const got: { bytes: Bytes; meta: Meta }[] = new Array(entries.length);
    for (const i of order) {
      got[i] = await store.get(entries[i]!.key);
      watch.entry++;
    }
    return got;
  };
  stage('estimate');
  const before = await usage();
  stage('open');
  await store.open();
  await time('write', async () => {
    for (const e of entries) {
      await store.put(e.key, e.prefix, e.prefixMeta);
      watch.entry++;
    }
  });
  stage('estimate');
  const afterWrite = await usage();
  let got = [] as { bytes: Bytes; meta: Meta }[];
  await time('read', async () => void (got = await readAll(shuffled(entries.length, seed))));
  await verify(name, 'read', entries, got, 'prefix');
  const extendOrder = shuffled(entries.length, seed + 1);
  await time('extend', async () => {
    for (const i of extendOrder) {
      await store.extend(entries[i]!.key, entries[i]!.full, entries[i]!.prefix.length, entries[i]!.fullMeta);
      watch.entry++;
    }
  });
  await time('readFull', async () => void (got = await readAll(shuffled(entries.length, seed + 2))));
  await verify(name, 'readFull', entries, got, 'full');
  stage('estimate');
  const afterExtend = await usage();
  store.close();
  got = [];
  await time('cold', async () => {
    await store.open();
    got = await readAll(shuffled(entries.length, seed + 3));
  });
  await verify(name, 'cold', entries, got, 'full');
  got = [];
  await time('delete', async () => {
    for (const e of entries) {
      await store.remove(e.key);
      watch.entry++;
    }
  });
  stage('estimate');
  const afterDelete = await usage();
  stage('destroy after');
  await store.destroy();
  stage('done');
  const sum = (f: (e: Entry) => number) => entries.reduce((s, e) => s + f(e), 0);
  const [prefix, full] = [sum((e) => e.prefix.length), sum((e) => e.full.length)];
  const bytes = { write: prefix, read: prefix, extend: full - prefix, readFull: full, cold: full, delete: 0 };
  return { round, warmup: false, store: name, ms, bytes, usage: { before, afterWrite, afterExtend, afterDelete } };
}

async function availability(): Promise<Availability> {
  const fh = (globalThis as { FileSystemFileHandle?: { prototype: object } }).FileSystemFileHandle;
  return {
    indexedDB: typeof indexedDB !== 'undefined',
    caches: typeof caches !== 'undefined',
    getDirectory: typeof navigator.storage?.getDirectory === 'function',
    createSyncAccessHandle: !!fh && 'createSyncAccessHandle' in fh.prototype,
    persisted: navigator.storage?.persisted ? await navigator.storage.persisted() : null,
    quota: (await usage()).quota,
  };
}

async function bench(config: CacheStoreConfig): Promise<CacheStoreResults> {
  const avail = await availability();
  const missing = Object.entries(avail).filter(([k, v]) => k !== 'persisted' && k !== 'quota' && !v);
  if (missing.length) throw new Error(`not available in this worker: ${missing.map(([k]) => k).join(', ')}`);
  const classes = await buildClasses(config.manifestUrl, config.entries);
  post({ type: 'progress', text: classes.map((c) => `${c.cls.name}: ${c.cls.prefixBytes} prefix bytes, ${c.cls.fullBytes} full bytes`).join('; ') });
  const total = config.warmup + config.rounds;
  let pass = 0;
  for (let round = 0; round < total; round++) {
    const warmup = round < config.warmup;
    for (const { cls, entries } of classes) {
      const order = STORES.map((_, i) => STORES[(i + round) % STORES.length]!); // rotate which store goes first
      for (const [position, store] of order.entries()) {
        if (pass++ < config.resumeFrom) continue;
        Object.assign(watch, { pass: pass - 1, round, sizeClass: cls.name, store });
        const r = await storeRun(store, entries, round, 1000 * round + 17);
        post({ type: 'run', run: { ...r, warmup, sizeClass: cls.name, position } });
        const ops = OPS.map((op) => `${op} ${r.ms[op].toFixed(0)}`).join(', ');
        post({ type: 'progress', text: `round ${round}${warmup ? ' (warm-up)' : ''} ${cls.name} ${store}: ${ops} ms` });
      }
    }
  }
  watch.pass = -1;
  // The page adds the runs it received (from this worker and any it replaced) and the stalls.
  return { config, entries: config.entries, classes: classes.map((c) => c.cls), availability: avail, runs: [], stalls: [] };
}

/** Writes one entry per store ('persist-write') or, after a browser restart on the same profile, reads it back and removes it ('persist-check'). */
async function persistence(config: CacheStoreConfig): Promise<PersistResults> {
  const [{ entries }] = await buildClasses(config.manifestUrl, 1);
  const e = entries[0]!;
  const found = {} as Record<StoreName, boolean>;
  const detail = {} as Record<StoreName, string>;
  for (const name of STORES) {
    const store = makeStore(name, `bytelab-prefix-persist-${name}`);
    Object.assign(watch, { pass: 0, store });
    stage(`${config.mode} ${name}`);
    if (config.mode === 'persist-write') {
      await store.destroy();
      await store.open();
      await store.put(e.key, e.prefix, e.prefixMeta);
      store.close();
      found[name] = true;
      detail[name] = `wrote ${e.prefix.length} bytes`;
      continue;
    }
    try {
      await store.open();
      const got = await store.get(e.key);
      await verify(name, 'cold', [e], [got], 'prefix');
      found[name] = true;
      detail[name] = `read back ${got.bytes.length} bytes, sha256 matches`;
    } catch (err) {
      found[name] = false;
      detail[name] = (err as Error).message;
    } finally {
      await store.destroy();
    }
  }
  return { mode: config.mode as PersistResults['mode'], found, detail };
}

scope.onmessage = (event) => {
  const config = event.data;
  (config.mode === 'bench' ? bench(config) : persistence(config))
    .then((results) => post({ type: 'done', results }))
    .catch((err: Error) => post({ type: 'error', message: err.stack ?? err.message }));
};
