// The lab as a person uses it, in headless Chromium on WebGPU (SwiftShader when
// there is no GPU): train, drag the fidelity slider mid-run, change echoing,
// pause, resume, stop. Numbers are read through window.__lab.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { formatBytes } from '../../src/app/format.js';
import type { LabSnapshot } from '../../src/app/test-api.js';
import { mean, snapshot, waitFor } from './helpers.js';

const trainFetches = (s: LabSnapshot) => s.fetches.filter((f) => f.record.startsWith('train-'));

test('trains on WebGPU, and the fidelity slider cuts the bytes fetched per image mid-run', async ({ page }, testInfo) => {
  // Range headers of record requests as the browser sent them (from the pipeline worker).
  const ranges: { url: string; range: string }[] = [];
  page.context().on('request', (r) => {
    if (r.url().includes('/train-') && r.url().endsWith('.pcr')) ranges.push({ url: r.url(), range: r.headers().range ?? '' });
  });

  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=20&autostart=1');
  await expect(page.locator('#backend')).toContainText('webgpu');
  const first = await waitFor(page, '20 training steps', (s) => s.steps.length >= 20);
  expect(first.backend).toBe('webgpu');
  expect(['running', 'evaluating']).toContain(first.state);

  const losses = first.steps.map((s) => s.loss);
  expect(losses.every(Number.isFinite)).toBe(true);
  expect(mean(losses.slice(-5))).toBeLessThan(mean(losses.slice(0, 5)));

  const before = trainFetches(first);
  expect(before.length).toBeGreaterThan(0);
  expect(before.every((f) => f.level === 6)).toBe(true);
  const bytesPerImageBefore = mean(before.map((f) => f.received / f.examples));

  // Drag the slider's thumb from the right end to the left end: scan group 1.
  const slider = page.locator('#fidelity');
  const box = (await slider.boundingBox())!;
  await page.mouse.move(box.x + box.width - 4, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
  await page.mouse.move(box.x + 2, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await expect(slider).toHaveValue('1');
  await expect(page.locator('#fidelity-label')).toContainText('scan group 1 of 6');
  const stepAtDrag = (await snapshot(page)).steps.length;

  const after = await waitFor(page, 'a record fetched at scan group 1', (s) => trainFetches(s).some((f) => f.level === 1));
  const low = trainFetches(after).filter((f) => f.level === 1);
  const bytesPerImageAfter = mean(low.map((f) => f.received / f.examples));
  expect(bytesPerImageAfter).toBeLessThan(0.5 * bytesPerImageBefore);

  // The Range requests on the wire shrank the same way.
  const ends = ranges.map((r) => Number(/bytes=0-(\d+)/.exec(r.range)?.[1] ?? NaN) + 1);
  expect(ends.every(Number.isFinite)).toBe(true);
  expect(Math.min(...ends)).toBeLessThan(0.5 * Math.max(...ends));

  // Training goes on, on the low-fidelity data.
  const later = await waitFor(page, 'training to continue after the change', (s) => s.steps.length >= Math.max(stepAtDrag, after.steps.length) + 10);
  expect(['running', 'evaluating']).toContain(later.state);
  expect(later.steps.slice(-10).every((s) => Number.isFinite(s.loss))).toBe(true);
  await expect(page.locator('#samples-caption')).toContainText('scan group 1', { timeout: 60_000 });
  await waitFor(page, 'a test evaluation', (s) => s.evals.length > 0);

  const shot = testInfo.outputPath('lab.png');
  await page.screenshot({ path: shot });
  await page.screenshot({ path: 'test-results/lab.png' });
  await testInfo.attach('lab', { path: shot, contentType: 'image/png' });
  await page.evaluate(() => window.__lab!.stop());
});

test('before a run, the slider and the group table say what each scan group costs, from the manifest', async ({ page }) => {
  await page.goto('/');
  const manifest = (await (await page.request.get('/datasets/fashion-mnist-mini/manifest.json')).json()) as {
    splits: { train: { records: { images: number; groupEnds: number[] }[] } };
  };
  const records = manifest.splits.train.records;
  const perImage = (g: number) => Math.round(records.reduce((n, r) => n + r.groupEnds[g]!, 0) / records.reduce((n, r) => n + r.images, 0));
  const label = page.locator('#fidelity-label');
  await expect(label).toContainText(`scan group 6 of 6: ${perImage(6)} bytes/image, 100% of full`);
  await expect(page.locator('#fidelity-table tr[data-group]')).toHaveCount(6);
  await page.locator('#fidelity').fill('1');
  await expect(label).toContainText(`scan group 1 of 6: ${perImage(1)} bytes/image`);
  await expect(page.locator('#fidelity')).toHaveAttribute('aria-valuetext', `scan group 1 of 6, ${perImage(1)} bytes per image`);
  // A table: one lossless fidelity, and no scan-group table left over from the image set.
  await page.locator('#dataset').selectOption({ label: 'Bird strikes (TOC, bundled)' });
  await expect(label).toContainText('TOC is lossless: one fidelity');
  await expect(label).toContainText('bytes per row');
  await expect(page.locator('#fidelity-table tr')).toHaveCount(0);
});

test('echoing repeats examples, and pause, resume and stop work', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000&autostart=1');
  const start = await waitFor(page, 'the first steps', (s) => s.steps.length >= 3 && !!s.pipeline);

  await page.locator('#echo').fill('3');
  await page.locator('#echo').dispatchEvent('change');
  // Measured once the shuffle buffer has warmed up (while it grows it keeps one of every two copies, stages.ts, so fewer leave) and the
  // reads ahead have filled: 4 records in flight, the shuffle buffer's 2 and the queue's batches, about 7 records. From then on records are
  // read as the trainer takes batches. On a loaded machine the trainer was slow enough that the fifth record still came in that fill.
  const base = (await waitFor(page, 'the reads ahead filled', (s) => s.pipeline!.recordsFetched > start.pipeline!.recordsFetched + 10)).pipeline!;
  const end = (await waitFor(page, 'three more records', (s) => s.pipeline!.recordsFetched >= base.recordsFetched + 3)).pipeline!;
  const echoed = (end.examplesEmitted - base.examplesEmitted) / (end.examplesRead - base.examplesRead);
  // Three records' window: copies of records read just before it leave inside it (CI once saw 4.25), so the bounds are loose.
  expect(echoed).toBeGreaterThan(2);
  expect(echoed).toBeLessThan(4.5);

  await page.locator('#pause').click();
  await expect(page.locator('#state')).toHaveText('paused');
  await page.waitForTimeout(1000); // losses of steps taken before the pause may still arrive
  const paused = (await snapshot(page)).steps.length;
  await page.waitForTimeout(2000);
  expect((await snapshot(page)).steps.length).toBe(paused); // no step is taken while paused
  await page.locator('#pause').click();
  await waitFor(page, 'steps after resume', (s) => s.steps.length > paused + 3);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toContainText('stopped');
  await expect(page.locator('#start')).toBeEnabled();
  // Once stopped, the counters count every training record read, those read ahead of the last step too, as the fetch log does
  // (a fetch event on its way as the run stopped may be missing from the log, never from the counters).
  const final = await snapshot(page);
  const trainBytes = final.fetches.filter((f) => f.record.startsWith('train-')).reduce((n, f) => n + f.received, 0);
  expect(final.pipeline!.bytesFetched).toBeGreaterThanOrEqual(trainBytes);
  expect(final.pipeline!.bytesFetched).toBeGreaterThanOrEqual(final.steps.at(-1)!.bytesFetched);
  await expect(page.locator('#m-bytes')).toHaveText(formatBytes(final.pipeline!.bytesFetched));
});

test('without WebGPU the page says so and does not fall back to another backend', async ({ page }) => {
  // Simulated: this Chromium has WebGPU, so we hide navigator.gpu before the page loads.
  await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }));
  await page.goto('/');
  await expect(page.locator('#gpu-error')).toBeVisible();
  await expect(page.locator('#gpu-error')).toContainText('--enable-unsafe-webgpu');
  await expect(page.locator('#backend')).toContainText('WebGPU unavailable');
  await expect(page.locator('#start')).toBeDisabled();
  expect((await snapshot(page)).backend).toBe('none');
});

test('a damaged dataset: the log names each bad record and image, and training goes on', async ({ page }) => {
  await page.goto('/?manifest=__fixtures__/broken/manifest.json&model=tiny-cnn&batch=64&evalEvery=1000&autostart=1');
  const s = await waitFor(
    page,
    'a warning about each damaged record',
    (x) => ['00001', '00002', '00003'].every((r) => x.warnings.some((w) => w.includes(`train-${r}.pcr`))) && x.steps.length > 0,
  );
  const log = s.warnings.join('\n');
  expect(log).toMatch(/record train-00001\.pcr: .*(truncated at byte \d+|shorter than the manifest)/);
  expect(log).toMatch(/record train-00002\.pcr, image 5 \(chunk at byte \d+\): .*image left out/);
  // A missing record: a 404 here (the dev server runs with appType 'mpa'), an HTML page on single-page hosts.
  expect(log).toMatch(/record train-00003\.pcr: fetch failed: .*(HTTP 404|sent an HTML page).*record skipped/);
  // The run goes on with the good data: more steps, all finite, state running.
  const later = await waitFor(page, 'more steps', (x) => x.steps.length >= s.steps.length + 5);
  expect(later.state).toBe('running');
  expect(later.steps.every((x) => Number.isFinite(x.loss))).toBe(true);
  // Each problem is reported once, not again every epoch.
  expect(new Set(later.warnings).size).toBe(later.warnings.length);
  await expect(page.locator('#log li.warning').first()).toBeVisible();
  await page.screenshot({ path: 'test-results/lab-broken-dataset.png' });
  await page.evaluate(() => window.__lab!.stop());
});

test('a dataset server on another origin that hides Content-Range from the page: the log names the header it must expose', async ({ page }) => {
  // A second origin, answered here: CORS lets the page read the bodies, but without Access-Control-Expose-Headers the
  // browser hides the 206's Content-Range from it (a real server's config, as a helper's walk met it).
  const origin = 'http://data.bytelab.test';
  await page.route(`${origin}/**`, async (route) => {
    const cors = { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };
    if (route.request().method() === 'OPTIONS') {
      return route.fulfill({ status: 204, headers: { ...cors, 'Access-Control-Allow-Headers': '*' } });
    }
    const body = readFileSync(join('public', new URL(route.request().url()).pathname));
    const range = /^bytes=(\d+)-(\d*)$/.exec(route.request().headers().range ?? '');
    if (!range) return route.fulfill({ status: 200, body, headers: cors });
    const from = Number(range[1]);
    const to = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
    return route.fulfill({ status: 206, body: body.subarray(from, to + 1), headers: { ...cors, 'Content-Range': `bytes ${from}-${to}/${body.length}` } });
  });
  await page.goto(`/?manifest=${origin}/datasets/fashion-mnist-mini/manifest.json&model=tiny-cnn&evalEvery=1000&autostart=1`);
  await expect(page.locator('#log')).toContainText(
    'without a Content-Range this page may read: a server on another origin must send Access-Control-Expose-Headers: Content-Range',
  );
  // The run fails with nothing readable, and the log names each of the records it counts (the last one's warning trailed).
  await expect(page.locator('#log')).toContainText('no readable data in split "test": all 4 records it can be given failed');
  for (let i = 0; i < 4; i++) await expect(page.locator('#log')).toContainText(`record test-0000${i}.pcr: fetch failed`);
});

test('six readers of the damaged dataset in order: the reader whose one record is missing leaves the run, the others train on', async ({ page }) => {
  await page.goto('/?manifest=__fixtures__/broken/manifest.json&model=tiny-cnn&batch=16&evalEvery=1000&readers=6&shuffle=1&cache=0&autostart=1');
  const left = (x: { warnings: string[] }) => x.warnings.find((w) => w.startsWith('reader 4 of 6 left the run'));
  const s = await waitFor(page, 'reader 4 leaving', (x) => left(x) !== undefined);
  expect(left(s)).toBe(
    'reader 4 of 6 left the run, the others read on: no readable data in split "train" (partition 4 of 6): its one record failed (see warnings)',
  );
  const later = await waitFor(page, 'steps after it left', (x) => x.steps.length >= s.steps.length + 8);
  expect(later.state).toBe('running');
  expect(later.steps.every((x) => Number.isFinite(x.loss))).toBe(true);
  await expect(page.locator('#echo-counters')).toContainText('5 of 6 readers still reading');
  await page.evaluate(() => window.__lab!.stop());
});

test('reads a dataset in the PCR reference format directly, one Range request per record at the chosen scan group', async ({ page }) => {
  const ranges: number[] = [];
  page.context().on('request', (r) => {
    const m = /bytes=0-(\d+)/.exec(r.headers().range ?? '');
    if (r.url().includes('/reference/train/PCR_') && r.url().endsWith('.pcr') && m) ranges.push(Number(m[1]) + 1);
  });
  const index = encodeURIComponent('__fixtures__/reference/train/PCR_index.pb?size=28x28&channels=1&classes=10');
  await page.goto(`/?manifest=${index}&model=tiny-cnn&batch=64&evalEvery=10&autostart=1`);
  const s = await waitFor(page, '15 steps and an evaluation on the test split', (x) => x.steps.length >= 15 && x.evals.length > 0);
  expect(s.dataset).toMatchObject({ kind: 'image', fidelityLevels: 6, inputShape: [28, 28, 1] });
  expect(s.steps.every((x) => Number.isFinite(x.loss))).toBe(true);
  expect(s.warnings).toEqual([]);
  const full = Math.max(...ranges);
  await page.locator('#fidelity').fill('2');
  await waitFor(page, 'a record read at scan group 2', (x) => x.fetches.some((f) => f.record.startsWith('PCR_') && f.level === 2));
  await expect.poll(() => Math.min(...ranges)).toBeLessThan(0.5 * full);
  await page.evaluate(() => window.__lab!.stop());
});

/** Notes each number drawn on a chart's canvas (uPlot draws its ticks' labels so), with its alignment and its chart's id. */
async function noteChartNumbers(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const drawn: { chart: string; align: string; value: number }[] = [];
    (window as unknown as { __chartNumbers: typeof drawn }).__chartNumbers = drawn;
    const fillText = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (this: CanvasRenderingContext2D, text: string, x: number, y: number, max?: number) {
      const value = Number(text.replaceAll(',', ''));
      const chart = this.canvas.closest('[id^="chart-"], #runs-chart')?.id;
      if (chart && text.trim() !== '' && Number.isFinite(value)) drawn.push({ chart, align: this.textAlign, value });
      return max === undefined ? fillText.call(this, text, x, y) : fillText.call(this, text, x, y, max);
    };
  });
}

/**
 * The numbers on one axis of a chart as drawn now: the notes are cleared and every chart drawn again (a viewport a little
 * narrower resizes them). uPlot centres an x axis's labels and right-aligns a left y axis's.
 */
async function axisNumbersNow(page: Page): Promise<(chart: string, axis: 'x' | 'y') => number[]> {
  await page.evaluate(() => ((window as unknown as { __chartNumbers: unknown[] }).__chartNumbers.length = 0));
  const size = page.viewportSize()!;
  await page.setViewportSize({ width: size.width - 20, height: size.height });
  await page.waitForTimeout(500);
  const drawn = await page.evaluate(() => (window as unknown as { __chartNumbers: { chart: string; align: string; value: number }[] }).__chartNumbers);
  return (chart, axis) => drawn.filter((d) => d.chart === chart && d.align === (axis === 'x' ? 'center' : 'right')).map((d) => d.value);
}

test('a step axis is labelled in whole steps: a few steps read 2.5, 7.5, 12.5 (the runs chart too)', async ({ page }) => {
  await noteChartNumbers(page);
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000');
  await page.locator('#runs-metric').selectOption('loss'); // a point per step, against steps
  await page.locator('#start').click();
  await waitFor(page, '2 steps', (s) => s.steps.length >= 2);
  const early = await axisNumbersNow(page);
  await waitFor(page, '13 steps', (s) => s.steps.length >= 13);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const later = await axisNumbersNow(page);
  for (const [when, ticks] of [
    ['at 2 steps', early],
    ['at 13 steps', later],
  ] as const) {
    // The runs chart is drawn a second after a step: by the 13th.
    for (const chart of ['chart-loss', 'chart-speed', 'chart-bytes', ...(ticks === later ? ['runs-chart'] : [])]) {
      const steps = ticks(chart, 'x');
      expect(steps.length, `${chart} ${when}: step labels`).toBeGreaterThan(0);
      expect(
        steps.filter((s) => !Number.isInteger(s)),
        `${chart} ${when}: fractional steps`,
      ).toEqual([]);
    }
  }
});

test('a flat test accuracy keeps its axis within 0 to 1, around the accuracy (it ran up to 1.5)', async ({ page }) => {
  await noteChartNumbers(page);
  // A table's logistic regression scores the majority class's share (89.5%) from its evaluation at step 20 on: a flat line.
  await page.goto('/?dataset=birdstrikes&model=logreg&evalEvery=20');
  await page.locator('#start').click();
  const s = await waitFor(page, 'an evaluation', (x) => x.evals.length > 0);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const accuracies = (await snapshot(page)).evals.map((e) => e.accuracy);
  expect(s.evals[0]!.accuracy).toBeGreaterThan(0.5); // uPlot's padding of a flat series reaches past 1 from here
  const ticks = (await axisNumbersNow(page))('chart-acc', 'y');
  expect(ticks.length).toBeGreaterThan(1);
  expect(Math.max(...ticks)).toBeLessThanOrEqual(1);
  expect(Math.min(...ticks)).toBeGreaterThanOrEqual(0);
  // Zoomed on the values, as the runs chart's accuracy axis is: a tenth either side at most.
  expect(Math.min(...ticks)).toBeGreaterThanOrEqual(Math.min(...accuracies) - 0.1);
  expect(Math.max(...ticks)).toBeLessThanOrEqual(Math.max(...accuracies) + 0.1);
});

test('from 2400 to 1301 px and at 390 px the confusion matrix shows all 10 classes without scrolling sideways (it showed 4 in a 300 px column)', async ({
  page,
}) => {
  await page.setViewportSize({ width: 2400, height: 1200 });
  await page.goto('/?model=tiny-cnn&evalEvery=5');
  await page.locator('#start').click();
  await waitFor(page, 'an evaluation', (s) => s.evals.length > 0);
  await page.locator('#stop').click();
  await expect(page.locator('#confusion tr')).toHaveCount(11);
  // 1400 and 1301: the side column at its narrowest, where names across the columns made it scroll (until session 34).
  for (const width of [2400, 1920, 1400, 1301, 390]) {
    await page.setViewportSize({ width, height: 1200 });
    const fit = await page.locator('.confusion-wrap').evaluate((wrap) => {
      const right = wrap.getBoundingClientRect().right;
      const columns = [...wrap.querySelectorAll('#confusion tr:first-child th')];
      return {
        scroll: wrap.scrollWidth,
        client: wrap.clientWidth,
        columns: columns.length,
        outside: columns.filter((c) => c.getBoundingClientRect().right > right).length,
      };
    });
    expect(fit.columns, `${width} px`).toBe(12); // "true \ predicted", 10 classes, accuracy
    expect(fit.outside, `${width} px: columns past the panel's edge`).toBe(0);
    expect(fit.scroll, `${width} px`).toBeLessThanOrEqual(fit.client);
    // The page itself still fits the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${width} px`).toBe(true);
  }
});

test("Start while the pipeline worker's script cannot be fetched (the lab's server down) fails the run saying so, not 'loading' for ever", async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000');
  await expect(page.locator('#start')).toBeEnabled();
  const workerScript = '**/pipeline/worker.ts*';
  await page.route(workerScript, (route) => route.abort());
  await page.locator('#start').click();
  await expect(page.locator('#log')).toContainText("training failed: the pipeline worker could not start: its script did not load (is the lab's server up?)", {
    timeout: 20_000,
  });
  await expect(page.locator('#start')).toBeEnabled();
  expect(await page.evaluate(() => window.__lab!.runs())).toEqual({ open: 0, workers: 0 });
  // The server back: Start works.
  await page.unroute(workerScript);
  await page.locator('#start').click();
  await waitFor(page, 'a step', (s) => s.steps.length >= 1);
  await page.evaluate(() => window.__lab!.stop());
});

test('while no batch comes, the state line says why in a few words (the latest warning since the last step), not only "see the log"', async ({
  page,
  context,
}) => {
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&cache=0&readers=1');
  await page.locator('#start').click();
  await waitFor(page, 'a few steps', (s) => s.steps.length >= 3);
  // The dataset's server goes away (its manifest too, which the pipeline reads to tell an outage from a bad record).
  const dataset = '**/datasets/fashion-mnist-mini/**';
  await context.route(dataset, (route) => route.abort('connectionrefused'));
  await expect(page.locator('#state')).toContainText(/^running: no batch for \d+ s, waiting for data: .+ \(the log has more\)$/, { timeout: 60_000 });
  const said = (await page.locator('#state').textContent())!.match(/waiting for data: (.+) \(the log has more\)$/)![1]!;
  expect(said.length).toBeLessThanOrEqual(80);
  await expect(page.locator('#log')).toContainText(said);
  await expect(page.locator('#state')).toContainText("waiting for data: the dataset's server stopped answering (the log has more)");
  await context.unroute(dataset);
  await waitFor(page, 'steps again', (s) => s.steps.length >= 6, 90_000);
  await expect(page.locator('#state')).toHaveText('running');
  await page.evaluate(() => window.__lab!.stop());
});
