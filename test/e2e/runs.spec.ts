// One run per Start, controls that never lie, inputs checked where they are
// entered: what a person meets in the first minute, in headless Chromium on
// WebGPU (SwiftShader), with the real workers and the bundled dataset.
import { expect, test, type Page } from '@playwright/test';
import { DATASETS } from '../../src/app/datasets.js';
import { snapshot, waitFor } from './helpers.js';

const runs = (page: Page) => page.evaluate(() => window.__lab!.runs());
const stateText = (page: Page) => page.locator('#state');

/** Records every text the state badge shows, however briefly. */
async function watchStates(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { __states: string[] }).__states = seen;
    const el = document.getElementById('state')!;
    new MutationObserver(() => seen.push(el.textContent ?? '')).observe(el, { childList: true, characterData: true, subtree: true });
  });
  return () => page.evaluate(() => (window as unknown as { __states: string[] }).__states);
}

test('Stop then Start, again and again: exactly one run at a time, and Stop really stops it', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Two readers (pipeline workers) share the training split: a run is one session with two workers.
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=15&readers=2');
  await expect(page.locator('#backend')).toContainText('webgpu');
  const start = page.locator('#start');
  const stop = page.locator('#stop');

  await start.dblclick(); // a double click starts one run
  const early = await waitFor(page, 'the first steps', (s) => s.steps.length >= 3);
  expect(await runs(page)).toEqual({ open: 1, workers: 2 });
  // Disjoint shares: within the first epoch no training record is read twice.
  const trainRecords = early.fetches.filter((f) => f.record.startsWith('train-')).map((f) => f.record);
  expect(trainRecords.length).toBeGreaterThan(1);
  expect(new Set(trainRecords).size).toBe(trainRecords.length);

  for (let round = 0; round < 3; round++) {
    await waitFor(page, 'an evaluation', (s) => s.evals.length > 0);
    await stop.click();
    await expect(start).toBeEnabled({ timeout: 10_000 }); // within Stop's bound...
    expect((await snapshot(page)).state).toBe('stopped'); // ...and only once the run has fully ended
    await start.click();
    await start.click({ force: true, timeout: 1000 }).catch(() => undefined); // impatient second click
    // The new run starts clean: no tile or chart keeps the old run's numbers.
    await expect(page.locator('#m-acc')).toHaveText('–');
    const fresh = await waitFor(page, 'steps in the new run', (s) => s.steps.length >= 3);
    expect(fresh.steps[0]!.step).toBe(1);
    expect(fresh.steps.map((m) => m.step)).toEqual(fresh.steps.map((_, i) => i + 1)); // no zig-zag from another run
    expect(fresh.evals.every((e) => e.step <= fresh.steps.at(-1)!.step + 1)).toBe(true);
    expect(await runs(page)).toEqual({ open: 1, workers: 2 });
  }

  await stop.click();
  await expect(stateText(page)).toHaveText('stopped', { timeout: 10_000 });
  const stopped = (await snapshot(page)).steps.length;
  await page.waitForTimeout(3000);
  expect((await snapshot(page)).steps.length).toBe(stopped);
  expect(await runs(page)).toEqual({ open: 0, workers: 0 });
  expect(errors).toEqual([]);
});

test('Stop while the run is loading, and while it evaluates, ends within seconds', async ({ page }) => {
  await page.goto('/?model=cnn&batch=32&evalEvery=5');
  await expect(page.locator('#backend')).toContainText('webgpu');
  const states = await watchStates(page);
  await page.locator('#start').click();
  await expect(stateText(page)).toHaveText('loading');
  let t0 = Date.now();
  await page.locator('#stop').click();
  await expect(stateText(page)).toHaveText('stopped', { timeout: 10_000 });
  expect(Date.now() - t0).toBeLessThan(10_000);
  expect(await runs(page)).toEqual({ open: 0, workers: 0 });

  await page.locator('#start').click();
  await expect(stateText(page)).toHaveText('evaluating', { timeout: 120_000 }); // the page says so while it evaluates
  t0 = Date.now();
  await page.locator('#stop').click();
  await expect(stateText(page)).toHaveText('stopped', { timeout: 10_000 });
  expect(Date.now() - t0).toBeLessThan(10_000);
  expect(await states()).toEqual(expect.arrayContaining(['loading', 'stopping', 'stopped', 'running', 'evaluating']));
  expect((await snapshot(page)).evals).toEqual([]); // the abandoned evaluation never lands
  // The run stopped while loading took no step: it leaves no row in the runs table (nothing to compare); the other one does.
  await expect(page.locator('#runs-table tbody tr')).toHaveCount(1);
  const records = await page.evaluate(() => window.__lab!.records());
  expect(records.map((r) => r.steps.length > 0)).toEqual([true]);
});

test('moving the slider and echo while a run opens is applied, not thrown or reset', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#start').click();
  await page.locator('#fidelity').fill('2');
  await page.locator('#echo').fill('2');
  expect((await snapshot(page)).state).toBe('loading');
  const s = await waitFor(page, 'records fetched at scan group 2', (x) => x.fetches.filter((f) => f.record.startsWith('train-')).length >= 2);
  expect(s.fetches.filter((f) => f.record.startsWith('train-')).every((f) => f.level === 2)).toBe(true);
  await expect(page.locator('#fidelity')).toHaveValue('2');
  // Echo 2 from the start: every example that passed the echo stage was copied once; of the copies and originals,
  // all but what the 512-example shuffle buffer holds were emitted. (examplesRead runs ahead: records in flight.)
  const p = (await waitFor(page, 'echoed examples', (x) => (x.pipeline?.examplesEmitted ?? 0) >= 2048)).pipeline!;
  expect(p.examplesEchoed).toBeGreaterThanOrEqual(p.examplesEmitted / 2);
  expect(errors).toEqual([]);
  await page.evaluate(() => window.__lab!.stop());
});

test('the slider moved after the training split opened, before the first step: marked at step 0, not taken as the start', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#start').click();
  // Its first records are asked for at full fidelity as it opens; the test split and the model come after.
  await waitFor(page, 'the training split open', (x) => x.dataset !== undefined);
  await page.locator('#fidelity').fill('3');
  await page.locator('#fidelity').dispatchEvent('change');
  expect((await snapshot(page)).steps).toHaveLength(0);
  await waitFor(page, 'a few steps', (x) => x.steps.length >= 3);
  await page.evaluate(() => window.__lab!.stop());
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const [r] = (await page.evaluate(() => window.__lab!.records())) as { name: string; settings: { fidelity: number | null }; marks: [number, string][] }[];
  // Before, the record took group 3 as its start (named "group 3"), though its first records were read at group 6.
  expect(r!.name).toMatch(/^tiny-cnn · full fidelity · /);
  expect(r!.marks).toContainEqual([0, 'group 3']);
});

test('a second run reads examples/s without a burst at its start (its steps counted when their losses come back)', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=8');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#start').click();
  const first = await waitFor(page, 'a first run', (s) => s.steps.length >= 10);
  await page.evaluate(() => window.__lab!.stop());
  // The GPU programs are compiled now, so the second run's first steps are queued in a blink.
  await page.evaluate(() => window.__lab!.start());
  const s = await waitFor(page, 'the second run', (x) => x.state === 'running' && x.steps.length >= 24);
  const speed = s.steps.map((m) => m.examplesPerSecond);
  const steady = speed.slice(12, 24).sort((a, b) => a - b)[6]!;
  expect(Math.max(...speed.slice(0, 6))).toBeLessThan(1.5 * steady);
  await page.evaluate(() => window.__lab!.stop());
  // The same seed and settings: the same initial weights and batches, so the same first losses (they differed by the weights).
  const losses = (x: typeof s) => x.steps.slice(0, 8).map((m) => m.loss);
  for (const [i, loss] of losses(s).entries()) expect(loss).toBeCloseTo(losses(first)[i]!, 5);
});

test('a run leaves no tensors behind', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=10');
  await expect(page.locator('#backend')).toContainText('webgpu');
  const before = await page.evaluate(() => window.__lab!.memory());
  await page.locator('#start').click();
  await waitFor(page, 'steps and an evaluation', (s) => s.steps.length >= 12 && s.evals.length > 0);
  await page.evaluate(() => window.__lab!.stop());
  await expect.poll(() => page.evaluate(() => window.__lab!.memory().tensors)).toBe(before.tensors);
});

// Each refused field: the reason beside it, Start off, no run.
const fieldCases: [string, string, RegExp][] = [
  ['#batch-size', '0', /batch size must be a whole number from 1 to 1024/],
  ['#batch-size', '100000', /batch size must be a whole number from 1 to 1024/],
  ['#batch-size', '', /batch size must be a whole number/],
  ['#echo', '0', /echo factor must be a number from 1 to 16/],
  ['#echo', '1000', /echo factor must be a number from 1 to 16/],
  ['#learning-rate', 'abc', /learning rate must be a number/],
  ['#learning-rate', '-0.1', /learning rate must be a number/],
  ['#eval-every', '0', /evaluation interval must be a whole number/],
  ['#requests-in-flight', '0', /reads in flight must be a whole number from 1 to 16/],
  ['#manifest-url', 'ftp://example.com/manifest.json', /must be http or https/],
  ['#manifest-url', 'http://127.0.0.1:1/manifest.json', /port 1 is one browsers never fetch from/],
];
for (const [selector, value, reason] of fieldCases) {
  test(`refuses ${selector.slice(1)} = "${value}" with the reason beside the field`, async ({ page }) => {
    await page.goto('/?model=tiny-cnn');
    await expect(page.locator('#backend')).toContainText('webgpu');
    await expect(page.locator('#start')).toBeEnabled();
    await page.locator(selector).fill(value);
    await expect(page.locator(`${selector}-error`)).toHaveText(reason);
    await expect(page.locator(selector)).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#start')).toBeDisabled();
    await expect(page.locator('#start-hint')).toContainText(reason);
    await page.evaluate(() => window.__lab!.start());
    expect(await runs(page)).toEqual({ open: 0, workers: 0 });
    expect((await snapshot(page)).state).toBe('idle');
  });
}

// Each refused URL parameter: an error on the page, no silent default, no run (autostart too).
const paramCases: [string, RegExp][] = [
  ['lr=abc', /URL parameter lr=abc: learning rate must be a number/],
  ['batch=0', /URL parameter batch=0: batch size must be a whole number/],
  ['batch=100000', /URL parameter batch=100000: batch size/],
  ['echo=0', /URL parameter echo=0: echo factor/],
  ['echo=1000', /URL parameter echo=1000: echo factor/],
  ['evalEvery=-3', /URL parameter evalEvery=-3: evaluation interval/],
  ['group=99', /URL parameter group=99: scan group must be a whole number from 1 to 6/],
  ['seed=x', /URL parameter seed=x: seed must be a whole number/],
  ['cache=lots', /URL parameter cache=lots: cache size \(MiB\) must be a whole number from 0 to 65536/],
  ['shuffle=0', /URL parameter shuffle=0: shuffle buffer must be a whole number from 1 to 65536/],
  ['shuffle=abc', /URL parameter shuffle=abc: shuffle buffer must be a whole number from 1 to 65536, not "abc"/],
  ['echo=2x', /URL parameter echo=2x: echo factor/],
  ['readers=0', /URL parameter readers=0: readers must be a whole number from 1 to 16/],
  ['inflight=17', /URL parameter inflight=17: reads in flight must be a whole number from 1 to 16/],
  ['share=3/2', /URL parameter share=3\/2: share must be i\/n, the i-th of n shares/],
  ['size=4', /URL parameter size=4: image size must be a side or width x height \(like 32 or 64x48\), each 8 to 1024 pixels/],
  ['echoMode=twice', /URL parameter echoMode=twice: echo mode must be one of examples, examples-after-augment, batches/],
  ['evalMode=later', /URL parameter evalMode=later: evaluation mode must be one of live, deferred/],
  ['dataset=nope', /URL parameter dataset=nope names no dataset/],
  ['dataset=local:nope', /URL parameter dataset=local:nope names no dataset built in this browser/],
  ['model=nope', /URL parameter model=nope names no model/],
  ['model=logreg', /URL parameter model=logreg: .* reads tabular data, the chosen dataset is image/],
  ['dataset=fashion-mnist', /URL parameter dataset=fashion-mnist: not built; run npm run data:full/],
  ['manifest=nowhere/manifest.json', /URL parameter manifest=nowhere\/manifest\.json: .*nowhere\/manifest\.json: missing/],
  [
    'manifest=notaurl',
    /URL parameter manifest=notaurl: .*\/notaurl: missing \(HTTP 404\) \("notaurl" has no http:\/\/ or https:\/\/, so it was read as a path/,
  ],
  ['manifest=http://127.0.0.1:6000/manifest.json', /URL parameter manifest=http:\/\/127\.0\.0\.1:6000\/manifest\.json: port 6000 is one browsers never/],
  ['manifest=%20', /URL parameter manifest= is empty: give a manifest URL, or leave it out/],
  ['autoEcho=maybe', /URL parameter autoEcho=maybe: autoEcho is on when present \(or 1, true\), off when absent/],
];
for (const [param, message] of paramCases) {
  test(`refuses the URL parameter ${param}`, async ({ page }) => {
    await page.goto(`/?${param}&autostart=1`);
    await expect(page.locator('#backend')).toContainText('webgpu');
    await expect(page.locator('#param-error')).toContainText(message);
    await expect(page.locator('#start')).toBeDisabled();
    await page.waitForTimeout(500);
    expect(await runs(page)).toEqual({ open: 0, workers: 0 });
    expect((await snapshot(page)).state).toBe('idle');
  });
}

test('autostart=0 starts nothing; a value that is not a flag is said and starts nothing either', async ({ page }) => {
  for (const [value, error] of [
    ['0', false],
    ['soon', true],
  ] as const) {
    await page.goto(`/?autostart=${value}`);
    await expect(page.locator('#backend')).toContainText('webgpu');
    await expect(page.locator('#start')).toBeEnabled();
    if (error) {
      await expect(page.locator('#log')).toContainText('URL parameter autostart=soon: autostart is on when present');
      await expect.poll(() => new URL(page.url()).searchParams.has('autostart')).toBe(false); // the address bar drops it
    }
    await expect(page.locator('#param-error')).toBeHidden();
    await page.waitForTimeout(1500);
    expect((await snapshot(page)).state).toBe('idle');
  }
});

test("a field shows the URL's bad value as it was written, and names it, so the person sees what to fix", async ({ page }) => {
  await page.goto('/?shuffle=abc&echo=2x');
  await expect(page.locator('#shuffle-buffer')).toHaveValue('abc'); // a number input would have shown nothing
  await expect(page.locator('#shuffle-buffer-error')).toHaveText('shuffle buffer must be a whole number from 1 to 65536, not "abc"');
  await expect(page.locator('#echo')).toHaveValue('2x');
  await expect(page.locator('#start')).toBeDisabled();
  await page.locator('#shuffle-buffer').fill('256');
  await page.locator('#echo').fill('2');
  await expect(page.locator('#start')).toBeEnabled();
  await expect(page.locator('#param-error')).toBeHidden();
});

test("before the page's script runs, Start is off and says the lab is loading (a click then would be lost)", async ({ page }) => {
  await page.route(
    (url) => url.pathname.endsWith('/src/app/main.ts'),
    async (route) => {
      await new Promise((r) => setTimeout(r, 2000));
      await route.continue();
    },
  );
  await page.goto('/', { waitUntil: 'commit' }); // a module script runs before DOMContentLoaded
  await expect(page.locator('#start')).toBeDisabled();
  await expect(page.locator('#start-hint')).toHaveText('loading the lab…');
  await expect(page.locator('#start')).toBeEnabled();
});

test('URL parameters that do nothing for the chosen dataset are said, not ignored silently', async ({ page }) => {
  await page.goto('/?dataset=birdstrikes&size=32&echoMode=examples-after-augment');
  await expect(page.locator('#log')).toContainText('URL parameter size=32 is for image datasets: a TOC table is read as it is');
  await expect(page.locator('#log')).toContainText('URL parameter echoMode=examples-after-augment is for image datasets');
  await expect(page.locator('#start')).toBeEnabled();
  // Bad values of image-only parameters are said alike, above the page, and keep Start off only once an image dataset
  // would use them (before, a bad batch= was only logged as "for image datasets", and a bad echoMode= kept Start off).
  await page.goto('/?dataset=flights-250k&size=5&batch=abc&group=0&echoMode=bogus');
  await expect(page.locator('#param-error')).toContainText('URL parameter size=5: image size must be');
  await expect(page.locator('#param-error')).toContainText('URL parameter group=0');
  await expect(page.locator('#param-error')).toContainText('URL parameter batch=abc: batch size must be');
  await expect(page.locator('#param-error')).toContainText('URL parameter echoMode=bogus: echo mode must be one of');
  await expect(page.locator('#start')).toBeEnabled(); // before, group= kept it off though a table has one fidelity
  // Said so: they read as keeping Start off.
  const waits = '(not used by a table; it keeps Start off once an image dataset is chosen)';
  const lines = page.locator('#param-error > div');
  await expect(lines).toHaveCount(4);
  for (const line of await lines.all()) await expect(line).toContainText(waits);
  // Waiting, they do not hold the address bar: it follows the controls and keeps them as typed.
  await page.locator('#model').selectOption('svm');
  await expect.poll(() => page.url()).toContain('model=svm');
  for (const [k, v] of Object.entries({ size: '5', batch: 'abc', group: '0', echoMode: 'bogus' })) expect(new URL(page.url()).searchParams.get(k)).toBe(v);
  await page.locator('#dataset').selectOption({ label: 'Fashion-MNIST mini, 8k (bundled)' });
  await expect(page.locator('#param-error')).not.toContainText('not used by a table');
  await expect(page.locator('#start')).toBeDisabled();
  await expect(page.locator('#start-hint')).toContainText("Start is off: the address's echoMode=, size=, group= are refused (see above)");
  await expect(page.locator('#batch-size-error')).toContainText('batch size must be a whole number'); // the field says its own
  await page.goto('/?dataset=flights-250k&manifest=datasets/birdstrikes-toc/manifest.json');
  await expect(page.locator('#log')).toContainText('URL parameters dataset= and manifest= are both given: the manifest is read');
  // The list does not pass for what is read: its choice is shown set aside while the field holds a URL.
  await expect(page.locator('#dataset')).toHaveClass(/superseded/);
  await expect(page.locator('#dataset')).toHaveAttribute('title', /not read: the manifest URL is read instead/);
  // Choosing from the list reads the list: the field is emptied, and the address bar says the dataset.
  await page.locator('#dataset').selectOption({ label: 'Fashion-MNIST mini, 8k (bundled)' });
  await expect(page.locator('#manifest-url')).toHaveValue('');
  await expect(page.locator('#dataset')).not.toHaveClass(/superseded/);
  await expect(page.locator('#log')).toContainText("the dataset list's choice is read now; the manifest URL field");
  await expect.poll(() => new URL(page.url()).searchParams.get('manifest')).toBeNull();
  await expect.poll(() => new URL(page.url()).searchParams.get('dataset')).toBe('fashion-mnist-mini');
  await expect(page.locator('#model')).toContainText('CNN'); // the image models, not the table's
  // Typing a URL sets the list aside again: it shows the URL is read, so choosing the dataset it showed before is a change too.
  await page.locator('#manifest-url').fill('datasets/birdstrikes-toc/manifest.json');
  await expect(page.locator('#dataset')).toHaveClass(/superseded/);
  await expect(page.locator('#dataset')).toHaveValue('');
  await expect(page.locator('#dataset option:checked')).toHaveText('(the manifest URL below)');
  await page.locator('#dataset').selectOption({ label: 'Fashion-MNIST mini, 8k (bundled)' });
  await expect(page.locator('#manifest-url')).toHaveValue('');
  await expect(page.locator('#dataset')).not.toHaveClass(/superseded/);
  // Emptying the field reads the list's choice again.
  await page.locator('#manifest-url').fill('datasets/birdstrikes-toc/manifest.json');
  await expect(page.locator('#dataset')).toHaveValue('');
  await page.locator('#manifest-url').fill('');
  await expect(page.locator('#dataset')).toHaveValue('datasets/fashion-mnist-mini/manifest.json');
  await expect(page.locator('#dataset')).not.toHaveClass(/superseded/);
  // and Start with it, though the field never fired a change (it holds what it held when focused): it said "choose a dataset".
  await expect(page.locator('#start')).toBeEnabled();
  await expect(page.locator('#start-hint')).toHaveText('');
});

test('a share of the records past the split keeps Start off, saying why (it started, failed and left a 0-step run)', async ({ page }) => {
  await page.goto('/?share=33/64');
  await expect(page.locator('#start-hint')).toContainText("share=33/64 holds no records: this dataset's training split has 32 records");
  await expect(page.locator('#start')).toBeDisabled();
  await page.goto('/?share=32/64');
  await expect(page.locator('#start')).toBeEnabled();
});

test('a parameter the lab does not read is shown as ignored, with the one meant, and refuses autostart; Start stays on', async ({ page }) => {
  // Before, only a log line said so: fidelity=2 (the slider's box is "Fidelity") trained at scan group 6 unnoticed.
  await page.goto('/?model=tiny-cnn&fidelity=2&autostart=1');
  await expect(page.locator('#param-error')).toHaveText('URL parameter "fidelity" is not one the lab reads: ignored; did you mean group=?');
  await expect(page.locator('#log')).toContainText('autostart refused: the URL has errors (see above)');
  await expect(page.locator('#start')).toBeEnabled(); // nothing of a run depends on it
  await expect(page.locator('#state')).toHaveText('idle');
  await expect.poll(() => new URL(page.url()).searchParams.has('fidelity')).toBe(false); // the address drops it, and follows the controls
  // And autostart with it: a reload of the address would start the run the name refused (at the default group).
  expect(new URL(page.url()).searchParams.has('autostart')).toBe(false);
  await page.locator('#model').selectOption('mlp');
  await expect.poll(() => new URL(page.url()).searchParams.get('model')).toBe('mlp');
});

test('a parameter given twice is said in the log (the first is read), and autoEcho=false is off', async ({ page }) => {
  await page.goto('/?batch=48&batch=64&seed=1&seed=2&autoEcho=false');
  await expect(page.locator('#log')).toContainText('URL parameter batch is given 2 times (48, 64): the first is read, the others are not');
  await expect(page.locator('#log')).toContainText('URL parameter seed is given 2 times (1, 2)');
  await expect(page.locator('#start')).toBeEnabled(); // said, not a blocker (a repeated seed held Start off for good)
  await expect.poll(() => new URL(page.url()).searchParams.getAll('seed')).toEqual(['1']);
  await expect(page.locator('#batch-size')).toHaveValue('48');
  await expect(page.locator('#echo-auto')).not.toBeChecked();
  await expect(page.locator('#echo')).toBeEditable();
});

test("the URL's manifest on a server that is down when the page opens: said, read again, and Start comes on once it answers", async ({ page }) => {
  let down = true;
  await page.route('**/datasets/fashion-mnist-mini/manifest.json', (route) => (down ? route.abort('connectionrefused') : route.continue()));
  await page.goto('/?manifest=datasets/fashion-mnist-mini/manifest.json');
  await expect(page.locator('#param-error')).toContainText('could not reach the server');
  await expect(page.locator('#manifest-url-error')).toContainText('trying again every 5 s');
  await expect(page.locator('#start')).toBeDisabled();
  down = false; // the server is back: before, Start stayed off until the field was typed differently, or the page reloaded
  await expect(page.locator('#start')).toBeEnabled({ timeout: 15_000 });
  await expect(page.locator('#param-error')).toBeHidden();
  await expect(page.locator('#manifest-url-error')).toBeEmpty();
});

test('a dataset the URL names wrongly leaves none chosen, and no scan groups of another under the slider', async ({ page }) => {
  await page.goto('/?dataset=nope');
  await expect(page.locator('#param-error')).toContainText('URL parameter dataset=nope names no dataset');
  await expect(page.locator('#dataset')).toHaveValue('');
  await expect(page.locator('#fidelity-table tr')).toHaveCount(0);
  await expect(page.locator('#fidelity-label')).toHaveText(/^scan group \d+ of \d+$/);
});

test('size= sets the model input of an image dataset: decoded to it, trained at it, kept in the URL', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000&size=16&autostart');
  const s = await waitFor(page, 'the first steps', (x) => x.steps.length >= 2);
  expect(s.dataset?.inputShape).toEqual([16, 16, 1]);
  expect(new URL(page.url()).searchParams.get('size')).toBe('16');
  await page.evaluate(() => window.__lab!.stop());
});

test('share=1/2 and share=2/2: two tabs on one dataset read disjoint training records', async ({ page }) => {
  const recordsRead = async (share: string) => {
    await page.goto(`/?model=tiny-cnn&batch=32&evalEvery=1000&readers=1&cache=0&group=1&share=${share}&autostart`);
    // And a step taken: a run stopped before its first step saves nothing, and the saved run below must be share 2 of 2's.
    const s = await waitFor(page, `share ${share} reading`, (x) => x.fetches.filter((f) => f.record.startsWith('train-')).length >= 6 && x.steps.length > 0);
    await page.evaluate(() => window.__lab!.stop());
    await expect(page.locator('#dataset-info')).toContainText(`This tab trains on share ${share.replace('/', ' of ')} of the training records`);
    return new Set(s.fetches.filter((f) => f.record.startsWith('train-')).map((f) => f.record));
  };
  const first = await recordsRead('1/2');
  const second = await recordsRead('2/2');
  expect(first.size).toBeGreaterThanOrEqual(6);
  expect(second.size).toBeGreaterThanOrEqual(6);
  expect([...first].filter((r) => second.has(r))).toEqual([]);
  // The saved run (share 2 of 2's, stopped last) says its share; continued from a page that asks another, it keeps its own and says so.
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000&readers=1&cache=0&group=1&share=1/2');
  await expect(page.locator('#resume-text')).toContainText('share 2 of 2');
  await page.locator('#resume-go').click();
  await expect(page.locator('#log')).toContainText("the saved run trains on share 2 of 2; the URL's share=1/2 is not used for it");
  await expect(page.locator('#dataset-info')).toContainText('This tab trains on share 2 of 2');
  // The address bar says the share trained, so a reload's next Start trains on it too.
  await expect.poll(() => new URL(page.url()).searchParams.get('share')).toBe('2/2');
  await page.evaluate(() => window.__lab!.stop());
});

test('inflight= sets the reads each reader has out, and the control changes them mid-run', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000&readers=1&inflight=2&autostart');
  await waitFor(page, 'a run reading with 2 in flight', (x) => x.pipeline?.requestsInFlight === 2);
  await page.locator('#requests-in-flight').fill('6');
  const s = await waitFor(page, 'the pipeline taking 6', (x) => x.pipeline?.requestsInFlight === 6);
  expect(s.state).toBe('running');
  expect(s.pipeline!.readsOut).toBeLessThanOrEqual(6);
  expect(new URL(page.url()).searchParams.get('inflight')).toBe('6');
  await page.evaluate(() => window.__lab!.stop());
});

test('evalMode=deferred: no evaluation while training, the accuracy tile counts the saved steps; Stop evaluates them at their steps and frees them', async ({
  page,
}) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=10&evalMode=deferred');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await expect(page.locator('#eval-mode')).toHaveValue('deferred');
  const before = await page.evaluate(() => window.__lab!.memory());
  await page.evaluate(() => window.__lab!.start());
  const s = await waitFor(page, '25 steps', (x) => x.steps.length >= 25);
  expect(s.evals).toEqual([]);
  await expect(page.locator('#m-acc')).toContainText('pending');
  // The empty accuracy chart says why it is empty (it was a blank box for the whole run).
  const note = page.locator('#chart-acc .chart-note');
  await expect(note).toBeVisible();
  await expect(note).toHaveText(/^Evaluated when the run stops: the weights of \d+ steps? are kept\.$/);
  await expect(page.locator('#chart-acc')).toHaveAttribute('aria-label', /^test accuracy chart: Evaluated when the run stops/);
  await page.evaluate(() => window.__lab!.stop());
  await expect(note).toBeHidden();
  const done = await snapshot(page);
  expect(done.state).toBe('stopped');
  const last = done.steps.at(-1)!.step;
  expect(done.evals.map((e) => e.step)).toEqual(Array.from({ length: Math.floor(last / 10) }, (_, i) => 10 * (i + 1)));
  // Each evaluation carries its own step's training time, not the time it was done.
  for (const e of done.evals) expect(e.time).toBe(done.steps.find((m) => m.step === e.step)!.time);
  expect(done.evals.every((e) => e.deferred && e.accuracy > 0)).toBe(true);
  await expect(page.locator('#m-acc')).toHaveText(/^\d+\.\d%$/);
  await expect(page.locator('#m-acc-base')).toHaveText(/always “.+”: \d+\.\d%$/);
  await expect.poll(() => page.evaluate(() => window.__lab!.memory())).toEqual(before);
  // Continued after a reload: the steps Stop evaluated are history, not pending again (it said "3 pending" over an empty
  // chart, and the next Stop evaluated them twice), and the tile keeps its baseline line.
  const shown = await page.locator('#m-acc').textContent();
  const baseLine = await page.locator('#m-acc-base').textContent();
  await page.reload();
  await expect(page.locator('#resume-text')).toContainText(`step ${last}`);
  await page.locator('#resume-go').click();
  await waitFor(page, 'a step of the continued run', (x) => x.steps.length >= 1);
  // the saved accuracy, then with the continued run's own steps kept for later: none of the old ones is pending again.
  // The accuracy shown is the last saved step's, and says so beside the steps pending (it read as the step shown beside it).
  const savedAt = 10 * Math.floor(last / 10);
  await expect(page.locator('#m-acc')).toHaveText(new RegExp(`^${shown!.replace('.', '\\.')}( at step ${savedAt} · \\d+ pending)?$`));
  const pendingNow = Number((await page.locator('#m-acc').textContent())?.match(/(\d+) pending/)?.[1] ?? 0);
  const stepNow = (await snapshot(page)).steps.at(-1)!.step; // read after: the steps only grow
  expect(pendingNow).toBeLessThanOrEqual(Math.floor(stepNow / 10) - Math.floor(last / 10));
  await expect(page.locator('#m-acc-base')).toHaveText(baseLine!);
  await expect(page.locator('#chart-acc')).toHaveAttribute('aria-label', new RegExp(`^test accuracy chart: step 10 to ${10 * Math.floor(last / 10)}, `));
  const more = await waitFor(page, '10 more steps', (x) => (x.steps.at(-1)?.step ?? 0) >= last + 10);
  expect(more.evals).toEqual([]);
  await expect(page.locator('#m-acc')).toHaveText(new RegExp(`^${shown!.replace('.', '\\.')} at step ${savedAt} · \\d+ pending$`));
  await page.evaluate(() => window.__lab!.stop());
  const end = (await snapshot(page)).steps.at(-1)!.step;
  const evaluated = (await snapshot(page)).evals.map((e) => e.step);
  expect(evaluated).toEqual(Array.from({ length: Math.floor(end / 10) - Math.floor(last / 10) }, (_, i) => 10 * (Math.floor(last / 10) + i + 1)));
});

test('lists only datasets that exist; the others show the command that builds them', async ({ page }) => {
  const missing: string[] = [];
  page.on('response', (r) => void (r.status() === 404 && missing.push(r.url())));
  await page.goto('/');
  await expect(page.locator('#backend')).toContainText('webgpu');
  // Which datasets are built depends on the checkout (the bundled three always are): ask the server.
  for (const d of DATASETS) {
    const built = (await page.request.get(d.manifest)).status() === 200;
    const option = page.locator(`#dataset option[value="${d.manifest}"]`);
    if (built) await expect(option).toBeEnabled();
    else {
      await expect(option).toBeDisabled();
      await expect(option).toContainText(`not built, run ${d.build}`);
    }
  }
  for (const bundled of DATASETS.filter((d) => !d.build)) await expect(page.locator(`#dataset option[value="${bundled.manifest}"]`)).toBeEnabled();
  // The server's listing of data/ said which are built: the page asked for no manifest that is not there (a red 404 in the console).
  expect(missing).toEqual([]);
  // Choosing a tabular dataset offers only the models that read tables.
  await page.locator('#dataset').selectOption('datasets/birdstrikes-toc/manifest.json');
  const models = await page.locator('#model option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  expect(models).toEqual(['logreg', 'svm', 'toc-mlp']);
  await expect(page.locator('#batch-size')).toBeDisabled();
});

test('the URL follows the controls, and reloading it restores them', async ({ page }) => {
  await page.goto('/?model=mlp&batch=64');
  await page.locator('#echo').fill('2');
  await page.locator('#learning-rate').fill('0.01');
  await page.locator('#echo-mode').selectOption('batches');
  await page.locator('#shuffle-buffer').fill('0'); // a bad value is not written: the URL keeps the last good one (none: the default)
  await page.locator('#requests-in-flight').fill('2');
  await expect.poll(() => new URL(page.url()).search).toBe('?dataset=fashion-mnist-mini&model=mlp&batch=64&lr=0.01&echo=2&inflight=2&echoMode=batches');
  await page.reload();
  await expect(page.locator('#model')).toHaveValue('mlp');
  await expect(page.locator('#batch-size')).toHaveValue('64');
  await expect(page.locator('#learning-rate')).toHaveValue('0.01');
  await expect(page.locator('#echo')).toHaveValue('2');
  await expect(page.locator('#echo-mode')).toHaveValue('batches');
  await expect(page.locator('#shuffle-buffer')).toHaveValue('512');
  await expect(page.locator('#requests-in-flight')).toHaveValue('2');
});
