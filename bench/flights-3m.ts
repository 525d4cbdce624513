// One epoch of logistic regression over all 3 million flights, in the lab, in
// Chromium on WebGPU: the TOC batches stream from the server and stay compressed
// on the GPU; the dense matrix of the same rows would not fit in the browser.
// Needs `npm run data:toc:flights` first. Run: npx tsx bench/flights-3m.ts [--rows N]
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { LabProgress } from '../src/app/test-api.js';
import type { PipelineStats } from '../src/pipeline/api.js';
import { openLabBrowser } from './support/lab-browser.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DATASET = join(ROOT, 'public/data/flights-3m-toc/manifest.json');
const { values } = parseArgs({ options: { rows: { type: 'string' } } });
/** One epoch takes minutes on SwiftShader; give up well after that. */
const LIMIT_MS = 25 * 60_000;

if (!existsSync(DATASET)) {
  console.error(`${DATASET} is missing: run npm run data:toc:flights first`);
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(DATASET, 'utf8')) as { rows: { train: number; test?: number }; columns: number };
const target = values.rows ? Number(values.rows) : manifest.rows.train;

const lab = await openLabBrowser(ROOT);
const { page } = lab;
try {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  // One evaluation on the test split, at the step that ends the epoch (250-row batches).
  const stepsPerEpoch = Math.ceil(target / 250);
  await page.goto(`${lab.origin}/?dataset=flights-3m&model=logreg&evalEvery=${stepsPerEpoch}&autostart=1`);
  const started = Date.now();
  let firstStepAt = 0;
  let peakHeap = 0;
  let p: LabProgress;
  let counters: PipelineStats | undefined;
  let reported = 0;
  for (;;) {
    p = (await page.evaluate(() => window.__lab!.progress())) as LabProgress;
    // The pipeline's own counters: rows read from records and rows put into batches (not steps x batch size).
    counters = await page.evaluate(() => window.__lab!.snapshot().pipeline);
    const metrics = (await cdp.send('Performance.getMetrics')).metrics;
    peakHeap = Math.max(peakHeap, metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0);
    if (p.state === 'failed') throw new Error('training failed (see the page log)');
    if (p.steps > 0 && !firstStepAt) firstStepAt = Date.now();
    const read = counters?.examplesRead ?? 0;
    if (read >= target && (p.lastEval?.step ?? 0) >= stepsPerEpoch) break;
    if (Date.now() - started > LIMIT_MS) throw new Error(`only ${read} rows after ${LIMIT_MS / 60_000} minutes`);
    if (read >= reported + 250_000) {
      reported = read;
      const rate = read / Math.max(1e-3, p.last!.time);
      process.stderr.write(`${read.toLocaleString('en-US')} rows read, ${rate.toFixed(0)} rows/s of training time, loss ${p.last!.loss.toFixed(4)}\n`);
    }
    await page.waitForTimeout(2000);
  }
  const wallMs = Date.now() - started;
  const trainingWallMs = Date.now() - firstStepAt;
  await page.evaluate(() => window.__lab!.stop());
  const final = (await page.evaluate(() => window.__lab!.progress())) as LabProgress;
  const last = p.last!;
  const rows = counters!.examplesRead;
  const denseF32 = rows * manifest.columns * 4;
  const lines = [
    '# All 3 million flights in the browser (TOC, logistic regression)',
    '',
    `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} (${cpus().length} cores), Chromium headless, WebGPU adapter ${p.adapter}.`,
    '',
    '| figure | value |',
    '|---|---:|',
    // Past the split's rows once the run goes into its next epoch (the readers read a few records ahead of training).
    `| training rows read from records (pipeline counter; the split has ${manifest.rows.train.toLocaleString('en-US')}) | ${rows.toLocaleString('en-US')} |`,
    `| rows put into batches (pipeline counter; no echoing) | ${counters!.examplesEmitted.toLocaleString('en-US')} |`,
    `| SGD steps | ${p.steps.toLocaleString('en-US')} |`,
    `| columns (one-hot origin, destination, hour, weekday, distance bucket) | ${manifest.columns} |`,
    `| wall time, page load to the end (training from the first step) | ${(wallMs / 1000).toFixed(0)} s (${(trainingWallMs / 1000).toFixed(0)} s) |`,
    `| active training time (the trainer's clock: steps and waits for data, no pauses) | ${last.time.toFixed(0)} s |`,
    `| rows trained per second of active training time (rows put into batches) | ${(counters!.examplesEmitted / last.time).toFixed(0)} |`,
    `| bytes fetched (Range requests of TOC records) | ${(last.bytesFetched / 2 ** 20).toFixed(1)} MiB |`,
    `| peak JS heap of the page's main thread (workers not counted), sampled every 2 s | ${(peakHeap / 2 ** 20).toFixed(0)} MiB |`,
    `| the same rows as a dense float32 matrix | ${(denseF32 / 2 ** 30).toFixed(2)} GiB |`,
    `| training loss, first and last step | ${p.first!.loss.toFixed(4)} → ${last.loss.toFixed(4)} |`,
    `| test accuracy at the end (${final.lastEval?.examples.toLocaleString('en-US') ?? 0} rows) | ` +
      `${final.lastEval ? `${(100 * final.lastEval.accuracy).toFixed(1)}%` : 'n/a'} |`,
    `| warnings | ${final.warnings} |`,
    '',
    'The dense matrix of these rows would be larger than what a tab may allocate and than one WebGPU buffer may hold; the TOC records (a few bytes per row) ' +
      'stream through the workers and each 250-row batch stays compressed on the GPU.',
  ];
  console.log(lines.join('\n'));
  writeFileSync(join(ROOT, 'bench/results/flights-3m.md'), `${lines.join('\n')}\n`);
} finally {
  await lab.close();
}
