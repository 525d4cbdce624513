// How long a training run waits for its first batch on a slow link, and how
// soon it has the batches an echoing run needs, for two versions of the
// pipeline side by side (issue 8: the start that every echo variant pays). In
// Node, without a model: the bundled Fashion-MNIST mini is served from memory
// behind scripts/throttle-proxy.mjs (one shared link, the delay before each
// request), one ImagePipeline per run with the lab's training options (batch 32,
// shuffle buffer 512, flips, group 6, 4 reads in flight, no prefix cache), and
// a stand-in trainer that takes each batch and waits --step ms. Each version is
// imported from its own source tree (--trees), so the code before a change
// (another git worktree) and after it run in one bench, taking turns within
// each round, the order rotated from round to round.
// Usage: flock /tmp/bytelab-bench.lock npx tsx bench/first-step.ts [--trees "before=/work/main,after=."] [--rates "40,80"]
//   [--echo "1,4"] [--records "1,2,4,6"] [--rounds 3] [--step 60] [--delay 40] [--out bench/results/first-step.md]
//   (kB = 1000 bytes; --records: for each K, the time to K x 256 x echo / 32 batches, K records' images trained on)
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startTestServer } from '../test/support/http-server.js';
import { freePort } from './support/lab-browser.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    trees: { type: 'string', default: `before=/work/main,after=${ROOT}` },
    rates: { type: 'string', default: '40,80' },
    echo: { type: 'string', default: '1,4' },
    records: { type: 'string', default: '1,2,4,6' },
    rounds: { type: 'string', default: '3' },
    step: { type: 'string', default: '60' },
    delay: { type: 'string', default: '40' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results', 'first-step.md') },
  },
});
const trees = values.trees.split(',').map((spec) => {
  const [name, path] = spec.split('=') as [string, string];
  return { name, path: resolve(path) };
});
const rates = values.rates.split(',').map(Number);
const echoes = values.echo.split(',').map(Number);
/** The report's later columns: the time to the batch that completes this many records' images (x the echo factor) trained on. */
const records = values.records.split(',').map(Number);
const rounds = Number(values.rounds);
const stepMs = Number(values.step);
const delayMs = Number(values.delay);

const DATASET = join(ROOT, 'public', 'datasets', 'fashion-mnist-mini');
const files = new Map(readdirSync(DATASET).map((f) => [f, new Uint8Array(readFileSync(join(DATASET, f)))] as const));
const server = await startTestServer(files);

/** A version of the pipeline: ImagePipeline, pcrRecords and the decoder, imported from one source tree. */
async function load(tree: string) {
  const [{ ImagePipeline }, { pcrRecords }, { loadTurboJpegNode }] = await Promise.all([
    import(join(tree, 'src/pipeline/image-pipeline.ts')),
    import(join(tree, 'src/pipeline/pcr-records.ts')),
    import(join(tree, 'src/jpeg/turbo-node.ts')),
  ]);
  return { ImagePipeline, pcrRecords, loadTurboJpegNode };
}
const versions = await Promise.all(trees.map(async (t) => ({ ...t, code: await load(t.path) })));

async function startProxy(rateKBps: number): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const args = ['--target', server.url, '--port', String(port), '--rate', String(rateKBps * 1000), '--delay', String(delayMs)];
  const child = spawn(process.execPath, [join(ROOT, 'scripts/throttle-proxy.mjs'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('throttle-proxy:') && ok());
    child.on('exit', (code) => fail(new Error(`throttle-proxy exited with ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}/` };
}

interface Run {
  version: string;
  rate: number;
  echo: number;
  round: number;
  /** ms from the first ask to the first batch, and to the batch that completes each of `records` records' worth of images. */
  first: number;
  toRecords: number[];
  /** Records fetched when the first batch came. */
  recordsAtFirst: number;
  /** Of the first 16 batches and of the next 16: the distinct records and classes in a batch, averaged. */
  mixing: { records: number; classes: number }[];
}

async function run(v: (typeof versions)[number], proxyUrl: string, rate: number, echo: number, round: number): Promise<Run> {
  const { ImagePipeline, pcrRecords, loadTurboJpegNode } = v.code;
  const p = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined);
  await p.open({
    manifestUrl: `${proxyUrl}manifest.json`,
    split: 'train',
    batchSize: 32,
    fidelity: 6,
    echoFactor: echo,
    echoMode: 'examples',
    seed: 7,
    shuffleBuffer: 512,
    epochs: Infinity,
    augment: true,
    prefetch: 4,
    requestsInFlight: 4,
    cacheLimitBytes: 0,
  });
  const marks = records.map((k) => Math.ceil((k * 256 * echo) / 32));
  const upTo = Math.max(...marks);
  const at: number[] = [];
  const mixing = [0, 1].map(() => ({ records: 0, classes: 0 }));
  const start = performance.now();
  let recordsAtFirst = 0;
  for (let n = 1; n <= upTo; n++) {
    const batch = await p.next();
    if (!batch) throw new Error('the stream ended');
    at[n] = performance.now() - start;
    if (n <= 32) {
      const m = mixing[n <= 16 ? 0 : 1]!;
      m.records += new Set(Array.from(batch.ids, (id: number) => Math.floor(id / 256))).size / 16;
      m.classes += new Set(batch.y).size / 16;
    }
    if (n === 1) recordsAtFirst = p.stats.recordsFetched;
    if (n < upTo) await new Promise((ok) => setTimeout(ok, stepMs));
  }
  p.close();
  return { version: v.name, rate, echo, round, first: at[1]!, toRecords: marks.map((m) => at[m]!), recordsAtFirst, mixing };
}

const runs: Run[] = [];
for (const rate of rates) {
  const proxy = await startProxy(rate);
  for (let round = 0; round < rounds; round++) {
    for (const echo of echoes) {
      const order = versions.map((_, i) => versions[(i + round) % versions.length]!);
      for (const v of order) {
        // Let the reads of the last run drain off the shared link.
        await new Promise((ok) => setTimeout(ok, 3000));
        const r = await run(v, proxy.url, rate, echo, round);
        runs.push(r);
        const marks = records.map((k, i) => `${k}: ${(r.toRecords[i]! / 1000).toFixed(1)}`).join(', ');
        console.log(`${rate} kB/s e=${echo} round ${round + 1} ${v.name}: first batch ${(r.first / 1000).toFixed(2)} s; records' batches ${marks} s`);
      }
    }
  }
  proxy.child.kill();
}
await server.close();

const s = (ms: number) => (ms / 1000).toFixed(2);
const mmm = (xs: number[]) => {
  const o = [...xs].sort((a, b) => a - b);
  return `${s(o[0]!)} / ${s(o[Math.floor((o.length - 1) / 2)]!)} / ${s(o.at(-1)!)}`;
};
const lines = [
  '# Time to the first batch on a slow link (bench/first-step.ts)',
  '',
  `Node ${process.version}, ${os.cpus().length} cores, load average at the end ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; ${new Date().toISOString()}.`,
  `Fashion-MNIST mini (32 records of 256 images, group 6: about 157 kB a record) behind scripts/throttle-proxy.mjs (the rate, ${delayMs} ms before`,
  'each request); batch 32, shuffle buffer 512, flips, echoing examples, 4 reads in flight, no prefix cache; a stand-in trainer',
  `waits ${stepMs} ms per batch. Seconds from the first ask to the first batch, and to the batch that completes K records' images trained on`,
  `(K x 256 x echo / 32 batches), min / median / max over ${rounds} rounds;`,
  `the versions: ${trees.map((t) => `${t.name} (${t.path})`).join(', ')}.`,
  '',
  `| link | echo | version | s to first batch | ${records.map((k) => `K = ${k}`).join(' | ')} | records fetched at the first batch |`,
  `|---|---:|---|---:|${records.map(() => '---:|').join('')}---:|`,
];
for (const rate of rates) {
  for (const echo of echoes) {
    for (const v of versions) {
      const mine = runs.filter((r) => r.rate === rate && r.echo === echo && r.version === v.name);
      const recs = [...new Set(mine.map((r) => r.recordsAtFirst))].join(', ');
      const ks = records.map((_, i) => mmm(mine.map((r) => r.toRecords[i]!))).join(' | ');
      lines.push(`| ${rate} kB/s | ${echo} | ${v.name} | ${mmm(mine.map((r) => r.first))} | ${ks} | ${recs} |`);
    }
  }
}
// The order is a function of the seed alone, so one run per version and echo factor tells how the first batches mix.
lines.push(
  '',
  'How the first batches mix (the same in every round: the order depends on the seed alone): distinct records (of 256 images)',
  'and classes (of 10) in a batch of 32, averaged over batches 1-16 and 17-32.',
  '',
  '| echo | version | records per batch, 1-16 | 17-32 | classes per batch, 1-16 | 17-32 |',
  '|---:|---|---:|---:|---:|---:|',
);
for (const echo of echoes) {
  for (const v of versions) {
    const [a, b] = runs.find((r) => r.echo === echo && r.version === v.name)!.mixing;
    lines.push(`| ${echo} | ${v.name} | ${a!.records.toFixed(2)} | ${b!.records.toFixed(2)} | ${a!.classes.toFixed(2)} | ${b!.classes.toFixed(2)} |`);
  }
}
writeFileSync(values.out, `${lines.join('\n')}\n`);
console.log(lines.join('\n'));
