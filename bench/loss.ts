// The lab's loss against tfjs's, per training step of the image models: how
// much of a step tfjs's softmax cross-entropy takes and what our kernels leave.
// (The tabular models' per-epoch figures with either loss are in
// bench/toc-kernels.ts, "TOC runs, loss and output layer by tfjs".) Writes bench/results/loss.md.
// Usage: npx tsx bench/loss.ts [--rounds N] [--steps N]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { LossResults } from './gpu/loss.js';
import { openLabBrowser } from './support/lab-browser.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results', 'loss.md');
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, steps: { type: 'string', default: '20' } } });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const spread = (xs: number[], digits = 2) => `${Math.min(...xs).toFixed(digits)} / ${median(xs).toFixed(digits)} / ${Math.max(...xs).toFixed(digits)}`;

const t0 = performance.now();
const loadAtStart = os.loadavg();
const lab = await openLabBrowser(ROOT);
let results: LossResults;
let browser = '';
try {
  browser = lab.page.context().browser()?.version() ?? '';
  lab.page.on('console', (m) => m.type() === 'info' && console.error(`page: ${m.text()}`));
  await lab.page.goto(`${lab.origin}/bench/gpu/loss.html?rounds=${values.rounds}&steps=${values.steps}`);
  await lab.page.waitForFunction(() => window.__lossBench !== undefined, undefined, { timeout: 20 * 60_000, polling: 1000 });
  const r = await lab.page.evaluate(() => window.__lossBench!);
  if ('error' in r) throw new Error(r.error);
  results = r;
} finally {
  await lab.close();
}

const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
const { config } = results;
const lines: string[] = [
  "# The lab's loss against tfjs's, per training step",
  '',
  `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC by \`npx tsx bench/loss.ts --rounds ${values.rounds} --steps ${values.steps}\` ` +
    `in ${((performance.now() - t0) / 1000).toFixed(0)} s.`,
  `Device: ${results.adapter} (WebGPU), Chromium ${browser}, ${os.cpus().length} CPU cores (${os.cpus()[0]?.model ?? '?'}); load average ` +
    `(1 / 5 / 15 min) ${load(loadAtStart)} at the start, ${load(os.loadavg())} at the end.`,
  '',
  `What is timed: one Adam step (lr 0.001) of each image model of the lab on a batch of ${config.batch} random ${config.shape.join('x')} inputs ` +
    `with ${config.classes} classes, the loss being **lab**: the lab's softmaxLoss (on WebGPU, softmaxCrossEntropy: our kernels, ` +
    '`shaders/softmax_ce.wgsl`) or **tfjs**: `tf.losses.softmaxCrossEntropy` against `tf.oneHot(labels)` (the lab before session 13). ' +
    `A block of ${config.steps} steps is timed from an idle queue to the last step's loss read back; the two take turns within each round ` +
    `(alternating which goes first), after one untimed block each. ms per step are min / median / max over ${config.rounds} rounds; the ratio ` +
    'is taken within each round.',
  '',
  '| model | lab ms / step | tfjs ms / step | lab / tfjs per round |',
  '| --- | ---: | ---: | ---: |',
];
for (const model of [...new Set(results.runs.map((r) => r.model))]) {
  const runs = results.runs.filter((r) => r.model === model);
  lines.push(
    `| ${model} | ${spread(
      runs.map((r) => r.msPerStep.lab),
      1,
    )} | ${spread(
      runs.map((r) => r.msPerStep.tfjs),
      1,
    )} | ${spread(runs.map((r) => r.msPerStep.lab / r.msPerStep.tfjs))} |`,
  );
}
lines.push(
  '',
  "## Where one step goes (tf.profile, tfjs's kernels by GPU time; ours are not listed)",
  '',
  'One step of each after the rounds; the ten costliest tfjs kernels by name (calls, summed GPU ms, input shapes of the costliest call).',
);
for (const p of results.profiles) {
  lines.push(
    '',
    `**${p.model}, ${p.impl} loss**: step ${p.profile.wallMs.toFixed(1)} ms wall, tfjs kernels ${p.profile.tfjsKernelMs.toFixed(1)} ms GPU.`,
    '',
    '| kernel | calls | GPU ms | shapes |',
    '| --- | ---: | ---: | --- |',
    ...p.profile.kernels.slice(0, 10).map((k) => `| ${k.name} | ${k.calls} | ${k.ms.toFixed(2)} | ${k.shapes} |`),
  );
}
lines.push('', 'Every round:', '', '| model | round | lab ms / step | tfjs ms / step |', '| --- | ---: | ---: | ---: |');
for (const r of results.runs) lines.push(`| ${r.model} | ${r.round} | ${r.msPerStep.lab.toFixed(1)} | ${r.msPerStep.tfjs.toFixed(1)} |`);
const text = `${lines.join('\n')}\n`;
writeFileSync(RESULTS, text);
console.log(text);
