// Where should the pipeline worker cache fetched record prefixes? IndexedDB
// (through idb), the Cache API or OPFS (sync access handles), timed inside a
// dedicated worker in Chromium on a persistent on-disk profile: write the
// group-2 prefixes, read them back, extend every entry to the full record, read
// again, reopen and read, delete. The stores take turns within each round
// (rotating which goes first); ratios vs IndexedDB are per round. Then one
// entry per store is written, the browser restarted on the same profile and the
// entry read back. A storage call that never settles (seen with OPFS's
// createSyncAccessHandle) is reported as a stall and its pass run again in a new
// worker. Writes bench/results/prefix-cache-store.md.
// Usage: npx tsx bench/prefix-cache-store.ts [--rounds N (default 5)] [--entries N (default 200)]
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type BrowserContext, chromium, type Page } from '@playwright/test';
import { createServer } from 'vite';
import { freePort } from './support/lab-browser.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/support/chromium.js';
import type { CacheStoreResults, OpName, PersistResults, StoreName, StoreRun, Usage } from './gpu/cache-store-worker.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results', 'prefix-cache-store.md');
const PAGE = '/bench/gpu/cache-store.html';
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, entries: { type: 'string', default: '200' } } });
const rounds = Number(values.rounds);
const entries = Number(values.entries);
if (!(Number.isInteger(rounds) && rounds > 0 && Number.isInteger(entries) && entries > 0))
  throw new Error(`--rounds and --entries must be positive integers, got ${values.rounds}, ${values.entries}`);
if (rounds < 5) console.error(`note: ${rounds} rounds; the project's benches use at least 5`);

const STORES: StoreName[] = ['idb', 'cache', 'opfs'];
const LABEL: Record<StoreName, string> = { idb: 'IndexedDB (idb)', cache: 'Cache API', opfs: 'OPFS (sync handles)' };
const USAGE_KEY: Record<StoreName, string> = { idb: 'indexedDB', cache: 'caches', opfs: 'fileSystem' };
const OPS: { op: OpName; label: string; mbps?: string }[] = [
  { op: 'write', label: '1. write N group-2 prefixes (one put per entry, in key order)', mbps: 'prefix bytes' },
  { op: 'read', label: '2. read all N prefixes back, random order, to a Uint8Array', mbps: 'prefix bytes' },
  {
    op: 'extend',
    label: '3. extend every entry to the full record, random order (OPFS appends the tail; IDB and Cache rewrite the whole entry)',
    mbps: 'tail bytes added',
  },
  { op: 'readFull', label: '4. read all N full entries, random order', mbps: 'full bytes' },
  { op: 'cold', label: '5. reopen (new connection / caches.open / getDirectory) + read all N full entries, random order', mbps: 'full bytes' },
  { op: 'delete', label: '6. delete all N entries, one at a time' },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const spread = (xs: number[], digits = 1) => `${Math.min(...xs).toFixed(digits)} / ${median(xs).toFixed(digits)} / ${Math.max(...xs).toFixed(digits)}`;
const mb = (bytes: number) => (bytes / 1e6).toFixed(2);
const T0 = performance.now();
const LOAD0 = os.loadavg()[0]!;
const log = (line: string): void => void process.stderr.write(`bench [${((performance.now() - T0) / 1000).toFixed(1)} s]: ${line}\n`);

/** Storage directories Chromium made in the profile (IndexedDB / Cache Storage / File System), to name the backends. */
function storageDirs(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string, depth: number) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (/IndexedDB|CacheStorage|File System|\.indexeddb\.|\.sqlite/i.test(e.name))
        found.push(relative(dir, p).replace(/localhost_\d+/, 'localhost_PORT') + (e.isDirectory() ? '/' : ''));
      if (e.isDirectory() && depth < 6) walk(p, depth + 1);
    }
  };
  walk(dir, 0);
  return found;
}

// A profile on disk: Playwright's default contexts are "incognito" and write no browsing data to disk.
const profile = mkdtempSync(join(os.tmpdir(), 'bytelab-cache-store-'));
const port = await freePort();
const origin = `http://localhost:${port}`;
const server = await createServer({
  root: ROOT,
  clearScreen: false,
  logLevel: 'warn',
  server: { host: 'localhost', port, strictPort: true, hmr: false, watch: null },
});
await server.listen();
let context: BrowserContext | undefined;
const launch = async (): Promise<Page> => {
  context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, viewport: { width: 1200, height: 800 } });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => (m.type() === 'log' ? log(`page: ${m.text()}`) : m.type() === 'error' && console.error(`page: ${m.text()}`)));
  return page;
};
async function run<T>(page: Page, query: string): Promise<T> {
  await page.goto(`${origin}${PAGE}?${query}`);
  await page.waitForFunction(() => window.__cacheStoreBench !== undefined, undefined, { timeout: 10 * 60_000, polling: 250 });
  const r = await page.evaluate(() => window.__cacheStoreBench!);
  if ('error' in r) throw new Error(r.error);
  return r as T;
}

let results: CacheStoreResults;
let persistWrite: PersistResults;
let persistCheck: PersistResults;
let chromiumVersion = '';
let dirs: string[] = [];
try {
  let page = await launch();
  const cdp = await context!.newCDPSession(page);
  chromiumVersion = ((await cdp.send('Browser.getVersion')) as { product: string }).product;
  log(`${chromiumVersion}, profile ${profile}, ${entries} entries, 1 warm-up + ${rounds} rounds`);
  results = await run<CacheStoreResults>(page, `mode=bench&entries=${entries}&rounds=${rounds}`);
  persistWrite = await run<PersistResults>(page, 'mode=persist-write');
  await context!.close();
  dirs = storageDirs(profile);
  log('browser closed; restarting on the same profile');
  page = await launch();
  persistCheck = await run<PersistResults>(page, 'mode=persist-check');
} finally {
  await context?.close().catch(() => undefined);
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}

// --- report

const measured = results.runs.filter((r) => !r.warmup);
const roundsOf = [...new Set(measured.map((r) => r.round))];
const runOf = (cls: string, store: StoreName, round: number) => measured.find((r) => r.sizeClass === cls && r.store === store && r.round === round)!;
const cpus = os.cpus();
const lines: string[] = [
  '# Prefix cache store: IndexedDB vs Cache API vs OPFS, in a worker',
  '',
  `Measured ${new Date().toISOString().slice(0, 10)} by \`npx tsx bench/prefix-cache-store.ts --rounds ${rounds} --entries ${entries}\` in ` +
    `${((performance.now() - T0) / 1000).toFixed(0)} s.`,
  `Machine: ${cpus.length} CPU cores (${cpus[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}; ` +
    `${chromiumVersion} (${CHROMIUM_PATH}, headless). Load average (1 min) ${LOAD0.toFixed(2)} at the start, ${os.loadavg()[0]!.toFixed(2)} at the end: ` +
    'other work shares the machine.',
  '',
  `What is timed: each operation over all ${entries} entries, awaited one entry at a time (the way the pipeline worker caches a record when its fetch ` +
    `completes), inside a dedicated module Worker, wall time by performance.now() in the worker. The profile is a persistent Chromium user-data-dir on ` +
    `disk (${os.tmpdir()}), not Playwright's default "incognito" context, which writes nothing to disk. ` +
    'IndexedDB: one object store keyed by URL, value {bytes: Uint8Array, length, etag, hash}, one ' +
    `transaction per operation with durability "relaxed". Cache API: one cache, a Response per URL with the bytes as body and the metadata in headers. ` +
    `OPFS: one file per entry in a directory, a 256-byte JSON header (length, etag, hash) then the bytes, a sync access handle opened and closed per ` +
    `operation, no flush() (none of the three forces an fsync per entry). Every read is checked: the bytes' SHA-256 and the stored length, ETag and ` +
    `hash must equal what was written, or the bench stops. The stores take turns within each size class of each round, rotating which goes first; ` +
    `1 warm-up round is dropped and ${roundsOf.length} rounds are reported. Each store starts from an empty database / cache / directory. ` +
    'A storage call that has not settled after 15 s counts as a stall: the page stops the worker and runs that store pass again in a new one ' +
    '(see "Stalls"); the timings come only from passes that completed. ' +
    `MB = 10^6 bytes; MB/s divides the same payload bytes by each store's time (named per operation), so the MB/s ratios equal the time ratios.`,
  '',
  'Size classes (sizes from public/datasets/fashion-mnist-mini/manifest.json: prefix = groupEnds[2], full = the whole record):',
  '',
  '| class | entries | group-2 prefix bytes, total (mean per entry) | full bytes, total (mean per entry) | bytes |',
  '| --- | ---: | ---: | ---: | --- |',
  ...results.classes.map(
    (c) =>
      `| ${c.name} | ${entries} | ${mb(c.prefixBytes)} MB (${(c.prefixBytes / entries / 1024).toFixed(1)} KiB) | ${mb(c.fullBytes)} MB ` +
      `(${(c.fullBytes / entries / 1024).toFixed(1)} KiB) | ${c.source} |`,
  ),
  '',
];
for (const cls of results.classes) {
  lines.push(
    `## ${cls.name} entries`,
    '',
    '| operation | store | ms for all N (min / median / max) | ms per entry (median) | MB/s of named bytes (min / median / max) | ' +
      'time ratio store / IndexedDB per round (min / median / max; < 1 = faster) |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  );
  for (const { op, label, mbps } of OPS) {
    for (const store of STORES) {
      const rs = roundsOf.map((round) => runOf(cls.name, store, round));
      const ms = rs.map((r) => r.ms[op]);
      const rate = mbps ? `${spread(rs.map((r) => r.bytes[op] / r.ms[op] / 1000))} (${mbps})` : '—';
      const ratio =
        store === 'idb'
          ? '1'
          : spread(
              rs.map((r) => r.ms[op] / runOf(cls.name, 'idb', r.round).ms[op]),
              2,
            );
      lines.push(`| ${store === 'idb' ? label : ''} | ${LABEL[store]} | ${spread(ms)} | ${(median(ms) / entries).toFixed(3)} | ${rate} | ${ratio} |`);
    }
  }
  lines.push('');
}

const delta = (a: Usage, b: Usage, key?: string) => (key && a.details && b.details ? (b.details[key] ?? 0) - (a.details[key] ?? 0) : b.usage - a.usage);
const hasDetails = measured.every((r) => r.usage.before.details);
lines.push(
  '## Storage reported by navigator.storage.estimate()',
  '',
  `Change in ${hasDetails ? "usage of the store's own type (usageDetails: indexedDB, caches or fileSystem)" : 'total usage'} from before the first ` +
    'write, median over the reported rounds (min–max), against the payload held. Chromium updates these figures from its quota bookkeeping, so ' +
    'they show what the quota is charged, not exact bytes on disk.',
  '',
  '| class | store | payload after write | estimate Δ after write | payload after extend | estimate Δ after extend | estimate Δ after deleting all |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
);
const range = (xs: number[]) => `${mb(median(xs))} MB (${mb(Math.min(...xs))}–${mb(Math.max(...xs))})`;
for (const cls of results.classes) {
  for (const store of STORES) {
    const rs = roundsOf.map((round) => runOf(cls.name, store, round));
    const d = (f: (r: StoreRun) => Usage) => range(rs.map((r) => delta(r.usage.before, f(r), hasDetails ? USAGE_KEY[store] : undefined)));
    lines.push(
      `| ${cls.name} | ${LABEL[store]} | ${mb(cls.prefixBytes)} MB | ${d((r) => r.usage.afterWrite)} | ${mb(cls.fullBytes)} MB | ` +
        `${d((r) => r.usage.afterExtend)} | ${d((r) => r.usage.afterDelete)} |`,
    );
  }
}

const a = results.availability;
const yes = (b: boolean | null) => (b === null ? 'unknown' : b ? 'yes' : 'no');
const passesOf = (s: StoreName) => results.runs.filter((r) => r.store === s).length;
const stallsOf = (s: StoreName) => results.stalls.filter((x) => x.store === s);
lines.push(
  '',
  '## Stalls',
  '',
  'Store passes (one store, one size class, one round: ~1,000 storage calls) in which a call had not settled after 15 s, so the worker was ' +
    'stopped and the pass run again in a new worker. Per store, stalled / completed passes: ' +
    `${STORES.map((s) => `${LABEL[s]} ${stallsOf(s).length} / ${passesOf(s)}`).join(', ')}.`,
);
if (results.stalls.length) {
  lines.push(
    '',
    '| round | class | store | where it stopped | probe right after (each with a 5 s limit) |',
    '| ---: | --- | --- | --- | --- |',
    ...results.stalls.map((x) => `| ${x.round} | ${x.sizeClass} | ${LABEL[x.store]} | ${x.at} | ${x.probe} |`),
  );
}
lines.push(
  '',
  '## Availability and persistence (measured)',
  '',
  `In the dedicated worker: indexedDB ${yes(a.indexedDB)}, caches ${yes(a.caches)}, navigator.storage.getDirectory ${yes(a.getDirectory)}, ` +
    `FileSystemFileHandle.createSyncAccessHandle ${yes(a.createSyncAccessHandle)}; navigator.storage.persisted() ${yes(a.persisted)} (best-effort ` +
    `storage); quota ${(a.quota / 1e9).toFixed(1)} GB for the origin, shared by all three.`,
  '',
  'One group-2 prefix written to each store, the browser closed and started again on the same profile, a new page and worker:',
  '',
  ...STORES.map((s) => `- ${LABEL[s]}: ${persistCheck.found[s] ? 'survived' : 'LOST'} (${persistWrite.detail[s]}; after restart: ${persistCheck.detail[s]})`),
  '',
  "Storage directories in the profile after that write (IndexedDB's .blob directory holds values too large to keep inline): " +
    `${dirs.length ? dirs.map((d) => `\`${d}\``).join(', ') : 'none found'}.`,
  '',
);

// The choice: which store was fastest in every round, per operation, with the reads (repeated every epoch) weighed first.
const medianMs = (cls: string, store: StoreName, op: OpName) => median(roundsOf.map((round) => runOf(cls, store, round).ms[op]));
const ratiosOf = (cls: string, store: StoreName, op: OpName) => roundsOf.map((round) => runOf(cls, store, round).ms[op] / runOf(cls, 'idb', round).ms[op]);
const SHORT: Record<OpName, string> = {
  write: 'write',
  read: 'read prefixes',
  extend: 'extend',
  readFull: 'read full',
  cold: 'reopen + read',
  delete: 'delete',
};
/** The store that was fastest in every reported round at this operation, or undefined when the rounds disagree. */
const everyRound = (cls: string, op: OpName): StoreName | undefined => {
  const w = roundsOf.map((round) => STORES.reduce((best, s) => (runOf(cls, s, round).ms[op] < runOf(cls, best, round).ms[op] ? s : best)));
  return w.every((s) => s === w[0]) ? w[0] : undefined;
};
const winners = OPS.map(
  ({ op }) => `${SHORT[op]}: ${results.classes.map((c) => (everyRound(c.name, op) ? LABEL[everyRound(c.name, op)!] : 'none')).join(' / ')}`,
).join('; ');
const ratioText = (cls: string, op: OpName) =>
  (['cache', 'opfs'] as StoreName[]).map((s) => {
    const r = ratiosOf(cls, s, op);
    return `${LABEL[s]} ${median(r).toFixed(2)} (${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)})`;
  });
const straddles = (cls: string, op: OpName) =>
  (['cache', 'opfs'] as StoreName[]).filter((s) => Math.min(...ratiosOf(cls, s, op)) < 1 && Math.max(...ratiosOf(cls, s, op)) > 1);
const main = results.classes[0]!.name; // the bundled records' real sizes
const pathOps: OpName[] = ['write', 'read', 'extend', 'readFull', 'cold'];
const totals = results.classes.map((c) => {
  const t = STORES.map((s) => ({ s, ms: pathOps.reduce((sum, op) => sum + medianMs(c.name, s, op), 0) })).sort((x, y) => x.ms - y.ms);
  return { cls: c.name, t };
});
const prefixWinner = everyRound(main, 'read');
const extendWinner = everyRound(main, 'extend');
const mainClass = results.classes[0]!;
const byteRatio = mainClass.fullBytes / mainClass.prefixBytes;
const opfsFixed = medianMs(main, 'opfs', 'readFull') / medianMs(main, 'opfs', 'read') < byteRatio / 2;
const perEntry = (s: StoreName, op: OpName) => `${(medianMs(main, s, op) / entries).toFixed(2)} ms`;
const fullReads = (['readFull', 'cold'] as OpName[]).map((op) => {
  const w = everyRound(main, op);
  const st = straddles(main, op);
  return w
    ? `${SHORT[op]}: ${LABEL[w]} in every round`
    : `${SHORT[op]}: no store in every round${st.length ? ` (${st.map((s) => LABEL[s]).join(' and ')} range across 1 against IndexedDB)` : ''}`;
});
const recommendation = prefixWinner
  ? `The figures favour ${LABEL[prefixWinner]} for a worker prefix cache of records this size: it read the group-2 prefixes fastest in every ` +
    `round (median ${STORES.map((s) => `${LABEL[s]} ${perEntry(s, 'read')}`).join(', ')} per entry; time ratios to IndexedDB ` +
    `${ratioText(main, 'read').join(', ')}), and at full length ${fullReads.join('; ')}.` +
    (extendWinner && extendWinner !== prefixWinner
      ? ` Its cost is the extend, where ${LABEL[extendWinner]} was fastest in every round (ratios ${ratioText(main, 'extend').join(', ')}), ` +
        'an operation the pipeline does once per record and fidelity increase.'
      : '')
  : `No store read the bundled records' group-2 prefixes fastest in every round; at full length ${fullReads.join('; ')}; by the sum of ` +
    `operations 1–5 the figures favour ${LABEL[totals[0]!.t[0]!.s]} for records this size.`;
const stallText = results.stalls.length
  ? `${STORES.filter((s) => stallsOf(s).length)
      .map((s) => `${LABEL[s]} stalled in ${stallsOf(s).length} of ${stallsOf(s).length + passesOf(s)} passes`)
      .join(', ')} (a call that never settled, see "Stalls"), the others in none`
  : 'no store stalled';
const availableAll = a.indexedDB && a.caches && a.getDirectory && a.createSyncAccessHandle;
const survived = STORES.filter((s) => persistCheck.found[s]);
const leftoverOf = (s: StoreName) =>
  results.classes.map((c) =>
    median(roundsOf.map((round) => runOf(c.name, s, round)).map((r) => delta(r.usage.before, r.usage.afterDelete, hasDetails ? USAGE_KEY[s] : undefined))),
  );
const classNames = results.classes.map((c) => c.name).join(' / ');
const leftovers = `${STORES.map((s) => `${LABEL[s]} ${leftoverOf(s).map(mb).join(' / ')} MB`).join(', ')} (median; ${classNames})`;
lines.push(
  '## Choice',
  '',
  `Store fastest in every one of the ${roundsOf.length} reported rounds, per operation (${classNames}): ${winners}. ` +
    'A prefix cache is read far more often than it is written: every epoch reads each cached record at the current fidelity, while a record is ' +
    `written once and extended once per fidelity increase, so the read rows weigh most. ${recommendation} ` +
    `OPFS read a ${main} prefix in ${perEntry('opfs', 'read')} and a full record, ${byteRatio.toFixed(1)}× the bytes, in ` +
    `${perEntry('opfs', 'readFull')} (median per entry)${
      opfsFixed ? ': mostly a fixed cost per operation (getFileHandle, createSyncAccessHandle, close), which this bench pays every time' : ''
    }; holding sync handles open across operations was not measured. Sum of the median times of operations 1–5, for reference: ` +
    totals.map((x) => `${x.cls}: ${x.t.map((e) => `${LABEL[e.s]} ${e.ms.toFixed(0)} ms`).join(', ')}`).join('; ') +
    '.',
  '',
  `Beyond speed, measured above: ${availableAll ? 'all three are available in the dedicated worker' : 'not all three are available in the worker'}; ` +
    `${survived.length === STORES.length ? 'all three' : survived.map((s) => LABEL[s]).join(', ') || 'none'} kept an entry across a browser restart; ` +
    `right after deleting every entry, estimate() still charged ${leftovers}; ${stallText}. ` +
    'By design (not measured here): only OPFS can append the missing bytes in place (IndexedDB and the Cache API rewrite the entry, so an ' +
    "extend writes the full record's bytes, not the tail's); OPFS sync access handles exist only in workers and by default lock the file while " +
    "open, which suits the pipeline worker but not the page; all three share the origin's quota and, as best-effort storage, are evicted " +
    'together when Chromium evicts the origin, so eviction does not separate them; a Cache API entry is a Response, so its metadata travels as ' +
    'headers.',
);

const text = `${lines.join('\n')}\n`;
writeFileSync(RESULTS, text);
console.log(text);
