// Time to a target accuracy over a slow link, in the lab (issue 8: the seeds'
// results, reproduced). A PCR dataset (the bundled Fashion-MNIST mini, or a
// synthetic colour set built by scripts/datasets.mjs) is served by a small
// static server of this bench (Range, ETag, CORS, CORP) behind
// scripts/throttle-proxy.mjs (one shared link: a rate and a per-request delay);
// the lab page comes from a Vite dev server and reads the dataset through the
// proxy with cache=0, so every record crosses the link. Part A (PCR): the scan
// groups of --groups at echo 1 (Fashion-MNIST mini: 6, 3, 2; the synthetic sets:
// 10, 6, 3, 1). Part B (data echoing): the top group with echo 1, and each factor
// of --echoes (default 2, 4) by examples and by batches. The top group / echo 1 run is the baseline of both parts.
// Variants take turns within each round, the order rotated from round to round;
// ratios are per round. Writes bench/results/time-to-accuracy.md (or --out).
// Usage: npx tsx bench/time-to-accuracy.ts [--dataset fashion-mnist-mini|fashion-mnist-mini-64|synthetic-coarse|synthetic-fine] [--size 32 (the model's
//   input, the lab's size=)] [--groups "10,6,3,1" (the first is the baseline)] [--rounds N] [--target ACC] [--rate KBPS] [--delay MS]
//   [--budget S] [--eval-every N] [--model tiny-cnn] [--seed N] [--warmup S] [--variants "g6 e1,g3 e1"]
//   [--echoes "2,4"]
//   [--eval live|deferred] [--from-json FILE (rebuild the report only)] [--out FILE]
// --eval deferred: the page's evalMode=deferred. The runs keep their weights at every --eval-every-th step and evaluate them
// after the budget (the bench's Stop waits for them), as Choi et al. evaluate apart from the training clock; "s to target" is
// then the wall time of the step whose later evaluation first reached the target. Default live (the lab's default): the
// evaluations take place during the budget, and a trainer-bound run pays for them.
//   (kB = 1000 bytes). Run it alone: `flock /tmp/bytelab-bench.lock npx tsx bench/time-to-accuracy.ts`.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Page } from '@playwright/test';
import type { LabSnapshot } from '../src/app/test-api.js';
import type { PipelineStats } from '../src/pipeline/api.js';
import { freePort, openLabBrowser } from './support/lab-browser.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The datasets the bench can serve: where they lie under public/, what they are, the scan groups part A compares by default. */
const DATASETS: Record<string, { path: string; what: string; groups: number[]; note?: string }> = {
  'fashion-mnist-mini': { path: '/datasets/fashion-mnist-mini/', what: 'real, the bundled Fashion-MNIST mini', groups: [6, 3, 2] },
  'fashion-mnist-mini-64': {
    path: '/data/fashion-mnist-mini-64/',
    what: 'real, the Fashion-MNIST mini in records of 64 images (`node scripts/datasets.mjs mini-64`)',
    groups: [6, 3, 2],
  },
  'synthetic-coarse': {
    path: '/data/synthetic-coarse/',
    what: 'synthetic, hue x shape (`node scripts/datasets.mjs synthetic-coarse`; src/pcr/synthetic.ts)',
    groups: [10, 6, 3, 1],
    note:
      'The 10 classes are 2 hues (red, blue) x 5 shapes at random places and angles: a model that tells the hue and guesses the ' +
      'shape scores 20%, so a target at or below 20% measures how soon the model learns the hue, not the shape.',
  },
  'synthetic-fine': {
    path: '/data/synthetic-fine/',
    what: 'synthetic, 1-3 px textures (`node scripts/datasets.mjs synthetic-fine`; src/pcr/synthetic.ts)',
    groups: [10, 6, 3, 1],
  },
};
const DEFAULT_RESULTS = join(ROOT, 'bench', 'results', 'time-to-accuracy.md');
const { values } = parseArgs({
  options: {
    dataset: { type: 'string' },
    size: { type: 'string' },
    groups: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    target: { type: 'string' },
    rate: { type: 'string', default: '50' },
    delay: { type: 'string', default: '40' },
    budget: { type: 'string', default: '75' },
    'eval-every': { type: 'string', default: '20' },
    model: { type: 'string', default: 'tiny-cnn' },
    seed: { type: 'string', default: '7' },
    warmup: { type: 'string', default: '10' },
    variants: { type: 'string' },
    /** Part B's echo factors, each by examples and by batches (a link slower than the trainer by R lets e up to R pay). */
    echoes: { type: 'string' },
    /** When the runs evaluate: live (during the budget, the lab's default) or deferred (after it, from kept weights). */
    eval: { type: 'string' },
    'from-json': { type: 'string' },
    /** Where the report goes (default bench/results/time-to-accuracy.md); a partial run (--variants) should name its own. */
    out: { type: 'string' },
  },
});
/** Every run's recording, for rebuilding the report (--from-json); outside the repository, named after the report (--out). */
const RAW = join(os.tmpdir(), `bytelab-${basename(values.out ?? DEFAULT_RESULTS, '.md')}.json`);
const rounds = Number(values.rounds);
/**
 * A saved bench (--from-json) keeps its target unless --target gives another, and its dataset, size and groups (a bench saved
 * before those: Fashion-MNIST mini).
 */
const savedOptions = values['from-json']
  ? (JSON.parse(readFileSync(values['from-json'], 'utf8')) as { meta: { options: Partial<Meta['options']> } }).meta.options
  : undefined;
const target = Number(values.target ?? savedOptions?.target ?? 0.72);
const datasetId = savedOptions ? (savedOptions.dataset ?? 'fashion-mnist-mini') : (values.dataset ?? 'fashion-mnist-mini');
const dataset = DATASETS[datasetId];
if (!dataset) throw new Error(`--dataset must be one of ${Object.keys(DATASETS).join(', ')}, not "${datasetId}"`);
const DATASET_PATH = dataset.path;
const DATASET_DIR = join(ROOT, 'public', DATASET_PATH);
if (!existsSync(join(DATASET_DIR, 'manifest.json')))
  throw new Error(`${DATASET_DIR} has no manifest.json: build it with node scripts/datasets.mjs ${datasetId}`);
/** The lab's size= (the model's input); undefined: the manifest's size. */
const imageSize = savedOptions ? savedOptions.size : values.size;
if (imageSize !== undefined && !/^\d+(x\d+)?$/.test(imageSize)) throw new Error(`--size must look like 32 or 64x48, not "${imageSize}"`);
const MANIFEST = JSON.parse(readFileSync(join(DATASET_DIR, 'manifest.json'), 'utf8')) as {
  scanGroups: number;
  image: { width: number; height: number; channels: number };
  splits: Record<string, { records: { images: number; groupEnds: number[] }[] }>;
};
const GROUPS = savedOptions ? (savedOptions.groups ?? [6, 3, 2]) : values.groups ? values.groups.split(',').map(Number) : dataset.groups;
if (!(GROUPS.every((g) => Number.isInteger(g) && g >= 1 && g <= MANIFEST.scanGroups) && GROUPS[0] === Math.max(...GROUPS)))
  throw new Error(`--groups: scan groups from 1 to ${MANIFEST.scanGroups}, the baseline's (the highest) first, not "${values.groups}"`);
/** The baseline's scan group: the top one compared. */
const TOP = GROUPS[0]!;
const rateKBps = Number(values.rate);
const delayMs = Number(values.delay);
const budgetS = Number(values.budget);
const evalEvery = Number(values['eval-every']);
const warmupS = Number(values.warmup);
/** A saved bench keeps its evaluation mode (one saved before --eval: live). */
const evalModeText: string = savedOptions ? (savedOptions.evalMode ?? 'live') : (values.eval ?? 'live');
if (evalModeText !== 'live' && evalModeText !== 'deferred') throw new Error(`--eval must be live or deferred, not "${evalModeText}"`);
const evalMode: 'live' | 'deferred' = evalModeText;
const DEFERRED = evalMode === 'deferred';
if (!(Number.isInteger(rounds) && rounds > 0 && target > 0 && target < 1 && rateKBps > 0 && delayMs >= 0 && budgetS > 0 && evalEvery > 0)) {
  throw new Error('--rounds N (>= 1), --target between 0 and 1, --rate KBPS > 0, --delay MS >= 0, --budget S > 0, --eval-every N > 0');
}
const BATCH = 32;
/** The pipeline's record reads in flight (its default, DEFAULT_REQUESTS_IN_FLIGHT in src/pipeline/base.ts). */
const REQUESTS_IN_FLIGHT = 4;
/** How long a run may take to open (manifest, test split over the link) before the bench gives up. */
const OPEN_LIMIT_MS = 120_000;

interface Variant {
  id: string;
  group: number;
  echo: number;
  mode: 'examples' | 'batches';
}
const BASELINE: Variant = { id: `g${TOP} e1`, group: TOP, echo: 1, mode: 'examples' };
/** Part B's echo factors (a bench saved before --echoes: 2, 4). */
const ECHO_FACTORS = savedOptions ? (savedOptions.echoes ?? [2, 4]) : (values.echoes ?? '2,4').split(',').map(Number);
if (!ECHO_FACTORS.every((e) => Number.isInteger(e) && e >= 2 && e <= 16))
  throw new Error(`--echoes: whole echo factors from 2 to 16, comma-separated, not "${values.echoes}"`);
const ECHOES: Variant[] = (['examples', 'batches'] as const).flatMap((mode) =>
  ECHO_FACTORS.map((echo): Variant => ({ id: `g${TOP} e${echo} ${mode}`, group: TOP, echo, mode })),
);
const VARIANTS: Variant[] = [BASELINE, ...GROUPS.slice(1).map((g): Variant => ({ id: `g${g} e1`, group: g, echo: 1, mode: 'examples' })), ...ECHOES];
const PART_A = GROUPS.map((g) => `g${g} e1`);
const PART_B = [BASELINE.id, ...ECHOES.map((v) => v.id)];
if (values.variants) {
  const unknown = values.variants.split(',').filter((id) => !VARIANTS.some((v) => v.id === id));
  if (unknown.length) throw new Error(`--variants: no variant ${unknown.join(', ')} (have ${VARIANTS.map((v) => v.id).join(', ')})`);
}
/** The training split's images per record, the test split's images. */
const RECORD_IMAGES = MANIFEST.splits.train!.records[0]!.images;
const TEST_IMAGES = (MANIFEST.splits.test?.records ?? []).reduce((n, r) => n + r.images, 0);

// ------------------------------------------------------------------ the dataset host and the link

interface SourceCounters {
  requests: number;
  bytes: { train: number; test: number; other: number };
}

/** Serves the dataset's files from memory with what docs/hosting.md asks of another origin: Range (206), a strong ETag, CORS, CORP. */
async function startDatasetServer(): Promise<{ url: string; counters: SourceCounters; close(): Promise<void> }> {
  const files = new Map<string, { body: Buffer; etag: string; lastModified: string }>();
  for (const name of readdirSync(DATASET_DIR)) {
    const st = statSync(join(DATASET_DIR, name));
    if (st.isFile())
      files.set(name, {
        body: readFileSync(join(DATASET_DIR, name)),
        etag: `"${st.size.toString(16)}-${st.mtimeMs.toString(16)}"`,
        lastModified: st.mtime.toUTCString(),
      });
  }
  const counters: SourceCounters = { requests: 0, bytes: { train: 0, test: 0, other: 0 } };
  const cors = {
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': 'Content-Range, Content-Length, ETag, Last-Modified',
    'Cross-Origin-Resource-Policy': 'cross-origin',
  };
  const server: Server = createServer((req, res) => {
    counters.requests++;
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        ...cors,
        'Access-Control-Allow-Methods': 'GET, HEAD, OPTIONS',
        'Access-Control-Allow-Headers': 'Range, If-Range',
        'Access-Control-Max-Age': '86400',
      });
      res.end();
      return;
    }
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = path.startsWith(DATASET_PATH) ? files.get(path.slice(DATASET_PATH.length)) : undefined;
    if (!file) {
      res.writeHead(404, { ...cors, 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    const name = path.slice(DATASET_PATH.length);
    const size = file.body.byteLength;
    const headers: Record<string, string> = {
      ...cors,
      'Content-Type': name.endsWith('.json') ? 'application/json' : 'application/octet-stream',
      'Cache-Control': name.endsWith('.json') ? 'no-cache' : 'public, max-age=86400',
      'Accept-Ranges': 'bytes',
      ETag: file.etag,
      'Last-Modified': file.lastModified,
    };
    let body = file.body;
    let status = 200;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    if (range && (!ifRange || ifRange === file.etag || ifRange === file.lastModified)) {
      const from = Number(range[1]);
      const to = Math.min(size - 1, range[2] ? Number(range[2]) : size - 1);
      if (from >= size || to < from) {
        res.writeHead(416, { ...headers, 'Content-Range': `bytes */${size}` }).end();
        return;
      }
      body = file.body.subarray(from, to + 1);
      status = 206;
      headers['Content-Range'] = `bytes ${from}-${to}/${size}`;
    }
    headers['Content-Length'] = String(body.byteLength);
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    counters.bytes[name.startsWith('train-') ? 'train' : name.startsWith('test-') ? 'test' : 'other'] += body.byteLength;
    res.end(body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://localhost:${port}`, counters, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

/** Runs the repository's throttle proxy; resolves once it listens. */
async function startProxy(target: string, port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'scripts/throttle-proxy.mjs'), '--target', target, '--port', String(port), '--delay', String(delayMs), '--rate', String(rateKBps * 1000)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((ok, fail) => {
    child.once('exit', (code) => fail(new Error(`throttle-proxy exited (${code})`)));
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('throttle-proxy:') && ok());
  });
  return child;
}

function runNode(args: string[]): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`${args.join(' ')} exited with ${code}`))));
  });
}

// ------------------------------------------------------------------ what the page records

/** What the recorder keeps, every time stamp the page's performance.now(). */
interface Recording {
  states: { state: string; t: number }[];
  /** One per change in the number of steps reported: the step count, the trainer clock, the pipeline counters, #echo-reading. */
  samples: { t: number; steps: number; active: number; pipeline: PipelineStats | undefined; reading: string }[];
  evalTimes: { step: number; t: number }[];
  /** When each fetch event (in the order of snapshot().fetches) was first seen: used only by recordings older than FetchEvent.endedAt. */
  fetchTimes: number[];
  /** The page's performance.timeOrigin: a fetch event's endedAt (epoch ms, stamped in the worker) minus this is on the page's clock. */
  timeOrigin: number;
}

/** Installed in every page before its scripts: samples window.__lab every 100 ms, stamping state changes, steps, evaluations and fetches. */
function installRecorder(): void {
  const rec: Recording = { states: [], samples: [], evalTimes: [], fetchTimes: [], timeOrigin: performance.timeOrigin };
  (window as unknown as { __tta: Recording }).__tta = rec;
  let state = '';
  let steps = 0;
  let evals = 0;
  let fetches = 0;
  setInterval(() => {
    const lab = window.__lab;
    if (!lab) return;
    const t = performance.now();
    const p = lab.progress();
    if (p.state !== state) {
      state = p.state;
      rec.states.push({ state, t });
    }
    if (p.state === 'idle') return;
    const s = lab.snapshot();
    for (; fetches < s.fetches.length; fetches++) rec.fetchTimes.push(t);
    for (; evals < s.evals.length; evals++) rec.evalTimes.push({ step: s.evals[evals]!.step, t });
    if (p.steps !== steps && p.last) {
      steps = p.steps;
      const reading = document.getElementById('echo-reading')?.textContent ?? '';
      rec.samples.push({ t, steps, active: p.last.time, pipeline: s.pipeline, reading });
    }
  }, 100);
}

interface Reading {
  steps: number;
  upMs: number;
  downMs: number;
  ratio: number;
  wait: number;
}

function parseReading(steps: number, text: string): Reading | undefined {
  const m = /Upstream .*?(\d+) ms per batch · trainer (\d+) ms per step · R = ([\d.]+) · waiting for data (\d+)%/.exec(text);
  return m ? { steps, upMs: Number(m[1]), downMs: Number(m[2]), ratio: Number(m[3]), wait: Number(m[4]) / 100 } : undefined;
}

// ------------------------------------------------------------------ one run

interface RunResult {
  variant: Variant;
  round: number;
  /** Wall seconds from the page's start of the run (autostart) to training start (state running): manifest, test split over the link, model set-up. */
  openS: number;
  testBytes: number;
  testFetchS: number;
  /** Wall seconds from training start to the first step's report. */
  firstStepS: number;
  /** Wall seconds from training start to the report of the step whose evaluation first reached the target; undefined if none did. */
  hitS?: number;
  hitFromFirstStepS?: number;
  hitActiveS?: number;
  hitStep?: number;
  hitImagesTrained?: number;
  /** The steps' examples less their echoed copies (Batch.echoed), up to the hit; undefined in recordings from before batches said. */
  hitFreshTrained?: number;
  hitFreshRead?: number;
  hitBytes?: number;
  best: number;
  final: number;
  finalStep: number;
  evals: number;
  /** Over the whole budget. */
  steps: number;
  freshRead: number;
  trainBytes: number;
  activeS: number;
  wallS: number;
  evalWallS: number;
  /** Mean of the page's 20-step "waiting for data" readings (a mean of per-step wait shares). */
  waitShare: number;
  /** Share of the trainer clock spent waiting: 1 - steps x mean trainer ms per step (page readings) / trainer clock. */
  waitTimeShare: number;
  /** Steady state (from step 20 to the end of the budget). */
  downMsPerStep: number;
  ratioR: number;
  /** Over whole cycles of the link (see analyse), evaluations included. */
  wallMsPerStep: number;
  /** The steps that window spans. */
  stepWindow: [number, number];
  /** e x wall ms per step: each fresh batch feeds e steps (batch echoing: exactly; example echoing: on average). */
  wallMsPerFreshBatch: number;
  /** Bytes/s of training-split record bytes delivered while training, from the lab's fetch events (received bytes; ends stamped in the worker). */
  deliveredBps: number;
  /** Share of the time (training start to the last moment every read in flight is known) with a training read in flight. */
  linkBusyShare: number;
  /** The same rate as deliveredBps, from the first step on (the link's steady rate, for t_up). */
  steadyBps: number;
  /** Mean training reads in flight while at least one was, from the first step on. */
  readsInFlight: number;
  perFetchBps: number;
  duplicatesInBatches: number;
  warnings: string[];
  adapter: string;
  /** The model's input as the page reported the dataset (DatasetInfo.inputShape). */
  inputShape: number[] | undefined;
  /** Every evaluation of the run: [step, accuracy]. */
  curve: [number, number][];
  /** The evaluations within the budget as (accuracy, seconds from training start to their step's report), to time other targets. */
  timedEvals: [number, number][];
  /** Deferred evaluation: wall seconds of the stop after the budget, which evaluated the kept weights. */
  deferredEvalS?: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : NaN;
};
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/** What one run recorded, kept whole so the report can be rebuilt from it (--from-json). */
interface RawRun {
  variant: Variant;
  round: number;
  budget: number;
  rec: Recording;
  snap: LabSnapshot;
  /** Deferred evaluation: wall seconds of the stop after the budget (it evaluated the kept weights). */
  stopS?: number;
}

async function runOnce(page: Page, labOrigin: string, manifestUrl: string, variant: Variant, round: number, budget = budgetS): Promise<RawRun> {
  const v = variant;
  const q = new URLSearchParams({
    manifest: manifestUrl,
    model: values.model!,
    batch: String(BATCH),
    group: String(v.group),
    echo: String(v.echo),
    echoMode: v.mode,
    evalEvery: String(evalEvery),
    ...(DEFERRED ? { evalMode: 'deferred' } : {}),
    seed: values.seed!,
    cache: '0',
    readers: '1',
    ...(imageSize ? { size: imageSize } : {}),
    autostart: '1',
  });
  await page.goto(`${labOrigin}/?${q}`);
  const t0 = Date.now();
  // Wait for training to start, then for the budget to pass (the page's clock).
  for (;;) {
    const s = await page.evaluate(() => {
      const r = (window as unknown as { __tta?: Recording }).__tta;
      const running = r?.states.find((x) => x.state === 'running');
      const failed = r?.states.find((x) => x.state === 'failed' || x.state === 'stopped');
      return { running: running?.t, now: performance.now(), failed: failed?.state, warnings: window.__lab?.snapshot().warnings ?? [] };
    });
    if (s.failed) throw new Error(`${v.id}: the run ${s.failed}: ${s.warnings.join('; ')}`);
    if (s.running === undefined && Date.now() - t0 > OPEN_LIMIT_MS) throw new Error(`${v.id}: training did not start in ${OPEN_LIMIT_MS / 1000} s`);
    if (s.running !== undefined && s.now - s.running >= budget * 1000) break;
    await page.waitForTimeout(s.running === undefined ? 500 : Math.min(1000, Math.max(50, budget * 1000 - (s.now - s.running))));
  }
  const read = () => page.evaluate(() => ({ rec: (window as unknown as { __tta: Recording }).__tta, snap: window.__lab!.snapshot() as LabSnapshot }));
  if (!DEFERRED) {
    const { rec, snap } = await read();
    await page.evaluate(() => window.__lab!.stop());
    return { variant, round, budget, rec, snap };
  }
  // Deferred: the stop evaluates the weights kept during the budget (steps trained after it are left out by analyse).
  const t1 = Date.now();
  await page.evaluate(() => window.__lab!.stop());
  const stopS = (Date.now() - t1) / 1000;
  const { rec, snap } = await read();
  return { variant, round, budget, rec, snap, stopS };
}

/** Fresh images the run trained on up to `step`: each step's examples less the echoed copies its batch held. */
function freshTrainedTo(snap: LabSnapshot, step: number): number | undefined {
  const steps = snap.steps.filter((m) => m.step <= step);
  if (steps.length < step || steps.some((m) => m.echoed === undefined)) return undefined; // cut by the history, or recorded before
  return steps.reduce((n, m) => n + m.examples - m.echoed, 0);
}

function analyse({ variant: v, round, rec, snap, budget, stopS }: RawRun): RunResult {
  const tLoad = rec.states.find((x) => x.state === 'loading')?.t ?? rec.states[0]!.t;
  const tRun = rec.states.find((x) => x.state === 'running')!.t;
  const tEnd = tRun + budget * 1000;
  const samples = rec.samples.filter((s) => s.t <= tEnd && s.pipeline);
  if (samples.length < 2) throw new Error(`${v.id}: fewer than 2 steps in ${budget} s`);
  const atStep = (step: number) => samples.find((s) => s.steps >= step);
  // Live: the evaluations done within the budget. Deferred: those of the steps reported within it (evaluated after it).
  const evals = snap.evals.filter((e) => {
    if (DEFERRED) return samples.some((s) => s.steps >= e.step);
    const at = rec.evalTimes.find((x) => x.step === e.step);
    return at !== undefined && at.t <= tEnd;
  });
  const hit = evals.find((e) => e.accuracy >= target);
  const hitSample = hit ? atStep(hit.step) : undefined;
  const first = samples[0]!;
  const last = samples.at(-1)!;
  // Evaluations: wall time in the 'evaluating' state within the budget.
  let evalWall = 0;
  for (const [i, s] of rec.states.entries()) {
    if (s.state !== 'evaluating' || s.t > tEnd) continue;
    evalWall += Math.min(tEnd, rec.states[i + 1]?.t ?? tEnd) - s.t;
  }
  // Fetch events: the training split's (train-*) and the test split's (test-*), on the page's clock when the worker read them
  // (recordings made before fetch events carried endedAt: when the recorder saw them, late by the main thread's delays).
  const fetches = snap.fetches.map((f, i) => ({ ...f, t: f.endedAt !== undefined ? f.endedAt - rec.timeOrigin : (rec.fetchTimes[i] ?? Infinity) }));
  const testFetches = fetches.filter((f) => f.record.includes('test-'));
  const trainFetches = fetches.filter((f) => f.record.includes('train-') && f.t >= tRun && f.t <= tEnd);
  // The link, from the lab's fetch events: each training read occupies [end - its ms, end]. Reads still in flight at the end
  // of the budget have no event yet, but at most REQUESTS_IN_FLIGHT are in flight at once: up to the last moment that that
  // many known reads cover, no unknown read was in flight. The rate is the bytes over [from, that moment] (a read the window
  // cuts counts for the share of its time inside, as if its own rate were constant) over the time at least one read was in
  // flight within it.
  const reads = trainFetches.map((f) => ({ a: f.t - f.ms, b: f.t, bytes: f.received }));
  const edges = reads
    .flatMap((x) => [
      { t: x.a, d: 1 },
      { t: x.b, d: -1 },
    ])
    .sort((x, y) => x.t - y.t || x.d - y.d);
  let inFlight = 0;
  let knownTo = Math.max(...reads.map((x) => x.b));
  let full: number | undefined;
  for (const e of edges) {
    if (e.d < 0 && inFlight >= REQUESTS_IN_FLIGHT) full = e.t;
    inFlight += e.d;
  }
  if (full !== undefined) knownTo = full;
  const link = (from: number) => {
    let bytes = 0;
    let busy = 0;
    let occupied = 0;
    let coveredTo = from;
    for (const x of [...reads].sort((p, q) => p.a - q.a)) {
      const [a, b] = [Math.max(from, x.a), Math.min(knownTo, x.b)];
      if (b <= a) continue;
      bytes += (x.bytes * (b - a)) / (x.b - x.a);
      occupied += b - a;
      busy += Math.max(0, b - Math.max(a, coveredTo));
      coveredTo = Math.max(coveredTo, b);
    }
    return { bps: bytes / (busy / 1000), busyShare: busy / (knownTo - from), inFlight: occupied / busy };
  };
  const perFetchBps = mean(trainFetches.map((f) => (f.received / f.ms) * 1000));
  // Steady state: from the first sample at or after step 20 to the end of the budget.
  const steady = samples.find((s) => s.steps >= 20) ?? first;
  // Wall ms per step, between two moments a training read completed (the first after step 20, the last in the budget): fresh
  // images arrive a record at a time, so a window between arbitrary moments would cut a burst of steps anywhere. Steps at
  // a moment: those reported by then.
  const stepsAt = (t: number) => samples.filter((x) => x.t <= t).at(-1)?.steps ?? 0;
  const done = trainFetches.map((f) => f.t).filter((t) => t >= steady.t && t <= tEnd);
  const [ta, tb] = done.length > 1 && stepsAt(done.at(-1)!) - stepsAt(done[0]!) >= 20 ? [done[0]!, done.at(-1)!] : [steady.t, last.t];
  const msPerStep = (tb - ta) / (stepsAt(tb) - stepsAt(ta));
  const readings = samples.map((s) => parseReading(s.steps, s.reading)).filter((r): r is Reading => r !== undefined);
  const steadyReadings = readings.filter((r) => r.steps >= 20);
  return {
    variant: v,
    round,
    openS: (tRun - tLoad) / 1000,
    testBytes: testFetches.reduce((n, f) => n + f.received, 0),
    testFetchS: testFetches.length ? (Math.max(...testFetches.map((f) => f.t)) - tLoad) / 1000 : NaN,
    firstStepS: (first.t - tRun) / 1000,
    hitS: hitSample && (hitSample.t - tRun) / 1000,
    hitFromFirstStepS: hitSample && (hitSample.t - first.t) / 1000,
    hitActiveS: hitSample?.active,
    hitStep: hit?.step,
    hitImagesTrained: hit && hit.step * BATCH,
    hitFreshTrained: hit && freshTrainedTo(snap, hit.step),
    hitFreshRead: hitSample?.pipeline?.examplesRead,
    hitBytes: hitSample?.pipeline?.bytesFetched,
    best: Math.max(...evals.map((e) => e.accuracy)),
    final: evals.at(-1)?.accuracy ?? NaN,
    finalStep: evals.at(-1)?.step ?? 0,
    evals: evals.length,
    steps: last.steps,
    freshRead: last.pipeline!.examplesRead,
    trainBytes: last.pipeline!.bytesFetched,
    activeS: last.active,
    wallS: (last.t - tRun) / 1000,
    evalWallS: evalWall / 1000,
    waitShare: mean(readings.map((r) => r.wait)),
    waitTimeShare: Math.max(0, 1 - (last.steps * mean(readings.map((r) => r.downMs))) / (last.active * 1000)),
    downMsPerStep: median(steadyReadings.map((r) => r.downMs)),
    ratioR: median(steadyReadings.map((r) => r.ratio)),
    wallMsPerStep: msPerStep,
    wallMsPerFreshBatch: v.echo * msPerStep,
    stepWindow: [stepsAt(ta), stepsAt(tb)],
    deliveredBps: link(tRun).bps,
    linkBusyShare: link(tRun).busyShare,
    steadyBps: link(first.t).bps,
    readsInFlight: link(first.t).inFlight,
    perFetchBps,
    duplicatesInBatches: last.pipeline!.duplicatesInBatches,
    warnings: snap.warnings,
    adapter: snap.adapter,
    inputShape: snap.dataset?.inputShape,
    curve: snap.evals.map((e) => [e.step, e.accuracy]),
    timedEvals: evals.flatMap((e): [number, number][] => {
      const at = atStep(e.step);
      return at ? [[e.accuracy, (at.t - tRun) / 1000]] : [];
    }),
    ...(stopS !== undefined ? { deferredEvalS: stopS } : {}),
  };
}

/** Test accuracy minus the baseline's, at the last evaluation step both runs reached (evaluations fall on the same steps). */
function accuracyAtEqualSteps(r: RunResult, b: RunResult): number | undefined {
  const step = Math.min(r.finalStep, b.finalStep);
  const at = (x: RunResult) => x.curve.filter(([s]) => s <= step).at(-1)?.[1];
  const [ra, ba] = [at(r), at(b)];
  return ra === undefined || ba === undefined ? undefined : ra - ba;
}

// ------------------------------------------------------------------ the bench

interface Meta {
  startedAt: string;
  options: {
    rounds: number;
    target: number;
    rateKBps: number;
    delayMs: number;
    budgetS: number;
    evalEvery: number;
    model: string;
    seed: string;
    warmupS: number;
    /** Left out in benches saved before them: Fashion-MNIST mini at its own size, groups 6, 3, 2. */
    dataset?: string;
    size?: string;
    groups?: number[];
    /** Left out in benches saved before --echoes: 2, 4. */
    echoes?: number[];
    /** Left out in benches saved before --eval: live. */
    evalMode?: 'live' | 'deferred';
  };
  totalS: number;
  load0: number[];
  load1: number[];
  browser: string;
  linkMeasure: string;
  source: SourceCounters;
}
interface Saved {
  meta: Meta;
  raws: RawRun[];
  warmup?: RawRun;
}

async function bench(): Promise<Saved> {
  const startedAt = new Date().toISOString();
  const load0 = os.loadavg();
  const t0 = performance.now();
  const data = await startDatasetServer();
  const proxyPort = await freePort();
  const proxy = await startProxy(data.url, proxyPort);
  const proxyUrl = `http://localhost:${proxyPort}`;
  const manifestUrl = `${proxyUrl}${DATASET_PATH}manifest.json`;
  const raws: RawRun[] = [];
  let warmup: RawRun | undefined;
  let browser = '';
  let linkMeasure = '';
  try {
    // What the link delivers, by the proxy's own measure: four whole training records at once, as the lab has four reads in flight.
    linkMeasure = await runNode([join(ROOT, 'scripts/throttle-proxy.mjs'), 'measure', `${proxyUrl}${DATASET_PATH}train-00000.pcr`, '--parallel', '4']);
    console.error(linkMeasure.trim());
    const lab = await openLabBrowser(ROOT);
    try {
      browser = lab.page.context().browser()?.version() ?? '';
      await lab.page.addInitScript(installRecorder);
      // Warm-up (not counted): loads and compiles the page's modules, then trains briefly at group 1.
      await lab.page.goto(`${lab.origin}/`);
      await lab.page.waitForFunction(() => window.__lab !== undefined, undefined, { timeout: 120_000 });
      if (warmupS > 0) warmup = await runOnce(lab.page, lab.origin, manifestUrl, { id: 'warm-up g1 e1', group: 1, echo: 1, mode: 'examples' }, -1, warmupS);
      const only = values.variants?.split(',');
      for (let round = 0; round < rounds; round++) {
        const k = (round * 3) % VARIANTS.length;
        for (const v of [...VARIANTS.slice(k), ...VARIANTS.slice(0, k)].filter((x) => !only || only.includes(x.id))) {
          const raw = await runOnce(lab.page, lab.origin, manifestUrl, v, round);
          raws.push(raw);
          const r = analyse(raw);
          const hit = r.hitS === undefined ? `target not reached (best ${(100 * r.best).toFixed(1)}%)` : `${r.hitS.toFixed(1)} s to target`;
          console.error(
            `round ${round} ${v.id}: ${hit}, ${r.steps} steps, ${r.freshRead} fresh, ${(r.trainBytes / 1e3).toFixed(0)} kB, ` +
              `final ${(100 * r.final).toFixed(1)}%, R ${r.ratioR.toFixed(2)}, received ${(r.deliveredBps / 1e3).toFixed(1)} kB/s ` +
              `(${((performance.now() - t0) / 1000).toFixed(0)} s so far)`,
          );
        }
      }
    } finally {
      await lab.close();
    }
  } finally {
    proxy.kill();
    await data.close();
  }
  const options = {
    rounds,
    target,
    rateKBps,
    delayMs,
    budgetS,
    evalEvery,
    model: values.model!,
    seed: values.seed!,
    warmupS,
    dataset: datasetId,
    ...(imageSize ? { size: imageSize } : {}),
    groups: GROUPS,
    echoes: ECHO_FACTORS,
    evalMode,
  };
  const meta: Meta = {
    startedAt,
    options,
    totalS: (performance.now() - t0) / 1000,
    load0,
    load1: os.loadavg(),
    browser,
    linkMeasure,
    source: data.counters,
  };
  return { meta, raws, warmup };
}

const saved: Saved = values['from-json'] ? (JSON.parse(readFileSync(values['from-json'], 'utf8')) as Saved) : await bench();
if (!values['from-json']) writeFileSync(RAW, JSON.stringify(saved));
const report = buildReport(saved);
console.log(report);
writeFileSync(values.out ?? DEFAULT_RESULTS, report);
if (!values['from-json']) console.error(`raw recordings: ${RAW} (npx tsx bench/time-to-accuracy.ts --from-json ${RAW} [--target ACC] rebuilds the report)`);

// ------------------------------------------------------------------ the report

function buildReport({ meta, raws, warmup: warmupRaw }: Saved): string {
  const o = meta.options;
  const results = raws.map(analyse);
  // A warm-up too short for two steps (a slow model's first compile) is left out of the report, not fatal.
  const warmup = ((raw) => {
    try {
      return raw && analyse(raw);
    } catch {
      return undefined;
    }
  })(warmupRaw);
  const train = MANIFEST.splits.train!.records;
  const trainImages = train.reduce((n, r) => n + r.images, 0);
  const bytesPerImage = (g: number) => train.reduce((n, r) => n + r.groupEnds[g]!, 0) / trainImages;
  const ok = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x);
  const f = (x: number | undefined, d = 1) => (ok(x) ? x.toFixed(d) : 'n/a');
  const pct = (x: number | undefined, d = 1) => (ok(x) ? `${(100 * x).toFixed(d)}%` : 'n/a');
  const int = (x: number | undefined) => (ok(x) ? Math.round(x).toLocaleString('en-US') : 'n/a');
  const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(1)}`;
  const spread = (xs: (number | undefined)[], fmt: (x: number) => string) => {
    const v = xs.filter(ok);
    return v.length ? `${fmt(Math.min(...v))} / **${fmt(median(v))}** / ${fmt(Math.max(...v))}` : 'n/a';
  };
  const ids = VARIANTS.map((v) => v.id).filter((id) => results.some((r) => r.variant.id === id));
  const of = (id: string) => results.filter((r) => r.variant.id === id);
  const baseline = (r: RunResult) => results.find((b) => b.variant.id === BASELINE.id && b.round === r.round);
  /** Per-round ratio variant / baseline (or baseline / variant). */
  const ratio =
    (pick: (r: RunResult) => number | undefined, invert = false) =>
    (r: RunResult) => {
      const b = baseline(r);
      const [x, y] = [pick(r), b && pick(b)];
      if (!ok(x) || !ok(y) || x === 0 || y === 0) return undefined;
      return invert ? y / x : x / y;
    };
  const linkBps = median(of(BASELINE.id).map((r) => r.steadyBps));
  const tUp = (g: number) => ((BATCH * bytesPerImage(g)) / linkBps) * 1000;
  const evalMsPerStep = (r: RunResult) => (r.evalWallS * 1000) / Math.max(1, r.steps);
  const modelMs = (r: RunResult) => Math.max(tUp(r.variant.group), r.variant.echo * r.downMsPerStep);
  const modelEvalMs = (r: RunResult) => Math.max(tUp(r.variant.group), r.variant.echo * (r.downMsPerStep + evalMsPerStep(r)));

  /** A column: its header and its cell from the runs of one variant. */
  type Col = [string, (rs: RunResult[]) => string];
  const sp = (pick: (r: RunResult) => number | undefined, fmt: (x: number) => string) => (rs: RunResult[]) => spread(rs.map(pick), fmt);
  const lines: string[] = [];
  const table = (rows: string[], cols: Col[]) => {
    lines.push(`| variant | ${cols.map(([h]) => h).join(' | ')} |`, `|---|${cols.map(() => '---:|').join('')}`);
    for (const id of rows) lines.push(`| ${id} | ${cols.map(([, cell]) => cell(of(id))).join(' | ')} |`);
    lines.push('');
  };
  const s1 = (x: number) => x.toFixed(1);
  const s0 = (x: number) => x.toFixed(0);
  const s2 = (x: number) => x.toFixed(2);
  const p0 = (x: number) => pct(x, 0);
  const mb = (x: number) => (x / 1e6).toFixed(2);
  const kbps = (x: number) => `${(x / 1000).toFixed(1)} kB/s`;

  const started = meta.startedAt.slice(0, 16).replace('T', ' ');
  const cmd =
    'npx tsx bench/time-to-accuracy.ts ' +
    (o.dataset && o.dataset !== 'fashion-mnist-mini' ? `--dataset ${o.dataset} ` : '') +
    (o.size ? `--size ${o.size} ` : '') +
    (o.groups && o.groups.join() !== dataset.groups.join() ? `--groups ${o.groups.join(',')} ` : '') +
    `--rounds ${o.rounds} --target ${target} --rate ${o.rateKBps} --delay ${o.delayMs} --budget ${o.budgetS} ` +
    `--eval-every ${o.evalEvery}` +
    (DEFERRED ? ' --eval deferred' : '') +
    (ECHO_FACTORS.join() !== '2,4' ? ` --echoes "${ECHO_FACTORS.join(',')}"` : '') +
    (ids.length < VARIANTS.length ? ` --variants "${ids.join(',')}"` : '');
  lines.push(
    '# Time to a target accuracy over a slow link: PCR scan groups and data echoing',
    '',
    `${started} UTC, \`${cmd}\`, run under \`flock /tmp/bytelab-bench.lock\`; whole bench ${(meta.totalS / 60).toFixed(1)} min.`,
    `Machine: ${os.cpus().length} CPU cores (${os.cpus()[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Linux ${os.release()}; ` +
      `Node ${process.version}; Chromium ${meta.browser} headless; WebGPU adapter: ${results[0]?.adapter ?? '?'} (SwiftShader: the "GPU" is ` +
      'emulated on the same 2 CPU cores as everything else).',
    `Load average (1 / 5 / 15 min): ${meta.load0.map(s2).join(' / ')} at the start, ${meta.load1.map(s2).join(' / ')} at the end.`,
    '',
    '## Set-up',
    '',
    `- **Data**: ${dataset.what} (${int(trainImages)} training and ${int(TEST_IMAGES)} test images, ${MANIFEST.image.width}x` +
      `${MANIFEST.image.height} ${MANIFEST.image.channels === 3 ? 'colour' : 'gray'}, ${MANIFEST.scanGroups} scan groups, records of ` +
      `${RECORD_IMAGES} images). Bytes per training image read at scan group g (sum of \`groupEnds[g]\` / images): ${[...GROUPS]
        .sort((a, b) => a - b)
        .map((g) => `g${g} ${f(bytesPerImage(g), 0)} (${pct(bytesPerImage(g) / bytesPerImage(MANIFEST.scanGroups), 0)})`)
        .join(', ')}.` +
      (o.size
        ? ` **The model's input**: ${o.size.includes('x') ? o.size : `${o.size}x${o.size}`} (the lab's \`size=${o.size}\`): every image is ` +
          'decoded at the smallest DCT scale that covers it, then scaled; the bytes read are those of the full-size images.'
        : '') +
      " The page reported the model's input (height, width, channels) as " +
      `${[...new Set(results.map((r) => `[${r.inputShape?.join(', ') ?? '?'}]`))].join(' or ')} in every run.` +
      (dataset.note ? ` ${dataset.note}` : ''),
    '- **Link**: the bench serves the dataset from memory (Range 206, strong ETag, CORS and `Cross-Origin-Resource-Policy: cross-origin`, ' +
      `so the cross-origin-isolated page may read it) behind \`scripts/throttle-proxy.mjs --rate ${o.rateKBps * 1000} --delay ${o.delayMs}\`: ` +
      `one link of ${o.rateKBps} kB/s (kB = 1000 bytes) shared by all answers, ${o.delayMs} ms added before each request. The page itself ` +
      'comes from a Vite dev server; the manifest, the test split and every training record cross the link (`cache=0`: no prefix cache).',
    `- **Runs**: the lab page with \`model=${o.model}&batch=${BATCH}&evalEvery=${o.evalEvery}${DEFERRED ? '&evalMode=deferred' : ''}` +
      `&seed=${o.seed}&cache=0&readers=1` +
      `${o.size ? `&size=${o.size}` : ''}&autostart\` ` +
      "and `group`, `echo`, `echoMode` per variant; the rest at the lab's defaults (Adam lr 0.005, shuffle buffer 512, random flips, " +
      `4 record reads in flight, 4 batches queued). A fresh page load per run. The test split (${MANIFEST.splits.test?.records.length ?? 0} ` +
      'records, read once at full fidelity ' +
      (DEFERRED
        ? `before training) is evaluated for every ${o.evalEvery}th step, but **after the run (deferred evaluation)**: at those steps the ` +
          "trainer keeps a copy of the model's weights (clones of its weight tensors) with the step's time, and the bench's Stop at the " +
          'end of the budget evaluates them, so no evaluation takes wall time within the budget (Choi et al. likewise evaluate apart ' +
          'from the training clock). '
        : `before training) is evaluated every ${o.evalEvery} steps, as the run goes (live evaluation, the lab's default). `) +
      `Each run trains for **${o.budgetS} s of wall time from training start**.`,
    '- **Clocks**: *training start* is when the run enters the "running" state (the test split is on the GPU; the training split\'s first ' +
      'read goes out). What comes before (manifest and test split over the link, model set-up) is reported apart. *s to target* runs from ' +
      `training start to the report of the step whose ${DEFERRED ? '(later) ' : ''}evaluation first reached the target: it includes ` +
      'the wait for the first record before the first step (the shuffle buffer emits from its first arrivals)' +
      (DEFERRED ? ' and no evaluation (they come after the budget)' : ' and the evaluations before that one') +
      ". *Trainer clock* is the lab's own step time (`time`: steps and their waits for data; evaluations excluded).",
    `- **Target**: ${pct(target, 0)} test accuracy (${int(TEST_IMAGES)} test images).`,
    `- **Cut to fit about half an hour on 2 cores**: ${o.rounds} rounds, a ${o.budgetS} s budget per run, one group ${TOP} / echo 1 ` +
      `run per round as the baseline of both parts, an evaluation every ${o.evalEvery} steps (each costs a second or more on SwiftShader).`,
    `- **Order**: ${o.rounds} rounds after a warm-up run (group 1, ${o.warmupS} s, not counted); each round runs the ${ids.length} ` +
      `variants one after the other, the order rotated by 3 places per round. Group ${TOP} / echo 1 is the baseline of both parts; ratios are ` +
      'taken within a round, then min / **median** / max over rounds (every figure below is min / **median** / max over rounds).',
    '',
    '## The link',
    '',
    "The proxy's own measure before the runs (`throttle-proxy.mjs measure`, four whole training records at once after a warm-up request; " +
      'KiB = 1024 bytes):',
    '',
    '```',
    ...meta.linkMeasure.trim().split('\n'),
    '```',
    '',
    '| figure | value |',
    '|---|---:|',
    `| configured: \`--rate ${o.rateKBps * 1000}\` bytes/s shared by all answers, \`--delay ${o.delayMs}\` ms per request | ${f(o.rateKBps, 1)} kB/s |`,
    `| bytes/s the lab received from training reads, from training start, group ${TOP} / echo 1 | ${spread(
      of(BASELINE.id).map((r) => r.deliveredBps),
      kbps,
    )} |`,
    `| the same from the first step on (the link's steady rate: t_up below uses its median) | ${spread(
      of(BASELINE.id).map((r) => r.steadyBps),
      kbps,
    )} |`,
    `| the same from training start, every run of every variant | ${spread(
      results.map((r) => r.deliveredBps),
      kbps,
    )} |`,
    `| share of that time with a training read in flight, group ${TOP} / echo 1 | ${spread(
      of(BASELINE.id).map((r) => r.linkBusyShare),
      p0,
    )} |`,
    `| bytes/s of one read (its bytes / its own time; up to 4 share the link), group ${TOP} / echo 1 | ${spread(
      of(BASELINE.id).map((r) => r.perFetchBps),
      kbps,
    )} |`,
    `| test split over the link (fetch events) | ${spread(
      results.map((r) => r.testBytes / 1000),
      (x) => `${x.toFixed(0)} kB`,
    )} |`,
    `| page start to training start (manifest, test split, model set-up), every run | ${spread(
      results.map((r) => r.openS),
      (x) => `${x.toFixed(1)} s`,
    )} |`,
    DEFERRED
      ? `| one evaluation of the test split (deferred: wall time of the stop after the budget / evaluations), every run | ${spread(
          results.map((r) => (r.deferredEvalS ?? NaN) / Math.max(1, r.curve.length)),
          (x) => `${x.toFixed(2)} s`,
        )} |`
      : `| one evaluation of the test split (wall time in the "evaluating" state), every run | ${spread(
          results.map((r) => r.evalWallS / Math.max(1, r.evals)),
          (x) => `${x.toFixed(2)} s`,
        )} |`,
    '',
    'Received bytes/s: from the fetch events of training reads (bytes, duration, and the moment it ended, stamped in the ' +
      'pipeline worker; a read occupies [end − duration, end]), the bytes over the time at least one read was in flight, up to the last moment four known ' +
      'reads were in flight (the pipeline has at most four, so no read without an event yet was on the wire before then; a read ' +
      'the window cuts counts for its share of time inside).',
    '',
    `Bytes the dataset server sent during the whole bench (link measure and warm-up included): training records ${int(meta.source.bytes.train)}, ` +
      `test records ${int(meta.source.bytes.test)}, manifests ${int(meta.source.bytes.other)}; ${int(meta.source.requests)} requests.`,
    '',
    '## Time to target, every variant',
    '',
  );
  table(ids, [
    ['reached', (rs) => `${rs.filter((r) => r.hitS !== undefined).length}/${rs.length}`],
    ['first step after training start (s)', sp((r) => r.firstStepS, s1)],
    ['s to target', sp((r) => r.hitS, s1)],
    ['trainer clock to target (s)', sp((r) => r.hitActiveS, s1)],
    ['images trained by then', sp((r) => r.hitImagesTrained, int)],
    ['fresh images trained on by then', sp((r) => r.hitFreshTrained, int)],
    ['fresh images read by then', sp((r) => r.hitFreshRead, int)],
    ['training MB read by then', sp((r) => r.hitBytes, mb)],
    [
      'best',
      sp(
        (r) => r.best,
        (x) => pct(x),
      ),
    ],
    [
      'final',
      sp(
        (r) => r.final,
        (x) => pct(x),
      ),
    ],
  ]);
  // One target can mislead: a baseline that hovers just under it for a while makes every variant look faster. The same runs
  // timed to the targets around it show whether a speed-up holds or is that artefact.
  const targets = [-0.06, -0.04, -0.02, 0, 0.02].map((d) => Math.round((target + d) * 100) / 100);
  const secondsTo = (r: RunResult, t: number) => r.timedEvals.find(([a]) => a >= t)?.[1];
  lines.push(
    '## The same runs timed to other targets',
    '',
    `Speed-up = the baseline's seconds from training start to the target / the variant's, round by round (min / **median** / max, with how ` +
      `many rounds both reached it); the first row is the baseline's seconds. The report's target is ${pct(target, 0)}. A speed-up that ` +
      "holds at every target is the variant's; one that appears at a single target is the baseline hovering under it.",
    '',
  );
  table(ids, [
    ...targets.map(
      (t): Col => [
        pct(t, 0),
        (rs) => {
          const ratios = rs.map((r) => {
            const [x, b] = [secondsTo(r, t), baseline(r) && secondsTo(baseline(r)!, t)];
            return r.variant.id === BASELINE.id ? x : ok(x) && ok(b) ? b / x : undefined;
          });
          const n = ratios.filter(ok).length;
          return n ? `${spread(ratios, rs[0]?.variant.id === BASELINE.id ? s1 : s2)} (${n}/${rs.length})` : `– (0/${rs.length})`;
        },
      ],
    ),
  ]);
  lines.push(
    `**reached**: runs whose evaluations reached ${pct(target, 0)} within the budget / runs. **images trained**: steps x ${BATCH}, echoed ` +
      'copies included. **fresh images trained on**: those images less the echoed copies among them, as each batch counts them ' +
      "(Batch.echoed; '–' for recordings made before batches counted them). **fresh images read**: the pipeline's `examplesRead` " +
      'at that step, which includes its read-ahead (the shuffle ' +
      `buffer, queued batches; reads come in whole records of ${RECORD_IMAGES}). **training MB**: training-record bytes fetched (\`bytesFetched\`, ` +
      `MB = 10^6 bytes; the test split not counted). **best** / **final**: best and last test accuracy of the evaluations within the ${o.budgetS} s.`,
    '',
    '## Part A: PCR scan groups (echo 1)',
    '',
  );
  const partA = ids.filter((id) => PART_A.includes(id));
  /** The speed-up columns both parts show. */
  const speedUp: Col[] = [
    [
      'speed-up to target, wall (baseline s / variant s)',
      sp(
        ratio((r) => r.hitS, true),
        s2,
      ),
    ],
    [
      'speed-up, wall from the first step (without the start every variant pays)',
      sp(
        ratio((r) => r.hitFromFirstStepS, true),
        s2,
      ),
    ],
    [
      'speed-up, trainer clock',
      sp(
        ratio((r) => r.hitActiveS, true),
        s2,
      ),
    ],
  ];
  const bestVsBaseline: Col = [
    'best accuracy − baseline (points)',
    sp((r) => {
      const b = baseline(r);
      return b && 100 * (r.best - b.best);
    }, signed),
  ];
  const partB = ids.filter((id) => PART_B.includes(id));
  table(
    partA.filter((id) => id !== BASELINE.id),
    [
      ['bytes / image', (rs) => f(bytesPerImage(rs[0]!.variant.group), 0)],
      ...speedUp,
      [
        'training bytes to target, variant / baseline',
        sp(
          ratio((r) => r.hitBytes),
          s2,
        ),
      ],
      [
        'images trained to target, variant / baseline',
        sp(
          ratio((r) => r.hitImagesTrained),
          s2,
        ),
      ],
      bestVsBaseline,
      [
        'final accuracy − baseline (points)',
        sp((r) => {
          const b = baseline(r);
          return b && 100 * (r.final - b.final);
        }, signed),
      ],
      [
        'accuracy at equal steps − baseline (points)',
        sp((r) => {
          const b = baseline(r);
          const d = b && accuracyAtEqualSteps(r, b);
          return d === undefined ? undefined : 100 * d;
        }, signed),
      ],
    ],
  );
  lines.push(
    `Per-round ratios against the group ${TOP} / echo 1 run of the same round; "n/a" where a run missed the target. **accuracy at ` +
      "equal steps**: the test accuracy of the variant minus the baseline's, both at the last evaluation both runs reached within the " +
      'budget, so after the same number of images trained: the accuracy cost of the lower fidelity itself, without the extra steps ' +
      'its cheaper reads bought.',
    '',
    'Where the time went:',
    '',
  );
  table(partA, [
    ['link ms per batch (t_up)', sp((r) => tUp(r.variant.group), s0)],
    ['trainer ms per step (t_down, page)', sp((r) => r.downMsPerStep, s0)],
    ['R (page)', sp((r) => r.ratioR, s2)],
    ['R (link) = t_up / t_down', sp((r) => tUp(r.variant.group) / r.downMsPerStep, s2)],
    ['wall ms per step', sp((r) => r.wallMsPerStep, s0)],
    ['steps in the budget', sp((r) => r.steps, int)],
    ['share of wall time evaluating', sp((r) => r.evalWallS / r.wallS, p0)],
    ['waiting: share of trainer clock', sp((r) => r.waitTimeShare, p0)],
    ['waiting (page reading)', sp((r) => r.waitShare, p0)],
    ['kB/s received', sp((r) => r.deliveredBps / 1000, s1)],
    ['reads in flight (mean, while any)', sp((r) => r.readsInFlight, s1)],
  ]);
  lines.push(
    `**t_up**: ${BATCH} images x bytes / image / the link's steady rate (median over the baseline runs, ${f(linkBps / 1000)} kB/s): its time for ` +
      "one fresh batch. **t_down**: median of the page's readings (#echo-reading) from step 20 on: the trainer's own time per step, waits " +
      "for data excluded. **R (page)**: median of the page's readings of R (the pipeline's upstream clocks per fresh batch / t_down, " +
      'src/train/echo-advisor.ts). ' +
      '**wall ms per step**: evaluations included, between the first training read to complete after step 20 and the last one in the ' +
      `budget (fresh images come a record of ${RECORD_IMAGES} at a time and the trainer runs through each in a burst, so a window is cut where a ` +
      'record arrives, not anywhere in a burst). **waiting: share of trainer clock**: 1 − steps x mean t_down / ' +
      'trainer clock. **waiting (page reading)**: mean of the page\'s "waiting for data" readings, each a mean of per-step shares over ' +
      '20 steps (a step that waits for a whole record counts once, as much as a step that did not wait); since 2026-11-26 it leaves out ' +
      "the batches' hand-over from the worker (waits for batches already made), so it reads lower than in results measured before.",
    '',
    `## Part B: data echoing at group ${TOP}`,
    '',
  );
  table(
    partB.filter((id) => id !== BASELINE.id),
    [
      ...speedUp,
      [
        'fresh images read to target, variant / baseline',
        sp(
          ratio((r) => r.hitFreshRead),
          s2,
        ),
      ],
      [
        'fresh images trained on to target, variant / baseline',
        sp(
          ratio((r) => r.hitFreshTrained),
          s2,
        ),
      ],
      [
        'training bytes to target, variant / baseline',
        sp(
          ratio((r) => r.hitBytes),
          s2,
        ),
      ],
      bestVsBaseline,
    ],
  );
  lines.push(
    `Per-round ratios against the group ${TOP} / echo 1 run of the same round. **From the first step**: the seconds from each run's ` +
      'first step to the target, leaving out what every variant pays before it (the first record over the link).',
    '',
    'Time per upstream step (one fresh batch) against the model max(t_up, e x t_down) of Choi et al., over the window of Part A:',
    '',
  );
  table(partB, [
    ['e', (rs) => String(rs[0]!.variant.echo)],
    ['t_up: link ms per fresh batch', sp((r) => tUp(r.variant.group), s0)],
    ['t_down: trainer ms per step (page)', sp((r) => r.downMsPerStep, s0)],
    ['R (page)', sp((r) => r.ratioR, s2)],
    ['R (link)', sp((r) => tUp(r.variant.group) / r.downMsPerStep, s2)],
    ['evaluation ms per step', sp(evalMsPerStep, s0)],
    ['model: max(t_up, e·t_down)', sp(modelMs, s0)],
    ['model with evaluations: max(t_up, e·(t_down + eval))', sp(modelEvalMs, s0)],
    ['measured: wall ms per fresh batch', sp((r) => r.wallMsPerFreshBatch, s0)],
    ['measured / model with evaluations', sp((r) => r.wallMsPerFreshBatch / modelEvalMs(r), s2)],
    ['wall ms per step', sp((r) => r.wallMsPerStep, s0)],
    ['waiting: share of trainer clock', sp((r) => r.waitTimeShare, p0)],
    ['reads in flight (mean, while any)', sp((r) => r.readsInFlight, s1)],
    ['link busy: share of the time a read was in flight', sp((r) => r.linkBusyShare, p0)],
    ['repeats within a batch (in the budget)', sp((r) => r.duplicatesInBatches, int)],
  ]);
  lines.push(
    '**evaluation ms per step**: wall time evaluating / steps; the trainer spends it on top of t_down while the link goes on. ' +
      '**measured**: e x wall ms per step (over the window of Part A; a fresh batch feeds e steps, exactly with batch echoing and on ' +
      'average with example echoing). **link busy**: from training start; t_up assumes the link never idles, so where the ' +
      "trainer keeps up only just (e·t_down near t_up), its slower moments fill the queue of batches, reads pause and the link's idle " +
      "share adds to the time per fresh batch. **repeats within a batch**: the pipeline's `duplicatesInBatches`.",
    '',
    '## Every run',
    '',
    '| round | variant | first step (s) | s to target | step | fresh read | MB read | best | final | steps | fresh read in budget | ' +
      'MB in budget | trainer clock (s) | evaluations (s) | kB/s received | R (page) | t_down (ms) | waiting (trainer clock) | warnings |',
    `|---:|---|${'---:|'.repeat(17)}`,
  );
  for (const r of [...(warmup ? [warmup] : []), ...results]) {
    lines.push(
      `| ${r.round < 0 ? 'warm-up' : r.round} | ${r.variant.id} | ${f(r.firstStepS)} | ${f(r.hitS)} | ${r.hitStep ?? 'n/a'} | ${int(r.hitFreshRead)} | ` +
        `${f(r.hitBytes && r.hitBytes / 1e6, 2)} | ${pct(r.best)} | ${pct(r.final)} | ${r.steps} | ${int(r.freshRead)} | ${f(r.trainBytes / 1e6, 2)} | ` +
        `${f(r.activeS)} | ${r.evals} (${f(r.evalWallS)}) | ${f(r.deliveredBps / 1000)} | ${f(r.ratioR, 2)} | ${f(r.downMsPerStep, 0)} | ` +
        `${pct(r.waitTimeShare, 0)} | ${r.warnings.length ? r.warnings.join('; ') : 'none'} |`,
    );
  }
  // A summary in words, from the medians above, put after the header.
  const med = (xs: (number | undefined)[]) => median(xs.filter(ok));
  const range = (xs: (number | undefined)[]) => {
    const v = xs.filter(ok);
    return v.length ? `${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)}` : 'n/a';
  };
  const reached = (id: string) => `${of(id).filter((r) => r.hitS !== undefined).length} of ${of(id).length}`;
  const dBest = (r: RunResult) => {
    const b = baseline(r);
    return b && 100 * (r.best - b.best);
  };
  const summary: string[] = ['## Summary', ''];
  const base = of(BASELINE.id);
  summary.push(
    `- **Baseline** (group ${TOP}, echo 1): reached ${pct(target, 0)} in ${reached(BASELINE.id)} runs, median ${f(med(base.map((r) => r.hitS)))} s ` +
      `from training start; the link carried ${f(linkBps / 1000)} kB/s (steady) and was the bottleneck: R (link) = ` +
      `${f(med(base.map((r) => tUp(TOP) / r.downMsPerStep)), 1)}, the trainer waited ${pct(med(base.map((r) => r.waitTimeShare)), 0)} of its clock.`,
  );
  for (const id of partA.filter((x) => x !== BASELINE.id)) {
    const rs = of(id);
    const g = rs[0]!.variant.group;
    const up = rs.map(ratio((r) => r.hitS, true));
    const rl = med(rs.map((r) => tUp(g) / r.downMsPerStep));
    // With the evaluations spread over the steps, is the link or the trainer the slow side?
    const trainerMs = med(rs.map((r) => r.downMsPerStep + evalMsPerStep(r)));
    const pace =
      tUp(g) > trainerMs
        ? `the link still set the pace (t_up ${f(tUp(g), 0)} ms per batch > ${f(trainerMs, 0)} ms of trainer and evaluation per step)`
        : `the trainer (SwiftShader) and the evaluations set the pace (${f(trainerMs, 0)} ms per step > t_up ${f(tUp(g), 0)} ms), which caps it`;
    const m = med(up);
    const verdict = !ok(m)
      ? 'did not reach the target'
      : m > 2.6
        ? `more than the ~2x PCR reports (a link-bound run could gain up to ${f(bytesPerImage(TOP) / bytesPerImage(g), 1)}x from the bytes alone)`
        : m >= 1.7
          ? 'about as much sooner as PCR reports (~2x)'
          : m > 1.1
            ? 'sooner, but short of ~2x'
            : 'not sooner';
    summary.push(
      `- **PCR, group ${g}** (${pct(bytesPerImage(g) / bytesPerImage(TOP), 0)} of the bytes per image; reached the target in ${reached(id)} runs): ` +
        `speed-up to target ${f(m, 2)} (rounds ${range(up)}) on the wall clock, ${f(med(rs.map(ratio((r) => r.hitActiveS, true))), 2)} on the ` +
        `trainer clock: ${verdict}. Best accuracy within the budget ${signed(med(rs.map(dBest)))} points against group ${TOP}. R (link) ${f(rl, 2)}, ` +
        `but ${pace}; it needed ${f(med(rs.map(ratio((r) => r.hitImagesTrained))), 2)}x the baseline's images trained to get there.`,
    );
  }
  for (const id of partB.filter((x) => x !== BASELINE.id)) {
    const rs = of(id);
    const e = rs[0]!.variant.echo;
    const up = rs.map(ratio((r) => r.hitS, true));
    summary.push(
      `- **Echo ${e}, ${rs[0]!.variant.mode}** (reached the target in ${reached(id)} runs): speed-up to target ${f(med(up), 2)} (rounds ` +
        `${range(up)}), fresh images read to target ${f(med(rs.map(ratio((r) => r.hitFreshRead))), 2)}x the baseline's, best accuracy ` +
        `${signed(med(rs.map(dBest)))} points; time per fresh batch ${f(med(rs.map((r) => r.wallMsPerFreshBatch)), 0)} ms against ` +
        `${f(med(rs.map(modelMs)), 0)} ms from max(t_up, e·t_down) and ${f(med(rs.map(modelEvalMs)), 0)} ms with the evaluations added.`,
    );
  }
  for (const e of ECHO_FACTORS) {
    const [ex, ba] = [of(`g${TOP} e${e} examples`), of(`g${TOP} e${e} batches`)];
    if (!ex.length || !ba.length) continue;
    const perRound = ex.map((r) => {
      const b = ba.find((x) => x.round === r.round);
      return b && ok(r.hitS) && ok(b.hitS) ? b.hitS / r.hitS : undefined;
    });
    const m = med(perRound);
    const verdict = !ok(m)
      ? 'not comparable'
      : m > 1.05
        ? 'example echoing reached the target sooner, as Choi et al. report'
        : m < 0.95
          ? 'batch echoing was sooner here'
          : 'no clear difference';
    summary.push(
      `- **Examples vs batches at e = ${e}**: batch-echo time to target / example-echo time to target ${f(m, 2)} (rounds ${range(perRound)}): ${verdict}.`,
    );
  }
  const rPage = (id: string) => f(med(of(id).map((r) => r.ratioR)), 1);
  const rLink = (id: string) => f(med(of(id).map((r) => tUp(r.variant.group) / r.downMsPerStep)), 1);
  const eTop = Math.max(...ECHO_FACTORS);
  const e4 = of(`g${TOP} e${eTop} examples`).length ? `g${TOP} e${eTop} examples` : undefined;
  // Where the page reads R well below the link at the top echo, say why (seen on Fashion-MNIST mini at echo 4: 1.4 against 5.5).
  const low4 = e4 !== undefined && Number(rPage(e4)) < 0.6 * Number(rLink(e4));
  const at4 = e4 ? `, ${low4 ? 'but ' : ''}${rPage(e4)} against ${rLink(e4)} at echo ${eTop} (examples)` : '';
  const evalShares = ids.map((id) => `${id} ${pct(med(of(id).map((r) => r.evalWallS / r.wallS)), 0)}`).join(', ');
  summary.push(
    `- **The page's own readings**: R (page) ${rPage(BASELINE.id)} against ${rLink(BASELINE.id)} from the link at group ${TOP} / echo 1${at4}` +
      (low4
        ? ': once echoing makes the trainer the slow side, the pipeline keeps fewer reads in flight, each gets more of the link and ' +
          'finishes sooner; read time summed over the 4 slots (the measure before the link clock, src/pipeline/link-clock.ts) read low'
        : '') +
      `. Its "waiting for data" (a mean of per-step shares) read ${pct(med(base.map((r) => r.waitShare)), 0)} at group ${TOP} / echo 1 ` +
      `while the trainer waited ${pct(med(base.map((r) => r.waitTimeShare)), 0)} of its clock: data comes a record ` +
      `(${f(RECORD_IMAGES / BATCH, 1)} batches) at a time, so one step in about ${Math.round(RECORD_IMAGES / BATCH)} waits long and the rest ` +
      'not at all.',
    DEFERRED
      ? `- **Evaluations are deferred** (${int(TEST_IMAGES)} test images for every ${o.evalEvery}th step): none takes wall time within ` +
          `the budget (share of wall time evaluating: ${evalShares}); after it, the stop evaluated the kept weights, ` +
          `${f(med(results.map((r) => r.curve.length)), 0)} per run (median) in ${f(med(results.map((r) => r.deferredEvalS ?? NaN)), 1)} s ` +
          `(${f(med(results.map((r) => (r.deferredEvalS ?? NaN) / Math.max(1, r.curve.length))), 2)} s each). So a trainer-bound run ` +
          'now trains at the pace of its steps alone, as in Choi et al., who evaluate apart from the training clock.'
      : `- **Evaluations** (${int(TEST_IMAGES)} test images every ${o.evalEvery} steps, ` +
          `${f(med(results.map((r) => r.evalWallS / Math.max(1, r.evals))), 2)} s ` +
          'each on SwiftShader) take place while the link goes on: a link-bound run hides them, a trainer-bound one pays for them ' +
          `(share of wall time evaluating: ${evalShares}). So the wall-clock speed-ups of the runs that became trainer-bound (lower ` +
          'groups, echo 4) are smaller than they would be with rarer evaluations; the trainer clock leaves the evaluations out but ' +
          'also the link time they hid.',
    '- **Before the first step**: the reads in flight ramp up with the records arrived (1, 1, 2, 3, 4), so the first record has the ' +
      'link alone, and the shuffle buffer emits from its first arrivals (two in, one out, until it holds 512): the first step waits ' +
      `for one record, at group ${TOP} about ${f((bytesPerImage(TOP) * RECORD_IMAGES) / 1000, 0)} kB / ${f(linkBps / 1000, 0)} kB/s; the first step came ` +
      `${f(med(base.map((r) => r.firstStepS)), 1)} s after training start` +
      (partA.length > 1
        ? ` (${partA
            .filter((id) => id !== BASELINE.id)
            .map((id) => `group ${of(id)[0]!.variant.group}: ${f(med(of(id).map((r) => r.firstStepS)), 1)} s`)
            .join(', ')})`
        : '') +
      '. This is part of every "s to target".',
    '',
  );
  lines.splice(lines.indexOf('## Set-up'), 0, ...summary);
  lines.push('', 'Test accuracy at each evaluation (step: accuracy), every run:', '');
  for (const r of results) lines.push(`- round ${r.round}, ${r.variant.id}: ${r.curve.map(([s, a]) => `${s}: ${(100 * a).toFixed(2)}`).join(', ')}`);
  // A run of part B alone (--variants) has no part A to show but its baseline, which part B shows too; a run of part A alone no part B.
  if (partAOnlyBaseline(ids)) {
    const from = lines.indexOf('## Part A: PCR scan groups (echo 1)');
    const to = lines.indexOf(`## Part B: data echoing at group ${TOP}`);
    lines.splice(from, to - from, '## Part A: PCR scan groups (echo 1)', '', 'Not run here (see `--variants` above).', '');
  }
  if (partB.length <= 1) {
    const from = lines.indexOf(`## Part B: data echoing at group ${TOP}`);
    const to = lines.indexOf('## Every run');
    lines.splice(from, to - from, `## Part B: data echoing at group ${TOP}`, '', 'Not run here (see `--variants` above).', '');
  }
  return `${lines.join('\n')}\n`;
}

/** Whether a run had no scan group but the baseline's (a part B run). */
function partAOnlyBaseline(ids: string[]): boolean {
  return ids.filter((id) => PART_A.includes(id)).length <= 1;
}
