// Does the training loop stall on GPU readbacks? Trainer steps/s with each
// step's loss read back before the next step (depth 0, how the loop worked
// before) and read back asynchronously with two in flight (depth 2, the lab's
// loop), for the tiny CNN and the MLP on the bundled Fashion-MNIST subset, with
// the real pipeline workers, in one browser. Variants alternate within each
// round; ratios are per round. Writes bench/results/trainer-readback.md.
// Usage: npx tsx bench/trainer-readback.ts [--rounds N] [--steps N] [--echo E]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { ReadbackResults, ReadbackRun } from './gpu/readback.js';
import { openLabBrowser } from './support/lab-browser.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results', 'trainer-readback.md');
const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, steps: { type: 'string', default: '60' }, echo: { type: 'string', default: '4' } },
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const spread = (xs: number[], digits = 2) => `${Math.min(...xs).toFixed(digits)} / ${median(xs).toFixed(digits)} / ${Math.max(...xs).toFixed(digits)}`;

const t0 = performance.now();
const lab = await openLabBrowser(ROOT);
let results: ReadbackResults;
let browser = '';
try {
  browser = lab.page.context().browser()?.version() ?? '';
  lab.page.on('console', (m) => m.type() === 'warning' && console.error(`page: ${m.text()}`));
  await lab.page.goto(`${lab.origin}/bench/gpu/readback.html?rounds=${values.rounds}&steps=${values.steps}&echo=${values.echo}`);
  await lab.page.waitForFunction(() => window.__readbackBench !== undefined, undefined, { timeout: 20 * 60_000, polling: 1000 });
  const r = await lab.page.evaluate(() => window.__readbackBench!);
  if ('error' in r) throw new Error(r.error);
  results = r;
} finally {
  await lab.close();
}

const lines: string[] = [
  '# Trainer: loss readback every step vs asynchronous',
  '',
  `Measured ${new Date().toISOString().slice(0, 10)} by \`npx tsx bench/trainer-readback.ts --rounds ${values.rounds} --steps ${values.steps} --echo ` +
    `${values.echo}\` in ${((performance.now() - t0) / 1000).toFixed(0)} s.`,
  `Device: ${results.adapter} (WebGPU), Chromium ${browser}, ${os.cpus().length} CPU cores (${os.cpus()[0]?.model ?? '?'}).`,
  '',
  `What is timed: training steps per second of the lab's own LabSession and Trainer on the bundled Fashion-MNIST subset (28x28x1, batch ` +
    `${results.config.batch}), wall time from the report of step ${results.config.warmup} to the report of step ` +
    `${results.config.warmup + results.config.steps}, real pipeline workers (fetch, wasm decode). Echo ${results.config.echo} so the data pipeline is not ` +
    `the bottleneck (the "waiting" column is the trainer's mean share of step time spent waiting for a batch). depth 0 reads each step's loss back ` +
    `before the next step (the loop before this change); depth 2 reads losses back asynchronously, at most two in flight. The two take turns within ` +
    `each round, alternating which goes first.`,
  '',
  '| model | depth 0 steps/s (min / median / max) | depth 2 steps/s (min / median / max) | ratio depth 2 / depth 0 per round (min / median / max) | ' +
    'waiting, depth 0 / depth 2 |',
  '| --- | ---: | ---: | ---: | ---: |',
];
for (const model of [...new Set(results.runs.map((r) => r.model))]) {
  const of = (depth: number) => results.runs.filter((r) => r.model === model && r.depth === depth);
  const [sync, async_] = [of(0), of(2)];
  const ratios = sync.map((s) => async_.find((a) => a.round === s.round)!.stepsPerSecond / s.stepsPerSecond);
  const wait = (rs: ReadbackRun[]) => `${(100 * median(rs.map((r) => r.wait))).toFixed(0)}%`;
  lines.push(
    `| ${model} | ${spread(
      sync.map((r) => r.stepsPerSecond),
      1,
    )} | ${spread(
      async_.map((r) => r.stepsPerSecond),
      1,
    )} | ${spread(ratios)} | ${wait(sync)} / ${wait(async_)} |`,
  );
}
lines.push('', 'Every run:', '', '| model | round | depth | steps/s | waiting | loss at the last step |', '| --- | ---: | ---: | ---: | ---: | ---: |');
for (const r of results.runs)
  lines.push(`| ${r.model} | ${r.round} | ${r.depth} | ${r.stepsPerSecond.toFixed(1)} | ${(100 * r.wait).toFixed(0)}% | ${r.finalLoss.toFixed(3)} |`);
const text = `${lines.join('\n')}\n`;
writeFileSync(RESULTS, text);
console.log(text);
