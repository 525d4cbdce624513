// How long a resumed run waits for its first batch (exact resume, src/pipeline/tape.ts):
// starting from the tape's latest stream snapshot against working out every
// batch from the start (a tape without snapshots, as saved before they existed).
// In Node, without training: the bundled Fashion-MNIST subset (train split, 28x28
// gray) over a loopback HTTP server (bench/support/link-server.ts), batches of 32,
// shuffle buffer 1,024, augmentation on, example echoing x4 (so the runs being
// resumed, which do decode everything, stay short), no prefix cache. Per length N:
// one run hands out N batches and its tape is taken; then the two resumes take
// turns within each round (which goes first alternates), each timed from open()
// to its first batch in hand, and checked to be the batch the run handed out next.
// Writes bench/results/resume.md.
// Usage: npx tsx bench/resume.ts [--rounds N (default 5)] [--batches "500,2000,8000,32000"]
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadTurboJpegNode } from '../src/jpeg/turbo-node.js';
import type { Batch, PipelineOptions } from '../src/pipeline/api.js';
import { ImagePipeline } from '../src/pipeline/image-pipeline.js';
import { pcrRecords } from '../src/pipeline/pcr-records.js';
import type { TapeState } from '../src/pipeline/tape.js';
import { startLinkServer } from './support/link-server.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results', 'resume.md');
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, batches: { type: 'string', default: '500,2000,8000,32000' } } });
const rounds = Number(values.rounds);
const lengths = values.batches.split(',').map(Number);
if (!(Number.isInteger(rounds) && rounds > 0 && lengths.every((n) => Number.isInteger(n) && n > 0))) {
  throw new Error(`--rounds must be a positive integer and --batches whole numbers > 0; got ${values.rounds}, ${values.batches}`);
}

const server = await startLinkServer(join(ROOT, 'public', 'datasets', 'fashion-mnist-mini'), { latencyMs: 0, bytesPerSecond: 0 });
const decoder = await loadTurboJpegNode();
const options: PipelineOptions = {
  manifestUrl: `${server.url}manifest.json`,
  split: 'train',
  batchSize: 32,
  fidelity: 6,
  echoFactor: 4,
  echoMode: 'examples',
  seed: 11,
  shuffleBuffer: 1024,
  epochs: Infinity,
  augment: true,
  prefetch: 4,
};

const ids = (b: Batch) => Array.from(b.ids).join(',');
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! };
};
const fmt = (x: { min: number; median: number; max: number }, digits = 0) =>
  `${x.min.toFixed(digits)} / ${x.median.toFixed(digits)} / ${x.max.toFixed(digits)}`;

/** The run to resume: N batches handed out, then its tape and the next batch's ids. */
async function run(n: number): Promise<{ tape: TapeState; next: string; ms: number }> {
  const p = new ImagePipeline(pcrRecords, decoder, () => undefined);
  const start = performance.now();
  await p.open(options);
  for (let i = 0; i < n; i++) await p.next();
  const tape = p.tapeState();
  const next = ids((await p.next())!);
  p.close();
  return { tape, next, ms: performance.now() - start };
}

/** A resume at batch n: ms from open() to the first batch, and the batches it worked out. */
async function resume(tape: TapeState, n: number, expected: string): Promise<{ ms: number; workedOut: number }> {
  const p = new ImagePipeline(pcrRecords, decoder, () => undefined);
  const start = performance.now();
  await p.open({ ...options, resume: { tape, batches: n } });
  const first = (await p.next())!;
  const ms = performance.now() - start;
  if (first.index !== n || ids(first) !== expected) throw new Error(`resume at ${n} handed out a different batch than the run did`);
  const workedOut = p.stats.batchesWorkedOut;
  p.close();
  return { ms, workedOut };
}

const lines: string[] = [];
for (const n of lengths) {
  const taken = await run(n);
  const withSnapshots = taken.tape;
  const without = { ...taken.tape, snapshots: undefined };
  const times = { snapshot: [] as number[], start: [] as number[], ratio: [] as number[] };
  let worked = { snapshot: 0, start: 0 };
  for (let round = 0; round <= rounds; round++) {
    const order = round % 2 ? (['start', 'snapshot'] as const) : (['snapshot', 'start'] as const);
    const r: Record<string, { ms: number; workedOut: number }> = {};
    for (const v of order) r[v] = await resume(v === 'snapshot' ? withSnapshots : without, n, taken.next);
    worked = { snapshot: r.snapshot!.workedOut, start: r.start!.workedOut };
    if (round === 0) continue; // warm-up
    times.snapshot.push(r.snapshot!.ms);
    times.start.push(r.start!.ms);
    times.ratio.push(r.start!.ms / r.snapshot!.ms);
  }
  const bytes = JSON.stringify(withSnapshots.snapshots ?? []).length;
  const line =
    `| ${n.toLocaleString('en-US')} | ${(taken.ms / 1000).toFixed(1)} | ${worked.snapshot} | ${fmt(stats(times.snapshot))} | ` +
    `${worked.start.toLocaleString('en-US')} | ${fmt(stats(times.start))} | ${fmt(stats(times.ratio), 1)} | ${(bytes / 1024).toFixed(1)} |`;
  console.log(line);
  lines.push(line);
}
await server.close();

const report = `# Resuming a run: from the latest stream snapshot vs working out every batch

\`npx tsx bench/resume.ts --rounds ${rounds} --batches "${values.batches}"\`, ${new Date().toISOString().slice(0, 10)}. Node ${process.version},
no training: \`ImagePipeline\` over the bundled Fashion-MNIST subset (train split) from a loopback HTTP server, batches of 32, shuffle buffer
1,024, flips, example echoing x4, scan group 6, no prefix cache, a snapshot every 64 batches (the default). Per length: one run hands out N
batches and its tape is taken; the two resumes take turns in each of ${rounds} rounds after a warm-up round. *ms to first batch*: from \`open()\`
to the first batch in hand (checked to be the batch the run handed out next), min / median / max. *worked out*: batches the resume settled on
without making them (\`PipelineStats.batchesWorkedOut\`). *snapshots*: the tape's snapshots as JSON (the 3 it keeps).

| batches handed out | run being resumed, s | from snapshot: worked out | ms to first batch | from the start: worked out | ms to first batch | \
start / snapshot | snapshots, KiB |
|---|---|---|---|---|---|---|---|
${lines.join('\n')}
`;
writeFileSync(RESULTS, report);
console.log(`\nwrote ${RESULTS}`);
