// The runs panel as a person uses it to answer "does scan group 2 reach the
// target as well as group 6, and how much sooner?": two short runs, overlaid,
// a time-to-target row each, still there after a reload, exported as JSON.
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { snapshot, waitFor } from './helpers.js';

test('two runs at different scan groups are recorded, overlaid, and get a time-to-target row each', async ({ page }, testInfo) => {
  test.setTimeout(240_000);
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=5');
  await expect(page.locator('#backend')).toContainText('webgpu');
  // Before any evaluation the test split's panel says what will come, rather than show empty boxes.
  await expect(page.locator('#test-split-hint')).toBeVisible();
  await expect(page.locator('.confusion-wrap')).toBeHidden();
  for (const group of ['6', '2']) {
    await page.locator('#fidelity').fill(group);
    await page.locator('#start').click();
    await waitFor(page, `two evaluations at group ${group}`, (s) => s.evals.length >= 2 && s.steps.length >= 10);
    await page.locator('#stop').click();
    await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  }
  // The test split as the model sees it: the confusion matrix covers all 1,024 test images, and the mistakes shown are mistakes.
  const last = (await snapshot(page)).evals.at(-1)!;
  expect(last.confusion.reduce((a, b) => a + b, 0)).toBe(1024);
  expect(last.examples).toBe(1024);
  await expect(page.locator('#confusion tr')).toHaveCount(11); // a header and a row per class
  await expect(page.locator('#test-split-hint')).toBeHidden();
  const shownCells = await page.locator('#confusion td:not(.class-accuracy)').allTextContents();
  expect(shownCells.map(Number).reduce((a, b) => a + b, 0)).toBe(1024);
  const mistakes = await page.locator('#mistakes figure').count();
  expect(mistakes).toBeGreaterThan(0); // about half the test images are wrong this early
  expect(mistakes).toBeLessThanOrEqual(8);
  for (const caption of await page.locator('#mistakes figcaption').allTextContents()) {
    const [label, predicted] = caption.split(' → ');
    expect(label).not.toBe(predicted);
  }
  // The sample grid names each image's class: in its label, and under the pointer.
  const classes = (await snapshot(page)).dataset!.classes;
  const label = (await page.locator('#samples').getAttribute('aria-label'))!;
  const names = label.replace(/^.*?: /, '').split(', ');
  expect(names.length).toBeGreaterThan(8);
  for (const n of names) expect(classes).toContain(n);
  await page.locator('#samples').hover({ position: { x: 5, y: 5 } });
  expect(classes).toContain(await page.locator('#samples').getAttribute('title'));
  await page.locator('#runs-target').fill('15');
  const rows = page.locator('#runs-table tbody tr');
  await expect(rows).toHaveCount(2);
  // Newest first: group 2, then group 6; each reached 15% (10 classes) and says when, at what cost.
  await expect(rows.nth(0)).toContainText('group 2');
  await expect(rows.nth(1)).toContainText('group 6');
  for (let i = 0; i < 2; i++) {
    const cells = rows.nth(i).locator('td');
    await expect(cells.nth(6)).toContainText(/\d+\.\d s \(step \d+\)/);
    await expect(cells.nth(7)).toContainText(/[kM]?B/);
  }
  // An emptied target is no target (it read as 0%, which every run "reached" at its first evaluation).
  await page.locator('#runs-target').fill('');
  await expect(page.locator('#runs-table thead')).toContainText('time to target');
  await page.locator('#runs-target').fill('15');
  // Both curves on the one chart (uPlot's legend lists a series per run).
  await expect(page.locator('#runs-chart .u-legend .u-series')).toHaveCount(2);
  await page.locator('#runs-x').selectOption('mib');
  await expect(page.locator('#runs-chart')).toHaveAttribute('aria-label', /2 runs against MiB read/);
  // Unticking a run says so at once (the line kept "2 overlaid" until the table was next drawn).
  await rows.nth(1).locator('input[type=checkbox]').uncheck();
  await expect(page.locator('#runs-status')).toHaveText('2 runs recorded in this browser; 1 overlaid.');
  await rows.nth(1).locator('input[type=checkbox]').check();
  await expect(page.locator('#runs-status')).toHaveText('2 runs recorded in this browser; 2 overlaid.');
  // The saved run offered is named as its row is: two runs of one dataset and model differ by their scan group.
  const newest = (await rows.nth(0).locator('input[type=checkbox]').getAttribute('aria-label'))!.replace(/^overlay /, '');
  expect(newest).toContain('group 2');
  await expect(page.locator('#resume-text')).toContainText(`Saved run "${newest}": Fashion-MNIST`);
  const records = await page.evaluate(() => window.__lab!.records());
  expect(records.map((r) => r.settings.fidelity)).toEqual([6, 2]);
  // Group 2 read fewer bytes per fresh example than group 6 (from the cache the first run filled, or off the wire).
  const perExample = records.map((r) => r.steps.at(-1)![3] / r.steps.at(-1)![4]);
  expect(perExample[1]!).toBeLessThan(perExample[0]!);
  await page.locator('#runs').screenshot({ path: testInfo.outputPath('runs-panel.png') });
  // On a phone the table scrolls sideways: at its actions, each row still shows which run they act on.
  await page.setViewportSize({ width: 390, height: 844 });
  const wrap = page.locator('.runs-table-wrap');
  await wrap.evaluate((w) => (w.scrollLeft = w.scrollWidth));
  const [box, name, del] = await Promise.all([
    wrap.boundingBox(),
    rows.nth(0).locator('td').nth(1).boundingBox(),
    rows
      .nth(0)
      .getByRole('button', { name: /^delete / })
      .boundingBox(),
  ]);
  expect(del!.x + del!.width).toBeLessThanOrEqual(box!.x + box!.width + 1);
  expect(name!.x).toBeGreaterThanOrEqual(box!.x - 1);
  expect(name!.x + name!.width).toBeLessThanOrEqual(del!.x);
  await page.locator('#runs').screenshot({ path: testInfo.outputPath('runs-panel-390-scrolled.png') });
  await page.setViewportSize({ width: 1400, height: 900 });

  // Kept in this browser: a reload lists them again; unticking one takes it off the chart.
  await page.reload();
  await expect(rows).toHaveCount(2);
  await rows.nth(0).locator('input[type=checkbox]').uncheck();
  await expect(page.locator('#runs-chart .u-legend .u-series')).toHaveCount(1);
  // The view as the person left it comes back with a reload: the run unticked, MiB read, the 15% target (before: all reset).
  await page.reload();
  await expect(page.locator('#runs-status')).toHaveText('2 runs recorded in this browser; 1 overlaid.');
  await expect(rows.nth(0).locator('input[type=checkbox]')).not.toBeChecked();
  await expect(page.locator('#runs-x')).toHaveValue('mib');
  await expect(page.locator('#runs-target')).toHaveValue('15');
  // Export the shown runs, and a file that is not a runs file is refused with the reason.
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#runs-export').click()]);
  const exported = JSON.parse(readFileSync((await download.path())!, 'utf8'));
  expect(exported.format).toBe('bytelab-runs');
  expect(exported.runs).toHaveLength(1);
  await page.locator('#runs-import').setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from('{"runs": 3}') });
  await expect(page.locator('#log')).toContainText('bad.json was not imported: not a bytelab runs file');
  await expect(rows).toHaveCount(2);
  // A file of 40 runs is listed whole; the chart overlays as many as it has line styles, and the log says which.
  // One of them on a dataset known by a long URL: it wraps in its cell rather than widening the table past its column.
  const longUrl = `https://datasets.example.org/${'very-long-folder-name/'.repeat(8)}manifest.json`;
  const many = Array.from({ length: 40 }, (_, i) => ({ ...exported.runs[0], id: `imported-${i}`, name: `imported ${i}`, ...(i ? {} : { dataset: longUrl }) }));
  const file = Buffer.from(JSON.stringify({ ...exported, runs: many }));
  await page.locator('#runs-import').setInputFiles({ name: 'many.json', mimeType: 'application/json', buffer: file });
  await expect(page.locator('#log')).toContainText('imported 40 runs from many.json; the last 31 in the file are overlaid, with the 1 shown before');
  await expect(rows).toHaveCount(42);
  await expect(page.locator('#runs-chart .u-legend .u-series')).toHaveCount(1 + 31); // the run ticked before, and 31: one per line style
  await expect(page.locator('#runs-status')).toHaveText('42 runs recorded in this browser; 32 overlaid.');
  await expect(page.locator('#runs-table')).toContainText(`on ${longUrl}`);
  const overflow = await page.locator('.runs-table-wrap').evaluate((w) => w.scrollWidth - w.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
});

test('a sweep over scan groups runs one run per value with the same seed and fills the table', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=3&seed=3');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#sweep-values').fill('6, 9');
  await page.locator('#sweep-steps').fill('8');
  await page.locator('#sweep-start').click();
  await expect(page.locator('#sweep-status')).toHaveText(/^not started: scan group must be/);
  // Beside its field too, as the setup fields' errors are; gone, with the status line's, once the values are right.
  await expect(page.locator('#sweep-values-error')).toContainText('scan group must be');
  await expect(page.locator('#sweep-values')).toHaveAttribute('aria-invalid', 'true');
  await page.locator('#sweep-values').fill('6, 1');
  await expect(page.locator('#sweep-values-error')).toHaveText('');
  await expect(page.locator('#sweep-status')).toHaveText('');
  await page.locator('#sweep-steps').fill('0');
  await expect(page.locator('#sweep-steps-error')).toContainText('steps per run');
  await page.locator('#sweep-steps').fill('8');
  // Start off for another field: the sweep says so and starts nothing (before: "sweep stopped: a run could not start").
  await page.locator('#batch-size').fill('abc');
  await page.locator('#sweep-start').click();
  await expect(page.locator('#sweep-status')).toHaveText(/^not started: Start is off \(.*batch size/);
  await expect(page.locator('#state')).toHaveText('idle');
  await page.locator('#batch-size').fill('32');
  // Between its runs (stopped, then the next one opening) Start and Run sweep stay off: a Start there broke the sweep.
  await page.evaluate(() => {
    const seen = ((window as { enabledInSweep?: string[] }).enabledInSweep = [] as string[]);
    const status = document.querySelector('#sweep-status')!;
    for (const id of ['start', 'sweep-start']) {
      const button = document.getElementById(id) as HTMLButtonElement;
      new MutationObserver(() => {
        if (!button.disabled && !/^sweep done/.test(status.textContent ?? '')) seen.push(`${id} while "${status.textContent}"`);
      }).observe(button, { attributes: true, attributeFilter: ['disabled'] });
    }
  });
  await page.locator('#sweep-start').click();
  await expect(page.locator('#state')).toHaveText('running', { timeout: 60_000 });
  await page.locator('#echo').fill('2'); // not the swept control: the person's, kept after the sweep
  await expect(page.locator('#sweep-status')).toContainText('sweep done: 2 runs', { timeout: 150_000 });
  await expect(page.locator('#echo')).toHaveValue('2');
  expect(await page.evaluate(() => (window as { enabledInSweep?: string[] }).enabledInSweep)).toEqual([]);
  await expect(page.locator('#start')).toBeEnabled();
  const records = await page.evaluate(() => window.__lab!.records());
  expect(records.map((r) => r.settings.fidelity)).toEqual([6, 1]);
  expect(records.map((r) => r.settings.seed)).toEqual([3, 3]);
  for (const r of records) {
    // Each run ends itself at its 8 steps, evaluated there: the runs compare at the same step (a stop polled for overshot it).
    expect(r.steps.at(-1)![0]).toBe(8);
    expect(r.evals.map((e) => e[0])).toEqual([3, 6, 8]);
  }
  await expect(page.locator('#runs-table tbody tr')).toHaveCount(2);
  expect(await page.evaluate(() => window.__lab!.runs())).toEqual({ open: 0, workers: 0 });
  // The slider is the person's again, as they left it (full fidelity), not the last swept group.
  await expect(page.locator('#fidelity')).toHaveValue('6');
  expect(new URL(page.url()).searchParams.has('group')).toBe(false);
});

test("the run's own Stop during a sweep ends the sweep, and says so", async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000');
  await page.locator('#sweep-values').fill('6, 1');
  await page.locator('#sweep-steps').fill('400');
  await page.locator('#sweep-start').click();
  await waitFor(page, 'the first run training', (s) => s.steps.length >= 2);
  await page.locator('#stop').click();
  // Before, the sweep went on with group 1 and left group 6's row cut short at a few steps.
  await expect(page.locator('#sweep-status')).toHaveText("sweep stopped by the run's Stop, during run 1 of 2", { timeout: 15_000 });
  await expect(page.locator('#start')).toBeEnabled();
  await expect(page.locator('#runs-table tbody tr')).toHaveCount(1);
  expect(await page.evaluate(() => window.__lab!.runs())).toEqual({ open: 0, workers: 0 });
});

test('Run sweep and Stop sweep pressed from the keyboard hand focus to each other (it fell to the page)', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000');
  await page.locator('#sweep-values').fill('6, 1');
  await page.locator('#sweep-steps').fill('400');
  await page.locator('#sweep-start').focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('#sweep-stop')).toBeFocused();
  await waitFor(page, 'the first run training', (s) => s.steps.length >= 2);
  await page.keyboard.press('Enter');
  // It says where it was cut, as the run's own Stop does (before: "sweep stopped" alone).
  await expect(page.locator('#sweep-status')).toHaveText('sweep stopped during run 1 of 2', { timeout: 15_000 });
  await expect(page.locator('#sweep-start')).toBeFocused();
});

test("a reload during a sweep says what it cut off, and gives the person's scan group back", async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#fidelity').fill('4');
  await page.locator('#sweep-values').fill('6, 1');
  await page.locator('#sweep-steps').fill('400');
  await page.locator('#sweep-start').click();
  await waitFor(page, 'the first run training', (s) => s.steps.length >= 2);
  await page.reload();
  await expect(page.locator('#sweep-status')).toContainText('the sweep of group 6, 1 was cut off by a reload during run 1 of 2');
  // Before, the address held the swept value (group=6) and the reload read it back.
  await expect(page.locator('#fidelity')).toHaveValue('4');
  // Said once: the next load has nothing to say.
  await page.reload();
  await expect(page.locator('#backend')).toContainText('webgpu');
  await expect(page.locator('#sweep-status')).toHaveText('');
});

test('auto echo ticked during an echo sweep ends the sweep, saying why (its runs would compare nothing)', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#sweep-kind').selectOption('echo');
  await page.locator('#sweep-values').fill('1, 2');
  await page.locator('#sweep-steps').fill('400');
  await page.locator('#sweep-start').click();
  await waitFor(page, 'the first run training', (s) => s.steps.length >= 2);
  await page.locator('#echo-auto').check();
  // Before, the sweep went on, and auto set every run's echo factor to its own from step 10.
  await expect(page.locator('#sweep-status')).toHaveText('sweep stopped during run 1 of 2: auto echo sets the echo factor itself: untick "auto" to sweep it', {
    timeout: 20_000,
  });
  await expect(page.locator('#state')).toHaveText('stopped');
  await expect(page.locator('#runs-table tbody tr')).toHaveCount(1);
});

test('an echo sweep on a one-record table counts fresh examples trained, and the table says what ran', async ({ page }) => {
  test.setTimeout(180_000);
  // Birdstrikes' training split is one TOC record: the reader parses it whole before the first batch, and there is one reader.
  await page.goto('/?dataset=birdstrikes&model=logreg&readers=4&evalEvery=5&seed=2');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#sweep-kind').selectOption('echo');
  await page.locator('#sweep-values').fill('1, 3');
  await page.locator('#sweep-steps').fill('10');
  await page.locator('#sweep-start').click();
  await expect(page.locator('#sweep-status')).toContainText('sweep done: 2 runs', { timeout: 150_000 });
  const records = await page.evaluate(() => window.__lab!.records());
  expect(records.map((r) => r.settings.echoFactor)).toEqual([1, 3]);
  for (const r of records) {
    expect(r).toMatchObject({ kind: 'tabular', fresh: 'trained', settings: { readers: 1, echoMode: 'batches' } });
    expect(r.name).toMatch(/^logreg · echo \d · /); // no scan group in a table run's name
    // Fresh examples trained: never more than the rows trained, though the whole split (9,058 rows) was read at step 1.
    for (const [step, , , , fresh] of r.steps) expect(fresh).toBeLessThanOrEqual(step * r.settings.batchSize);
    // Counted from each batch: a table echoes whole batches, so a step trains a whole fresh batch or none.
    const added = r.steps.map((p, i) => p[4] - (r.steps[i - 1]?.[4] ?? 0));
    expect(added.every((n) => n === 0 || n === r.settings.batchSize)).toBe(true);
  }
  // Echo 1 trains only fresh rows; echo 3 a third of them (copies are not fresh): the sweep tells the factors apart.
  const at10 = records.map((r) => r.steps.find((p) => p[0] === 10)![4]);
  expect(at10[0]).toBe(10 * records[0]!.settings.batchSize);
  expect(at10[1]!).toBeLessThan(at10[0]!);
  expect(at10[1]! / records[1]!.settings.batchSize).toBeGreaterThanOrEqual(2); // about 10 / 3 fresh batches in 10 steps
  expect(at10[1]! / records[1]!.settings.batchSize).toBeLessThanOrEqual(5);
  const rows = page.locator('#runs-table tbody tr');
  await expect(rows).toHaveCount(2);
  // A table echoes whole batches and has one fidelity level, whatever the echo mode control said.
  for (let i = 0; i < 2; i++) {
    await expect(rows.nth(i).locator('td').nth(2)).toContainText(/^echo \d \(batches\), batch /);
  }
  await expect(page.locator('#runs-table thead')).toContainText('fresh examples trained to 70%');
  // 70% is below what always predicting "None" scores on birdstrikes (89.5%): every run "reached" it at its first evaluation.
  // The cells say so and the status line asks for a higher target; before, they showed times that compared nothing.
  for (let i = 0; i < 2; i++) await expect(rows.nth(i).locator('td').nth(6)).toHaveText(/^always “None” scores \d+\.\d%$/);
  await expect(page.locator('#runs-status')).toContainText('For 2 runs the target is no higher than always guessing one class scores');
  await page.locator('#runs-target').fill('95');
  for (let i = 0; i < 2; i++) await expect(rows.nth(i).locator('td').nth(6)).toHaveText(/^not reached$|^\d+\.\d s \(step \d+\)$/);
  await expect(page.locator('#runs-status')).not.toContainText('always guessing');
  await page.locator('#runs-target').fill('70');
  await page.locator('#runs-x').selectOption('fresh');
  await expect(page.locator('#runs-chart')).toHaveAttribute('aria-label', /against fresh examples trained$/);

  // The target as typed: the header says the 50.5% the rows are computed at, not 51%.
  await page.locator('#runs-target').fill('50.5');
  await expect(page.locator('#runs-table thead')).toContainText('time to 50.5%');
  await expect(page.locator('#runs-target')).toHaveAttribute('aria-invalid', 'false');
  // Out of range: no target, said beside the field; the rows have nothing to reach ("–", not "not reached").
  for (const bad of ['150', '-5']) {
    await page.locator('#runs-target').fill(bad);
    await expect(page.locator('#runs-table thead')).toContainText('time to ?');
    await expect(page.locator('#runs-target')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#runs-target-error')).toHaveText('target accuracy must be a number from 0 to 100');
    for (let i = 0; i < 2; i++) await expect(rows.nth(i).locator('td').nth(6)).toHaveText('–');
  }
  // Empty is no target, not a mistake.
  await page.locator('#runs-target').fill('');
  await expect(page.locator('#runs-target')).toHaveAttribute('aria-invalid', 'false');
  await expect(rows.nth(0).locator('td').nth(6)).toHaveText('–');
});

test('deleting a stopped run takes its offer to continue with it, and Run sweep is off while a run trains', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#start').click();
  await waitFor(page, '3 steps', (s) => s.steps.length >= 3);
  await expect(page.locator('#sweep-start')).toBeDisabled(); // it did nothing when clicked, saying nothing
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText(/^stopped/);
  await expect(page.locator('#sweep-start')).toBeEnabled();
  await page.reload();
  await expect(page.locator('#resume-text')).toContainText('Saved run');
  const rows = page.locator('#runs-table tbody tr');
  await expect(rows).toHaveCount(1);
  const del = rows.first().getByRole('button', { name: /^delete / });
  // Asked first: dismissed, nothing goes (before, one press deleted it for good). One handler answers every question in
  // turn, so one asked more than once would be counted, not left open.
  const answers = [false, true];
  const asked: string[] = [];
  page.on('dialog', (d) => {
    asked.push(d.message());
    void (answers.shift() ? d.accept() : d.dismiss());
  });
  await del.click();
  await expect.poll(() => asked.length).toBe(1);
  await expect(rows).toHaveCount(1);
  await del.click({ timeout: 5_000 }); // gone already if the dismissed question deleted it: fails here, not at the test's end
  await expect(rows).toHaveCount(0);
  expect(asked).toEqual([expect.stringMatching(/^Delete the run /), expect.stringMatching(/^Delete the run /)]);
  await expect(page.locator('.runs-table-wrap')).toBeFocused(); // the keyboard's focus stays in the table, not on the page
  // Continue would have trained a run whose record and checkpoint are gone.
  await expect(page.locator('#resume')).toBeHidden();
  await page.reload();
  await expect(page.locator('#backend')).toContainText('webgpu');
  await expect(page.locator('#resume')).toBeHidden();
});

test('runs of two datasets, one read from a typed manifest URL, are each named with their dataset in the table and the legend', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=3');
  await page.locator('#start').click();
  await waitFor(page, 'an evaluation', (s) => s.evals.length >= 1);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  await page.locator('#manifest-url').fill('/datasets/flights-250k-toc/manifest.json');
  await page.locator('#manifest-url').press('Enter');
  await expect(page.locator('#model')).toHaveValue('logreg');
  // The line under the dataset list describes the last run's dataset, not the one now chosen: it says so.
  await expect(page.locator('#dataset-info')).toContainText("The last run's dataset: Fashion-MNIST mini:");
  await page.locator('#start').click();
  await waitFor(page, 'an evaluation', (s) => s.evals.length >= 1);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const rows = page.locator('#runs-table tbody tr');
  // Each run is named as its manifest names the dataset (before, the rows did not say it; the records held the URL typed,
  // or the list's description).
  await expect(page.locator('#dataset-info')).toContainText(/^Flights 250k: /);
  await expect(rows.nth(0).locator('td').nth(1)).toContainText(/^logreg · .*on Flights 250k$/);
  await expect(rows.nth(1).locator('td').nth(1)).toContainText(/^tiny-cnn · .*on Fashion-MNIST mini$/);
  for (let i = 0; i < 2; i++) await rows.nth(i).getByRole('checkbox').check();
  await expect(page.locator('#runs-chart .u-legend .u-series')).toHaveCount(2);
  await expect(page.locator('#runs-chart .u-legend')).toContainText('· Flights 250k');
  await expect(page.locator('#runs-chart .u-legend')).toContainText('· Fashion-MNIST mini');
});

test('a reload before a new run has trained a step leaves no row; once it has, the row stays', async ({ page, context }) => {
  test.setTimeout(120_000);
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000&cache=0');
  await expect(page.locator('#backend')).toContainText('webgpu');
  let hold = true;
  await context.route('**/train-*.pcr', (route) => (hold ? undefined : route.continue())); // the first batch is long in coming
  await page.locator('#start').click();
  await expect(page.locator('#state')).toContainText(/waiting for the first batch, [4-9] s/, { timeout: 60_000 });
  await page.reload();
  // Before, the run's record was stored as it began: the reload left a row of a run that trained nothing, with no way to continue it.
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.waitForTimeout(1_000); // the table is read from IndexedDB
  expect(await page.evaluate(() => window.__lab!.records().length)).toBe(0);
  await expect(page.locator('#runs-table tbody tr')).toHaveCount(0);
  hold = false;
  await page.locator('#start').click();
  await waitFor(page, 'a step', (s) => s.steps.length >= 1);
  await page.reload();
  await expect.poll(() => page.evaluate(() => window.__lab!.records().length), { timeout: 10_000 }).toBe(1);
});

test("an import's outcome is said under its button, not only in the log at the page's end: each bad file's reason, then the runs imported", async ({
  page,
}) => {
  await page.goto('/');
  await expect(page.locator('#runs-status')).toHaveText('No runs recorded yet.');
  const line = page.locator('#runs-import-status');
  const bad: [string, string, string][] = [
    ['notes.txt', 'text/plain', 'some notes, not JSON'],
    ['cut.json', 'application/json', '{"format": "bytelab-runs", "runs": [{"id": "a"'],
    ['empty.json', 'application/json', ''],
    ['list.json', 'application/json', '[]'],
  ];
  const reasons = ['not JSON', 'not JSON', 'the file is empty', 'not a bytelab runs file'];
  for (const [i, [name, mimeType, text]] of bad.entries()) {
    await page.locator('#runs-import').setInputFiles({ name, mimeType, buffer: Buffer.from(text) });
    await expect(line).toHaveText(new RegExp(`^${name.replace('.', '\\.')} was not imported: ${reasons[i]}`));
    await expect(page.locator('#log')).toContainText(`${name} was not imported: ${reasons[i]}`);
  }
  // The line sits by the button, where the person who chose the file is looking.
  const button = (await page.locator('label.file-button').boundingBox())!;
  const said = (await line.boundingBox())!;
  expect(said.y).toBeGreaterThanOrEqual(button.y);
  expect(said.y - (button.y + button.height)).toBeLessThan(40);

  const run = recordedRun('imported-1', 'tiny-cnn · imported', Date.now() - 60_000);
  const file = JSON.stringify({ format: 'bytelab-runs', version: 1, runs: [run, { ...run, id: 'imported-2' }] });
  await page.locator('#runs-import').setInputFiles({ name: 'runs.json', mimeType: 'application/json', buffer: Buffer.from(file) });
  await expect(line).toHaveText('imported 2 runs from runs.json');
  await expect(page.locator('#log')).toContainText('imported 2 runs from runs.json');
  await expect(page.locator('#runs-table tbody tr')).toHaveCount(2);
});

/** A stopped run's record, as an exported runs file holds it. */
function recordedRun(id: string, name: string, startedAt: number) {
  return {
    id,
    name,
    startedAt,
    updatedAt: startedAt + 10_000,
    dataset: 'Fashion-MNIST mini',
    model: 'tiny-cnn',
    settings: { batchSize: 32, seed: 1, learningRate: 0.005, fidelity: null, echoFactor: 1, echoMode: 'examples', readers: 1 },
    state: 'stopped',
    steps: [[1, 0.5, 2.3, 0.1, 32]],
    evals: [[1, 0.6, 0.2, 2.3, 0.1, 32]],
    marks: [],
  };
}

/** A runs file of `n` runs, run-0 .. run-(n-1), as Export writes it. */
function runsFile(n: number): Buffer {
  const runs = Array.from({ length: n }, (_, i) => recordedRun(`run-${i}`, `tiny-cnn · run ${i}`, Date.now() - 60_000 + i));
  return Buffer.from(JSON.stringify({ format: 'bytelab-runs', version: 1, runs }));
}

test('importing a file again keeps the runs already here as they are (a rename was undone) unless its copy is newer, and says what it did', async ({
  page,
}) => {
  await page.goto('/');
  await expect(page.locator('#runs-status')).toHaveText('No runs recorded yet.');
  const line = page.locator('#runs-import-status');
  const rows = page.locator('#runs-table tbody tr');
  const file = { name: 'bytelab-runs.json', mimeType: 'application/json', buffer: runsFile(5) };
  await page.locator('#runs-import').setInputFiles(file);
  await expect(line).toHaveText('imported 5 runs from bytelab-runs.json');
  await expect(rows).toHaveCount(5);
  // One run renamed, another deleted, as a person tidies the table after an import.
  page.once('dialog', (d) => void d.accept('the good one'));
  await page.getByRole('button', { name: 'rename tiny-cnn · run 2' }).click();
  await expect(page.locator('tr[data-run="run-2"] td').nth(1)).toContainText('the good one');
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'delete tiny-cnn · run 3' }).click();
  await expect(rows).toHaveCount(4);
  // Before, the file's copies overwrote the runs here: run 2 got its old name back, and the line said "imported 5 runs".
  await page.locator('#runs-import').setInputFiles(file);
  await expect(line).toHaveText('imported 1 run from bytelab-runs.json; 4 were here already (kept as they are)');
  await expect(page.locator('#log')).toContainText('imported 1 run from bytelab-runs.json; 4 were here already (kept as they are)');
  await expect(rows).toHaveCount(5);
  await expect(page.locator('tr[data-run="run-2"] td').nth(1)).toContainText('the good one');
  await expect(page.locator('tr[data-run="run-3"] td').nth(1)).toContainText('tiny-cnn · run 3');
  await page.locator('#runs-import').setInputFiles(file);
  await expect(line).toHaveText('nothing new in bytelab-runs.json: its 5 runs are here already');
  await expect(rows).toHaveCount(5);
  // A newer copy of a run (continued in another browser since) replaces the one here; the rest stay as they are.
  const later = JSON.parse(file.buffer.toString('utf8'));
  Object.assign(later.runs[4], { name: 'continued elsewhere', updatedAt: Date.now() + 60_000 });
  await page.locator('#runs-import').setInputFiles({ ...file, name: 'later.json', buffer: Buffer.from(JSON.stringify(later)) });
  await expect(line).toHaveText('later.json: 1 newer copy replaced the one here; 4 were here already (kept as they are)');
  await expect(page.locator('tr[data-run="run-4"] td').nth(1)).toContainText('continued elsewhere');
  await page.reload();
  await expect(page.locator('tr[data-run="run-2"] td').nth(1)).toContainText('the good one');
  await expect(page.locator('tr[data-run="run-4"] td').nth(1)).toContainText('continued elsewhere');
});

test('a target accuracy that is not a number is said beside the field; an emptied one is no target, and the headers say so', async ({ page }) => {
  await page.goto('/');
  await page.locator('#runs-import').setInputFiles({ name: 'runs.json', mimeType: 'application/json', buffer: runsFile(2) });
  const rows = page.locator('#runs-table tbody tr');
  await expect(rows).toHaveCount(2);
  const field = page.locator('#runs-target');
  const head = page.locator('#runs-table thead');
  // A number field keeps "e", "1e", "--5" but reads "" for them, as for an empty field (before: no error, no aria-invalid).
  for (const typed of ['e', '1e', '--5']) {
    await field.fill('');
    await field.pressSequentially(typed);
    await expect(field, typed).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#runs-target-error'), typed).toHaveText('target accuracy must be a number from 0 to 100');
    await expect(head).toContainText('time to ?');
    for (let i = 0; i < 2; i++) await expect(rows.nth(i).locator('td').nth(6)).toHaveText('–');
  }
  // Emptied (or given letters, which Chrome does not take into a number field): no target, not "time to ?".
  for (const typed of ['', 'abc']) {
    await field.fill('');
    await field.pressSequentially(typed);
    await expect(field).toHaveAttribute('aria-invalid', 'false');
    await expect(page.locator('#runs-target-error')).toHaveText('');
    await expect(head).toContainText('time to target');
    await expect(head).toContainText('bytes read to target');
    await expect(head).not.toContainText('?');
    for (let i = 0; i < 2; i++) await expect(rows.nth(i).locator('td').nth(6)).toHaveText('–');
    await expect(page.locator('#runs-status')).toHaveText(
      '2 runs recorded in this browser; 2 overlaid. No target accuracy: type one to compare the runs by the time, bytes and examples to it.',
    );
  }
  await field.fill('15');
  await expect(field).toHaveAttribute('aria-invalid', 'false');
  await expect(head).toContainText('time to 15%');
  await expect(rows.nth(0).locator('td').nth(6)).toHaveText('0.6 s (step 1)');
  await expect(page.locator('#runs-status')).toHaveText('2 runs recorded in this browser; 2 overlaid.');
});

test('a sweep run that trained all its steps leaves nothing to continue (its step-50 checkpoint was offered; Continue trained the same steps again)', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await page.goto('/?model=mlp&batch=16&evalEvery=1000');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#sweep-kind').selectOption('echo');
  await page.locator('#sweep-values').fill('1');
  await page.locator('#sweep-steps').fill('52'); // past the checkpoint every 50 steps
  await page.locator('#sweep-start').click();
  await expect(page.locator('#sweep-status')).toContainText('sweep done: 1 run', { timeout: 150_000 });
  await expect(page.locator('#state')).toHaveText('stopped: trained its 52 steps');
  await page.waitForTimeout(1000); // the line is read again once the run's checkpoints are written
  await expect(page.locator('#resume')).toBeHidden();
  await page.reload();
  await expect(page.locator('#start')).toBeEnabled();
  await expect(page.locator('#resume')).toBeHidden();
});
