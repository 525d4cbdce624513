// How long the lab's pipeline worker takes to hand over a batch it has already
// made: a page keeps N asks for a batch (and the counters) in flight, and works
// STEP ms on its own thread after each batch (a stand-in for the trainer: no GPU,
// so SwiftShader does not take the cores and the wait left is the worker's and
// the messages'). N = 1 is how the trainer asked before the stream asked ahead
// (src/pipeline/client.ts, ASKS_AHEAD). The real worker (src/pipeline/worker.ts,
// comlink), real bundled data over the dev server. With --against DIR, that
// tree's worker takes turns with this one's, round by round, alternating which
// goes first. The probe goes to the page as text, so it runs against any tree
// whose worker opens and answers `next()` as this one does (N > 1 needs a worker
// that answers asks that wait together: 30eff3f and before answer only the last).
// With --readers 2 (or 1,2), that many workers read disjoint partitions and the
// page takes their batches in turn through the lab's own takeInTurn, N asks ahead
// each, as a run with that many readers does (a tree before takeInTurn asked ahead
// cannot run it).
// Usage: npx tsx bench/handover.ts [--against DIR] [--rounds N] [--steps N] [--step-ms 1,3] [--ahead 1,4] [--readers 1]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openLabBrowser } from './support/lab-browser.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    against: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    steps: { type: 'string', default: '1000' },
    'step-ms': { type: 'string', default: '1,3' },
    ahead: { type: 'string', default: '1,4' },
    readers: { type: 'string', default: '1' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results', 'handover.md') },
  },
});
const rounds = Number(values.rounds);
const steps = Number(values.steps);
const stepMs = values['step-ms']!.split(',').map(Number);
const aheads = values.ahead!.split(',').map(Number);
const readerCounts = values.readers!.split(',').map(Number);
const whole = (xs: number[]) => xs.every((a) => Number.isInteger(a) && a >= 1);
if (!(rounds >= 1 && steps >= 100 && stepMs.every((s) => s >= 0) && whole(aheads) && whole(readerCounts))) {
  throw new Error('--rounds >= 1, --steps >= 100, --step-ms: numbers >= 0, --ahead and --readers: whole numbers >= 1');
}

const DATA = [
  { name: 'flights (TOC, 40 batches of 250 rows a record)', manifest: '/datasets/flights-250k-toc/manifest.json', batch: 250 },
  { name: 'Fashion-MNIST mini (PCR, 256 images a record, group 6)', manifest: '/datasets/fashion-mnist-mini/manifest.json', batch: 32 },
];

interface Probe {
  stepsPerSecond: number;
  /** Share of wall time the stand-in trainer waited for a batch; the part before the batch was made apart. */
  waitShare: number;
  dataShare: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * The page's side: the lab's own workers, opened as the lab opens them (echo 1, shuffled, 4 reads in flight, no cache). One
 * reader: N asks for the batch and the counters in flight, the page's own queue (any tree's worker). Several: reader r reads
 * partition r of `readers`, and the trainer's one ask goes through the lab's takeInTurn, which keeps N asks ahead per reader.
 */
const probe = (manifest: string, batch: number, step: number, ahead: number, readers: number) => `(async () => {
  const Comlink = await import('/node_modules/comlink/dist/esm/comlink.mjs');
  const workers = Array.from({ length: ${readers} }, () => new Worker('/src/pipeline/worker.ts', { type: 'module' }));
  const apis = workers.map((w) => Comlink.wrap(w));
  // A worker that cannot load never answers: fail, do not hang.
  let timer;
  const failed = new Promise((_, reject) => {
    for (const w of workers) w.onerror = (e) => reject(new Error('a pipeline worker failed: ' + (e.message || 'it did not load')));
    const ms = 120000 + ${steps} * (${step} + 10);
    timer = setTimeout(() => reject(new Error('no answer from the pipeline workers in ' + ms / 1000 + ' s')), ms);
  });
  const measured = (async () => {
    await Promise.all(apis.map((api, rank) => api.open({ manifestUrl: new URL('${manifest}', location.href).href, split: 'train',
      batchSize: ${batch}, fidelity: 6, echoFactor: 1, seed: 1, shuffleBuffer: 512, echoMode: 'examples', requestsInFlight: 4, epochs: Infinity,
      augment: true, prefetch: 4, cacheLimitBytes: 0, tocColumns: 'classes', ...(${readers} > 1 ? { partition: { count: ${readers}, rank } } : {}) },
      Comlink.proxy(() => {}))));
    let ask;
    let asked;
    if (${readers} === 1) {
      // The batch and the counters, as the trainer asked them each step before the counters rode on the batch, ${ahead} asks in flight.
      ask = () => Promise.all([apis[0].next(), apis[0].stats()]);
      asked = Array.from({ length: ${ahead} }, ask);
    } else {
      const { takeInTurn } = await import('/src/pipeline/client.ts');
      const { Rotation } = await import('/src/pipeline/rotation.ts');
      const stream = takeInTurn(apis, new Rotation(${readers}), () => {}, ${ahead});
      // As the trainer asks: the next batch while this one trains, its counters from the batch.
      ask = () => stream.next().then(async (b) => [b, await stream.stats()]);
      asked = [ask()];
    }
    for (let i = 0; i < 50; i++) { await asked.shift(); asked.push(ask()); }
    const waits = [];
    let forData = 0;
    const t0 = performance.now();
    for (let i = 0; i < ${steps}; i++) {
      const since = performance.now();
      const [b] = await asked.shift();
      const got = performance.now();
      waits.push(got - since);
      forData += Math.min(got - since, Math.max(0, b.readyAt - performance.timeOrigin - since));
      asked.push(ask());
      while (performance.now() < got + ${step});
    }
    const secs = (performance.now() - t0) / 1000;
    waits.sort((x, y) => x - y);
    const q = (p) => waits[Math.floor(p * (waits.length - 1))];
    const total = waits.reduce((s, x) => s + x, 0);
    return { stepsPerSecond: ${steps} / secs, waitShare: total / 1000 / secs, dataShare: forData / 1000 / secs, p50: q(0.5), p99: q(0.99), max: q(1) };
  })();
  try {
    return await Promise.race([failed, measured]);
  } finally {
    clearTimeout(timer);
    for (const w of workers) w.terminate();
  }
})()`;

/** A tree's commit, marked when its code (src, shaders) differs from it. */
const commitOf = (dir: string) => {
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();
  return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src', 'shaders') ? ' with changes to its code' : ''}`;
};
const trees: [string, string][] = [[`this tree (${commitOf(ROOT)})`, ROOT]];
if (values.against) trees.push([`against (${relative(ROOT, resolve(values.against)) || '.'}, ${commitOf(values.against)})`, resolve(values.against)]);
// The other tree gets a dependency cache of its own: a worktree that links to this node_modules would share Vite's.
const labs = await Promise.all(trees.map(([, root], i) => openLabBrowser(root, i === 0 ? undefined : join(root, 'node_modules', '.vite-against'))));
// Every tree with every number of asks in flight; the first is the one the others are compared with (the other tree's, if any).
const variants = trees.flatMap(([tree], lab) =>
  readerCounts.flatMap((readers) =>
    aheads.map((ahead) => ({
      lab,
      ahead,
      readers,
      name: `${tree}, ${readers === 1 ? '' : `${readers} readers in turn, `}${ahead} ask${ahead > 1 ? 's' : ''} ahead${readers === 1 ? '' : ' each'}`,
    })),
  ),
);
if (trees.length === 2) variants.unshift(...variants.splice(aheads.length * readerCounts.length));
const runs: { data: string; step: number; variant: string; round: number; r: Probe }[] = [];
const t0 = performance.now();
try {
  for (let round = 0; round < rounds; round++) {
    for (const data of DATA) {
      for (const step of stepMs) {
        const order = round % 2 ? [...variants].reverse() : variants;
        for (const v of order) {
          const { page, origin } = labs[v.lab]!;
          await page.goto(`${origin}${data.manifest}`); // a page of the origin that runs nothing of its own
          const r = (await page.evaluate(probe(data.manifest, data.batch, step, v.ahead, v.readers))) as Probe;
          runs.push({ data: data.name, step, variant: v.name, round, r });
          console.log(
            `round ${round} ${data.name}, step ${step} ms, ${v.name}: ${r.stepsPerSecond.toFixed(0)} steps/s, ` +
              `waiting ${(100 * r.waitShare).toFixed(0)}% (for data ${(100 * r.dataShare).toFixed(0)}%), ` +
              `wait p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(1)} max ${r.max.toFixed(1)} ms`,
          );
        }
      }
    }
  }
} finally {
  await Promise.all(labs.map((l) => l.close()));
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const spread = (xs: number[], digits: number) => `${Math.min(...xs).toFixed(digits)} / ${median(xs).toFixed(digits)} / ${Math.max(...xs).toFixed(digits)}`;
const lines = [
  '# Hand-over: how long a batch already made takes to reach the trainer',
  '',
  `Measured ${new Date().toISOString().slice(0, 16)}Z by \`npx tsx bench/handover.ts${values.against ? ` --against ${values.against}` : ''} ` +
    `--rounds ${rounds} --steps ${steps} --step-ms ${stepMs.join(',')} --ahead ${aheads.join(',')} --readers ${readerCounts.join(',')}\` ` +
    `in ${((performance.now() - t0) / 1000).toFixed(0)} s. Chromium ` +
    `${labs[0]!.page.context().browser()?.version() ?? '?'} headless, ${os.cpus().length} CPU cores (${os.cpus()[0]?.model ?? '?'}), load average ` +
    `${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')} at the end.`,
  '',
  "**What is timed.** The lab's pipeline worker (src/pipeline/worker.ts through comlink, real bundled data from the Vite dev server) opened as the " +
    'lab opens it: one reader, echo 1, shuffle buffer 512, 4 reads in flight, no prefix cache. A stand-in trainer on the page keeps N asks for a batch ' +
    'and the counters in flight (N asks ahead; 1 is how the trainer asked before; the lab now keeps ASKS_AHEAD asks in flight per reader, ' +
    `the counters riding on each batch: src/pipeline/client.ts), and works the step time on the page's thread after each batch ` +
    `(a busy loop, no GPU), ${steps} steps after 50 warm-up steps. **waiting** = the share of wall time it waited for a batch; ` +
    '**for data** = the part of those waits before the worker had the batch made (Batch.readyAt): the rest is the hand-over (the ask and ' +
    'the reply crossing between the threads, each taken when its thread is free). Wait p50 / p99 / max are per step, in ms. No GPU work, so ' +
    "these are the worker's and the messages' own figures: in the lab on SwiftShader the GPU emulation takes the same two cores." +
    (readerCounts.some((r) => r > 1)
      ? ' **R readers in turn**: R workers read disjoint partitions and the stand-in trainer takes their batches through the ' +
        "lab's takeInTurn (src/pipeline/client.ts), one ask of its own while a step runs, takeInTurn keeping N asks ahead per reader, " +
        'the counters from each batch, as a run with R readers does (the lab keeps asksAhead(R) = max(2, ceil(4 / R)) each).'
      : ''),
  '',
];
for (const data of DATA) {
  for (const step of stepMs) {
    const of = (variant: string) => runs.filter((x) => x.data === data.name && x.step === step && x.variant === variant).map((x) => x.r);
    lines.push(`## ${data.name}, batch ${data.batch}, step ${step} ms`, '');
    lines.push(
      '| worker | steps/s (min / median / max) | waiting, median | for data, median | wait p50 / p99 / max, ms (medians) |',
      '| --- | ---: | ---: | ---: | ---: |',
    );
    for (const { name } of variants) {
      const rs = of(name);
      lines.push(
        `| ${name} | ${spread(
          rs.map((r) => r.stepsPerSecond),
          0,
        )} | ${(100 * median(rs.map((r) => r.waitShare))).toFixed(0)}% | ${(100 * median(rs.map((r) => r.dataShare))).toFixed(0)}% | ` +
          `${median(rs.map((r) => r.p50)).toFixed(2)} / ${median(rs.map((r) => r.p99)).toFixed(1)} / ${median(rs.map((r) => r.max)).toFixed(1)} |`,
      );
    }
    const base = of(variants[0]!.name);
    if (variants.length > 1) lines.push('', `Steps/s per round over ${variants[0]!.name} (min / median / max):`, '');
    for (const { name } of variants.slice(1)) {
      const ratios = of(name).map((r, i) => r.stepsPerSecond / base[i]!.stepsPerSecond);
      lines.push(`- ${name}: ${spread(ratios, 2)}`);
    }
    lines.push('');
  }
}
writeFileSync(values.out!, lines.join('\n'));
console.log(lines.join('\n'));
