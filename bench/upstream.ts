// The data pipeline's upstream throughput in Node (fetch + decode + batch, no
// training): one epoch of the bundled Fashion-MNIST train split, read over HTTP
// from a loopback server this bench starts, per scan group, requests in flight
// and readers (ImagePipelines with partition {count, rank}, one per worker
// thread; the main thread takes their batches and sums the examples). Two link
// profiles: "local" (loopback as is) and "slow link" (a wait before each answer
// and each answer's body paced to a rate). Variants take turns within each round,
// the order rotated and reversed from round to round; round 0 is a warm-up.
// Writes bench/results/upstream.md.
// Usage: npx tsx bench/upstream.ts [--rounds N (default 5)] [--latency MS (default 40)] [--rate KBPS (default 2000, KB = 1000 bytes)]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { PipelineOptions, PipelineStats } from '../src/pipeline/api.js';
import { type LinkProfile, PACE_CHUNK, startLinkServer } from './support/link-server.js';
import type { ReaderJob, ReaderMessage } from './upstream-worker.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATASET = join(ROOT, 'public', 'datasets', 'fashion-mnist-mini');
const RESULTS = join(ROOT, 'bench', 'results', 'upstream.md');
const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, latency: { type: 'string', default: '40' }, rate: { type: 'string', default: '2000' } },
});
const rounds = Number(values.rounds);
const latencyMs = Number(values.latency);
const rateKBps = Number(values.rate);
if (!(Number.isInteger(rounds) && rounds > 0 && latencyMs >= 0 && rateKBps > 0)) {
  throw new Error(`--rounds must be a positive integer, --latency >= 0 and --rate > 0; got ${values.rounds}, ${values.latency}, ${values.rate}`);
}
if (rounds < 5) console.error(`note: ${rounds} rounds; the project's benches use at least 5`);

type ProfileName = 'local' | 'slow';
const PROFILES: Record<ProfileName, LinkProfile> = {
  local: { latencyMs: 0, bytesPerSecond: 0 },
  slow: { latencyMs, bytesPerSecond: rateKBps * 1000 },
};
const PROFILE_LABEL: Record<ProfileName, string> = {
  local: 'local (loopback, no added latency, no cap)',
  slow: `slow link (${latencyMs} ms to first byte, ${rateKBps} KB/s per connection)`,
};
const GROUPS = [1, 3, 6];
const IN_FLIGHT = [1, 2, 4, 8];
const READERS = [1, 2];
const BATCH = 64;

interface Variant {
  profile: ProfileName;
  group: number;
  inFlight: number;
  readers: number;
}
const key = (v: Variant) => `${v.profile} g${v.group} f${v.inFlight} r${v.readers}`;
const VARIANTS: Variant[] = (['local', 'slow'] as const).flatMap((profile) =>
  READERS.flatMap((readers) => IN_FLIGHT.flatMap((inFlight) => GROUPS.map((group) => ({ profile, group, inFlight, readers })))),
);

const manifest = JSON.parse(readFileSync(join(DATASET, 'manifest.json'), 'utf8')) as {
  name: string;
  scanGroups: number;
  image: { width: number; height: number; channels: number };
  splits: { train: { records: { file: string; images: number; groupEnds: number[] }[] } };
};
const records = manifest.splits.train.records;
const EXAMPLES = records.reduce((n, r) => n + r.images, 0);
const MANIFEST_BYTES = readFileSync(join(DATASET, 'manifest.json')).byteLength;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const T0 = performance.now();
const LOAD0 = os.loadavg();
const log = (line: string): void => void process.stderr.write(`bench [${((performance.now() - T0) / 1000).toFixed(1)} s]: ${line}\n`);

/** Process ids of a Playwright run on this machine (other engineers run browser tests here; both would be skewed). */
function playwrightRuns(): string[] {
  try {
    // The runner itself (node .../playwright test), not a shell whose command line merely mentions it.
    return execFileSync('pgrep', ['-f', '^node [^ ]*playwright test'], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

// --- the readers: worker threads that stay up for the whole bench ---

/** tsx's --import hook does not reach worker threads on Node 20, so each worker registers tsx itself, then imports the TS file. */
function startReader(): Promise<Worker> {
  const api = import.meta.resolve('tsx/esm/api');
  const file = new URL('./upstream-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(api)}).then(({ register }) => { register(); return import(${JSON.stringify(file)}); })`;
  const w = new Worker(boot, { eval: true, execArgv: [] });
  return new Promise((res, rej) => {
    w.once('error', rej);
    w.once('message', (m: ReaderMessage) => (m.type === 'ready' ? res(w) : rej(new Error(`reader sent ${m.type} first`))));
  });
}

const server = await startLinkServer(DATASET, PROFILES.local);
const workers = await Promise.all(Array.from({ length: Math.max(...READERS) }, () => startReader()));
log(`server ${server.url}, ${workers.length} reader threads up`);

interface Run {
  examplesPerS: number;
  wallMs: number;
  /** The slowest reader's own open-to-end time: wall minus this is the cost of starting and ending through messages. */
  readerMs: number;
  examples: number;
  bytesFetched: number;
  decodeMs: number;
  serverBody: number;
  requests: number;
  connections: number;
  lateMs: number[];
}

/** One epoch with the variant's readers in parallel, timed on the main thread from posting the jobs to the last reader's end of stream. */
async function runOnce(v: Variant): Promise<Run> {
  server.profile = PROFILES[v.profile];
  server.reset();
  const options = (rank: number): PipelineOptions => ({
    manifestUrl: `${server.url}manifest.json`,
    split: 'train',
    batchSize: BATCH,
    fidelity: v.group,
    echoFactor: 1,
    seed: 1,
    shuffleBuffer: 0,
    epochs: 1,
    augment: false,
    prefetch: 4, // the lab's (src/train/session.ts)
    requestsInFlight: v.inFlight,
    partition: { count: v.readers, rank },
    cacheLimitBytes: 0,
  });
  let examples = 0;
  const done: { stats: PipelineStats; ms: number; warnings: string[]; bytesPerLevel: number[] }[] = [];
  const start = performance.now();
  await Promise.all(
    workers.slice(0, v.readers).map(
      (w, rank) =>
        new Promise<void>((res, rej) => {
          const on = (m: ReaderMessage) => {
            if (m.type === 'batch') examples += m.size;
            else if (m.type === 'done') {
              w.off('message', on);
              done.push(m);
              res();
            } else if (m.type === 'error') {
              w.off('message', on);
              rej(new Error(`${key(v)}, reader ${rank}: ${m.message}`));
            }
          };
          w.on('message', on);
          w.postMessage({ options: options(rank) } satisfies ReaderJob);
        }),
    ),
  );
  const wallMs = performance.now() - start;
  const sum = (f: (s: PipelineStats) => number) => done.reduce((n, d) => n + f(d.stats), 0);
  const warnings = done.flatMap((d) => d.warnings);
  const bytesFetched = sum((s) => s.bytesFetched);
  const expectedBytes = done[0]!.bytesPerLevel[v.group - 1]!;
  // Every image, every byte of the group's prefixes, once: anything else is not the pipeline's normal path and the bench stops.
  if (examples !== EXAMPLES || sum((s) => s.examplesEmitted) !== EXAMPLES || warnings.length || sum((s) => s.retries + s.recordsSkipped) > 0) {
    throw new Error(`${key(v)}: ${examples} examples (want ${EXAMPLES}), warnings ${JSON.stringify(warnings)}, stats ${JSON.stringify(done[0]!.stats)}`);
  }
  const { bodyBytes, requests } = server.counters;
  if (bytesFetched !== expectedBytes || bodyBytes !== expectedBytes + v.readers * MANIFEST_BYTES || requests !== records.length + v.readers) {
    throw new Error(`${key(v)}: fetched ${bytesFetched} bytes, server sent ${bodyBytes} in ${requests} answers; the group's prefixes are ${expectedBytes}`);
  }
  return {
    examplesPerS: (examples * 1000) / wallMs,
    wallMs,
    readerMs: Math.max(...done.map((d) => d.ms)),
    examples,
    bytesFetched,
    decodeMs: sum((s) => s.decodeMs),
    serverBody: server.counters.bodyBytes,
    requests: server.counters.requests,
    connections: server.counters.connections,
    lateMs: server.counters.lateMs,
  };
}

// --- the rounds ---

const runs = new Map<string, Run[]>(VARIANTS.map((v) => [key(v), []]));
const roundMs: number[] = [];
const playwrightWaits: string[] = [];
const overlapped: number[] = [];
const step = Math.max(1, Math.floor(VARIANTS.length / (rounds + 1)));
for (let r = 0; r <= rounds; r++) {
  for (let seen = playwrightRuns(); seen.length; seen = playwrightRuns()) {
    const waited = `before round ${r}: a Playwright run (pids ${seen.join(', ')}); waited`;
    if (playwrightWaits.at(-1) !== waited) playwrightWaits.push(waited);
    log('a Playwright run is on; waiting 30 s');
    await new Promise((res) => setTimeout(res, 30_000));
  }
  // Rotated by r * step positions and reversed in odd rounds: each variant's place in the round, and which of two compared variants goes first, change.
  const rotated = VARIANTS.map((_, i) => VARIANTS[(i + r * step) % VARIANTS.length]!);
  const order = r % 2 ? rotated.reverse() : rotated;
  const t = performance.now();
  for (const v of order) {
    const run = await runOnce(v);
    if (r > 0) runs.get(key(v))!.push(run);
  }
  roundMs.push(performance.now() - t);
  if (playwrightRuns().length) overlapped.push(r);
  log(`round ${r}${r === 0 ? ' (warm-up)' : ''}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
const LOAD1 = os.loadavg();
await Promise.all(workers.map((w) => w.terminate()));
await server.close();

// --- the report ---

const get = (v: Variant) => runs.get(key(v))!;
const eps = (v: Variant) => get(v).map((x) => x.examplesPerS);
const fmt = (x: number) => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));
const cell = (xs: number[]) => `${fmt(median(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`;
const ratioCell = (xs: number[]) => `${Math.min(...xs).toFixed(2)} / **${median(xs).toFixed(2)}** / ${Math.max(...xs).toFixed(2)}`;
/** Per-round ratios a / b: the two ran in the same round. */
const ratios = (a: Variant, b: Variant) => eps(a).map((x, i) => x / eps(b)[i]!);
const bytesAt = (g: number) => records.reduce((n, r) => n + r.groupEnds[g]!, 0);
const cpus = os.cpus();
const loads = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
const tsxVersion = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'tsx', 'package.json'), 'utf8')).version as string;

const lines = [
  '# Upstream throughput: fetch + decode + batch in Node',
  '',
  `${new Date().toISOString().slice(0, 10)}. Machine: ${cpus.length} CPU cores (${cpus[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ` +
    `${os.type()} ${os.release()}; Node ${process.version}, tsx ${tsxVersion}, wasm libjpeg-turbo (@cwasm/jpeg-turbo). ` +
    `\`npx tsx bench/upstream.ts --rounds ${rounds} --latency ${latencyMs} --rate ${rateKBps}\`, run under \`flock /tmp/bytelab-bench.lock\`.`,
  `Load average (1 / 5 / 15 min): ${loads(LOAD0)} at the start, ${loads(LOAD1)} at the end; other work shares the machine. ` +
    (playwrightWaits.length ? `Playwright: ${playwrightWaits.join('; ')} until it ended. ` : 'No Playwright run was seen before any round. ') +
    (overlapped.length ? `**A Playwright run was on at the end of round(s) ${overlapped.join(', ')}**: those figures are skewed. ` : '') +
    `Whole bench: ${((performance.now() - T0) / 1000).toFixed(0)} s; rounds (warm-up first): ${roundMs.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s.`,
  '',
  `**Data**: real, the bundled ${manifest.name} (\`public/datasets/fashion-mnist-mini\`), train split: ${records.length} records x ` +
    `${records[0]!.images} images = ${EXAMPLES.toLocaleString('en-US')} images, ${manifest.image.width}x${manifest.image.height} gray, ` +
    `${manifest.scanGroups} scan groups, served from memory by \`bench/support/link-server.ts\` (Range requests, 206).`,
  '',
  `**What one run is**: one epoch of the train split through \`ImagePipeline\` (\`pcrRecords\`, wasm libjpeg-turbo) with epochs 1, shuffleBuffer 0 (records ` +
    `in file order), echoFactor 1, augment false, batchSize ${BATCH}, prefetch 4, cacheLimitBytes 0 (no prefix cache), fidelity = scan group g, ` +
    'requestsInFlight f, and `partition: {count: readers, rank}`. Each reader is its own `node:worker_threads` thread (one pipeline per thread, so ' +
    'decoding runs on separate cores); it calls `open` then `next()` until null and posts every batch to the main thread with its buffers transferred, ' +
    `as the lab's workers do; the main thread sums the examples and also runs the HTTP server. Threads, decoder module and server start once, before ` +
    'round 0, outside any timing. **examples/s** = images the main thread received (always all ' +
    `${EXAMPLES.toLocaleString('en-US')}; the bench stops on any other count, a warning, a retry or a byte count other than the group's prefixes) / ` +
    "wall seconds from the main thread posting the jobs (each reader opens at once: the manifest request is inside the time) to the last reader's " +
    'end-of-stream message.',
  '',
  `**Link profiles**, both in every round: **local**: loopback, each answer written at once. **slow link**: every request (manifest and records) waits ` +
    `${latencyMs} ms before its headers are sent (time to first byte); the body is then written in ${PACE_CHUNK / 1024} KiB chunks, chunk k at ` +
    `TTFB + k x ${PACE_CHUNK} / rate and the end at TTFB + size / rate, rate = ${rateKBps} KB/s = ${(rateKBps * 1000).toLocaleString('en-US')} ` +
    'bytes/s. The pacing is per answer, so per connection (HTTP/1.1 answers one request at a time on a connection): f requests in flight on r readers ' +
    'get up to f x r times the rate together; nothing caps the server as a whole, and loopback adds no loss or queueing of its own.',
  '',
  `**Order**: ${rounds} rounds after a warm-up round (round 0, dropped); each round runs all ${VARIANTS.length} variants (both profiles) one after the ` +
    `other, the order rotated by ${step} positions per round and reversed in odd rounds, so each variant's place in the round and which of two compared ` +
    'variants goes first change. Ratios are taken within a round (the two variants ran in the same round), then min / **median** / max over rounds.',
];

for (const profile of ['local', 'slow'] as const) {
  const V = (group: number, inFlight: number, readers: number): Variant => ({ profile, group, inFlight, readers });
  lines.push(
    '',
    `## ${PROFILE_LABEL[profile]}`,
    '',
    'examples/s, median (min–max) over rounds: images received by the main thread / wall seconds from posting the jobs to the last end of stream.',
    '',
    `| requests in flight | readers | ${GROUPS.map((g) => `group ${g}`).join(' | ')} |`,
    `|---:|---:|${GROUPS.map(() => '---:').join('|')}|`,
  );
  for (const readers of READERS) for (const f of IN_FLIGHT) lines.push(`| ${f} | ${readers} | ${GROUPS.map((g) => cell(eps(V(g, f, readers)))).join(' | ')} |`);
  lines.push(
    '',
    'Per-round ratios of examples/s (the two variants of a ratio ran in the same round), min / **median** / max over rounds. Group 1 / group 6, ' +
      'same requests in flight and readers:',
    '',
    `| requests in flight | ${READERS.map((r) => `${r} reader${r > 1 ? 's' : ''}`).join(' | ')} |`,
    `|---:|${READERS.map(() => '---:').join('|')}|`,
    ...IN_FLIGHT.map((f) => `| ${f} | ${READERS.map((r) => ratioCell(ratios(V(1, f, r), V(6, f, r)))).join(' | ')} |`),
    '',
    'Requests in flight 4 / 1, same group and readers:',
    '',
    `| readers | ${GROUPS.map((g) => `group ${g}`).join(' | ')} |`,
    `|---:|${GROUPS.map(() => '---:').join('|')}|`,
    ...READERS.map((r) => `| ${r} | ${GROUPS.map((g) => ratioCell(ratios(V(g, 4, r), V(g, 1, r)))).join(' | ')} |`),
    '',
    'Readers 2 / 1, same group and requests in flight (requestsInFlight is per reader: 2 readers have twice as many requests in flight in all):',
    '',
    `| requests in flight | ${GROUPS.map((g) => `group ${g}`).join(' | ')} |`,
    `|---:|${GROUPS.map(() => '---:').join('|')}|`,
    ...IN_FLIGHT.map((f) => `| ${f} | ${GROUPS.map((g) => ratioCell(ratios(V(g, f, 2), V(g, f, 1)))).join(' | ')} |`),
  );
  // Where the time went: the pipelines' own decoding time (summed over readers) against the wall time.
  const share = (v: Variant) => median(get(v).map((x) => x.decodeMs / x.wallMs));
  lines.push(
    '',
    "Decoding time (the pipelines' `decodeMs`, summed over readers) / wall time, median over rounds; `decodeMs` is wall time in each record's decode loop, " +
      'so time its thread waits for a core counts too; above 1 with 2 readers means both decoded at once:',
    '',
    `| requests in flight | readers | ${GROUPS.map((g) => `group ${g}`).join(' | ')} |`,
    `|---:|---:|${GROUPS.map(() => '---:').join('|')}|`,
  );
  for (const readers of READERS)
    for (const f of IN_FLIGHT) lines.push(`| ${f} | ${readers} | ${GROUPS.map((g) => share(V(g, f, readers)).toFixed(2)).join(' | ')} |`);
}

const all = [...runs.values()].flat();
const slowRuns = VARIANTS.filter((v) => v.profile === 'slow').flatMap(get);
const late = slowRuns.flatMap((x) => x.lateMs);
lines.push(
  '',
  '## Bytes and requests per run',
  '',
  "The same in every run of a group, whatever the profile, requests in flight or readers (checked each run, with the server's own counts):",
  '',
  '| group | bytes fetched (pipeline `bytesFetched`, all readers) | per image | of group 6 | record requests |',
  '|---:|---:|---:|---:|---:|',
  ...GROUPS.map(
    (g) =>
      `| ${g} | ${bytesAt(g).toLocaleString('en-US')} | ${(bytesAt(g) / EXAMPLES).toFixed(1)} | ${((100 * bytesAt(g)) / bytesAt(6)).toFixed(1)}% | ` +
      `${records.length} |`,
  ),
  '',
  `The server also sends the manifest (${MANIFEST_BYTES.toLocaleString('en-US')} bytes) once per reader per run. New TCP connections per run: ` +
    `median ${median(all.map((x) => x.connections))}, max ${Math.max(...all.map((x) => x.connections))} (Node's fetch keeps connections alive between ` +
    `runs). Pacing on the slow link: answers ended ${median(late).toFixed(1)} ms (median) / ${Math.max(...late).toFixed(1)} ms (max) later than ` +
    "TTFB + size / rate, over all paced answers. Cost of starting and ending a run through thread messages (main-thread wall minus the slowest reader's " +
    `own open-to-end time): median ${median(all.map((x) => x.wallMs - x.readerMs)).toFixed(1)} ms.`,
);

console.log(lines.join('\n'));
writeFileSync(RESULTS, `${lines.join('\n')}\n`);
