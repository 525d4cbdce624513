// Models saved and loaded in tfjs's formats, as a person does it: pause a run
// right after an evaluation, save the model in the browser and download it,
// reload, load it (from the browser, then from the files) and see it evaluate
// to the same accuracy before it trains on.
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { snapshot, waitFor } from './helpers.js';

/**
 * Waits for the run's next evaluation and presses Pause there: the pause takes effect when the evaluation ends, and
 * meanwhile the button says it was heard (before, it said "Pause" and did nothing visible for the evaluation's seconds).
 */
async function pauseAtAnEvaluation(page: Page): Promise<void> {
  const button = await page.waitForFunction(
    () => {
      if (window.__lab!.progress().state !== 'evaluating') return false;
      const pause = document.querySelector<HTMLButtonElement>('#pause')!;
      pause.click();
      // Pressed again meanwhile it does nothing, and says so to a screen reader; it keeps the keyboard's focus (not disabled).
      const state = window.__lab!.progress().state;
      return { text: pause.textContent, ariaDisabled: pause.getAttribute('aria-disabled'), disabled: pause.disabled, state };
    },
    undefined,
    { polling: 'raf', timeout: 120_000 },
  );
  expect(await button.jsonValue()).toEqual({ text: 'Pausing…', ariaDisabled: 'true', disabled: false, state: 'evaluating' });
  await expect(page.locator('#state')).toHaveText('paused', { timeout: 30_000 });
  await expect(page.locator('#pause')).toHaveText('Resume');
  await expect(page.locator('#pause')).toBeEnabled();
}

test('a saved model reloads, from the browser and from its files, and evaluates to the same accuracy', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=10');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#start').click();
  await waitFor(page, 'a first evaluation', (s) => s.evals.length >= 1);
  await pauseAtAnEvaluation(page);
  const evaluated = (await snapshot(page)).evals.at(-1)!;
  expect(evaluated.accuracy).toBeGreaterThan(0.3); // trained, not a guess among 10 classes

  await page.locator('#model-save').click();
  await expect(page.locator('#model-status')).toContainText('saved in this browser');
  await expect(page.locator('#model-status')).not.toContainText('replacing');
  // Saved again at the same step: the same name, and the line says the first is replaced (before, it said nothing of it).
  await page.locator('#model-save').click();
  await expect(page.locator('#model-status')).toContainText(/, replacing the model saved under that name at \d{4}-\d\d-\d\d \d\d:\d\d$/);
  // A saved model's long name in its list must not widen the page on a phone, nor be cut off there: the entry is the
  // name, its date is in the tooltip.
  await page.setViewportSize({ width: 390, height: 860 });
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390); // once the charts follow
  const saved = page.locator('#model-saved');
  const wholeWidth = () =>
    saved.evaluate((s: HTMLSelectElement) => {
      const shown = s.getBoundingClientRect().width;
      s.style.maxWidth = 'none'; // the width the entry wants
      const whole = s.getBoundingClientRect().width;
      s.style.maxWidth = '';
      return whole - shown;
    });
  await expect.poll(wholeWidth).toBeLessThanOrEqual(0.5);
  await expect(saved.locator('option').first()).toHaveAttribute('title', /saved \d{4}-\d\d-\d\d \d\d:\d\d$/);
  await page.setViewportSize({ width: 1400, height: 900 });
  const downloads: { name: string; bytes: Buffer }[] = [];
  page.on('download', async (d) => downloads.push({ name: d.suggestedFilename(), bytes: readFileSync((await d.path())!) }));
  await page.locator('#model-download').click();
  await expect.poll(() => downloads.length).toBe(2);
  const modelJson = JSON.parse(downloads.find((d) => d.name.endsWith('.json'))!.bytes.toString('utf8'));
  expect(modelJson.modelTopology.bytelab.modelId).toBe('tiny-cnn');
  expect(modelJson.weightsManifest[0].weights.length).toBeGreaterThan(0);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });

  // After a reload: load from the browser's store.
  await page.reload();
  await expect(page.locator('#model-saved option')).toHaveCount(1);
  await page.locator('#model-load').click();
  const loaded = await waitFor(page, 'the loaded model evaluated', (s) => s.evals.length >= 1);
  expect(loaded.evals[0]!.step).toBe(0);
  expect(loaded.evals[0]!.accuracy).toBeCloseTo(evaluated.accuracy, 6);
  await waitFor(page, 'training on', (s) => s.steps.length >= 2);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });

  // From the downloaded files; and a file that is not a bytelab model is refused, saying so.
  const files = downloads.map((d) => ({ name: d.name, mimeType: 'application/octet-stream', buffer: d.bytes }));
  await page.locator('#model-files').setInputFiles(files);
  const fromFiles = await waitFor(page, 'the model from files evaluated', (s) => s.evals.length >= 1 && s.evals[0]!.step === 0);
  expect(fromFiles.evals[0]!.accuracy).toBeCloseTo(evaluated.accuracy, 6);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const other = { modelTopology: { class_name: 'Sequential' }, weightsManifest: [{ paths: ['w.bin'], weights: [] }] };
  await page.locator('#model-files').setInputFiles([
    { name: 'other.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(other)) },
    { name: 'w.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(0) },
  ]);
  await expect(page.locator('#model-status')).toContainText('other.json: not a bytelab model');
});

test('model files keep their dataset relative to the page, load an old file and a renamed .bin, and refuse what they cannot load, saying why', async ({
  page,
}) => {
  test.setTimeout(240_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const status = page.locator('#model-status');
  const clearStatus = () => status.evaluate((el) => (el.textContent = ''));
  await page.goto('/?dataset=flights-250k&model=logreg&evalEvery=5');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#start').click();
  await waitFor(page, 'a few steps', (s) => s.steps.length >= 3);

  // Saved and downloaded as it trains: single dashes in the name ("Flights 250k"), the dataset relative to the page.
  await page.locator('#model-save').click();
  await expect(status).toContainText(/saved in this browser as logreg-Flights-250k-step\d+$/);
  const downloads: { name: string; mimeType: string; buffer: Buffer }[] = [];
  page.on('download', async (d) =>
    downloads.push({ name: d.suggestedFilename(), mimeType: 'application/octet-stream', buffer: readFileSync((await d.path())!) }),
  );
  await page.locator('#model-download').click();
  await expect.poll(() => downloads.length).toBe(2);
  const json = downloads.find((d) => d.name.endsWith('.json'))!;
  const bin = downloads.find((d) => d.name.endsWith('.bin'))!;
  expect(json.name).toMatch(/^logreg-Flights-250k-step\d+\.json$/);
  const model = JSON.parse(json.buffer.toString('utf8'));
  expect(model.modelTopology.bytelab.dataset.manifestUrl).toBe('datasets/flights-250k-toc/manifest.json');

  // While the run goes on, a model is not loaded, and the model's own status line says so.
  const stopFirst = 'stop the run first: a loaded model starts a run of its own';
  await page.locator('#model-load').click();
  await expect(status).toHaveText(stopFirst);
  await clearStatus();
  await page.locator('#model-files').setInputFiles([json, bin]);
  await expect(status).toHaveText(stopFirst);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });

  // Files that are not a model, or name another model or none: refused, naming the file and what is wrong.
  const naming = (name: string, modelId: string) => ({
    name,
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify({ ...model, modelTopology: { bytelab: { ...model.modelTopology.bytelab, modelId } } })),
  });
  const refusals: [{ name: string; mimeType: string; buffer: Buffer }, string][] = [
    [{ name: 'notjson.json', mimeType: 'application/json', buffer: Buffer.from('this is not json') }, 'notjson.json is not a model file: '],
    [naming('cnn.json', 'tiny-cnn'), 'cnn.json: it names Tiny CNN (1 strided conv), which reads image data'],
    [naming('nope.json', 'nope'), 'nope.json: unknown model "nope"'],
    [naming('mlp.json', 'toc-mlp'), 'mlp.json: its weights do not fit MLP on TOC'],
  ];
  for (const [file, message] of refusals) {
    await clearStatus();
    await page.locator('#model-files').setInputFiles([file, bin]);
    await expect(status).toContainText(message);
  }
  await expect(page.locator('#state')).toHaveText('stopped');

  // From the browser's store: the dataset's relative address is this page's Flights.
  await page.selectOption('#dataset', 'datasets/birdstrikes-toc/manifest.json');
  await page.locator('#model-load').click();
  // Its own dataset replaces the one chosen, and the line says so (before: without a word).
  await expect(status).toContainText(
    /^loaded logreg-Flights-250k-step\d+: evaluating, then training on; its dataset, Flights 250k, is chosen in place of Bird strikes/,
  );
  await waitFor(page, 'the saved model evaluated', (s) => s.evals.length >= 1 && s.evals[0]!.step === 0);
  await expect(page.locator('#dataset')).toHaveValue('datasets/flights-250k-toc/manifest.json');
  await expect(page.locator('#manifest-url')).toHaveValue('');
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  // Before, it still said "evaluating, then training on".
  await expect(status).toHaveText(/^logreg-Flights-250k-step\d+ was loaded; its run (trained [\d,]+ steps? from it, then )?stopped$/);

  // A file saved before addresses were relative (the page's, on another port), with its .bin renamed by the browser:
  // this page's Flights is read, and the status line says so.
  const old = structuredClone(model);
  old.modelTopology.bytelab.dataset.manifestUrl = 'http://localhost:38995/datasets/flights-250k-toc/manifest.json';
  await page.selectOption('#dataset', 'datasets/birdstrikes-toc/manifest.json');
  await page.locator('#model-files').setInputFiles([
    { name: 'old.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(old)) },
    { ...bin, name: bin.name.replace('.weights.bin', '.weights (1).bin') },
  ]);
  await expect(status).toContainText(/^loaded old\.json: evaluating, then training on; its dataset, Flights 250k, is chosen in place of Bird strikes/);
  await expect(status).toContainText('; its dataset address http://localhost:38995/');
  await waitFor(page, 'the old file evaluated', (s) => s.evals.length >= 1 && s.evals[0]!.step === 0);
  await expect(page.locator('#dataset')).toHaveValue('datasets/flights-250k-toc/manifest.json');
  await expect(page.locator('#manifest-url')).toHaveValue('');
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  expect(pageErrors).toEqual([]);
});

test("a model made at another image size trains at that size; one whose dataset is gone says its run failed and puts the person's choice back", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&size=16');
  await page.locator('#start').click();
  await waitFor(page, 'a few steps', (s) => s.steps.length >= 2);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const downloads: { name: string; mimeType: string; buffer: Buffer }[] = [];
  page.on('download', async (d) =>
    downloads.push({ name: d.suggestedFilename(), mimeType: 'application/octet-stream', buffer: readFileSync((await d.path())!) }),
  );
  await page.locator('#model-download').click();
  await expect.poll(() => downloads.length).toBe(2);

  // Loaded where the address names no size: before, the run opened at the dataset's 28 x 28 and failed on the 16 x 16 weights.
  // And on a table: its image dataset is chosen, said, and the image controls come back (a table's echo mode, whole
  // batches, went into the image model's run).
  await page.goto('/?dataset=flights-250k&evalEvery=5');
  await expect(page.locator('#echo-mode')).toHaveValue('batches');
  await page.locator('#model-files').setInputFiles(downloads);
  await waitFor(page, 'the model evaluated and training on', (s) => s.evals.length >= 1 && s.steps.length >= 2);
  expect(new URL(page.url()).searchParams.get('size')).toBe('16');
  await expect(page.locator('#model-status')).toContainText(/evaluating, then training on; its dataset, Fashion-MNIST mini.*, is chosen in place of Flights/);
  await expect(page.locator('#echo-mode')).not.toHaveValue('batches');
  // Its row says it started from a loaded model (before, nothing set it apart from a run from scratch).
  const loadedRun = (await page.evaluate(() => window.__lab!.records())).find((r) => r.name.startsWith('tiny-cnn (loaded) · '));
  expect(loadedRun?.settings.echoMode).toBe('examples');
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });

  // Its dataset gone from the server: the model's line says the run failed, not "loaded … training on" over a failed run.
  // And the person's own choice comes back (the controls and the address kept the model's unreadable dataset, Start off after
  // a reload); so does it when the model's dataset address is refused before a run opens (port 9).
  await page.goto('/?dataset=flights-250k&model=svm&echo=2');
  await expect(page.locator('#start')).toBeEnabled();
  const setup = async () => ({
    dataset: await page.locator('#dataset').inputValue(),
    manifest: await page.locator('#manifest-url').inputValue(),
    model: await page.locator('#model').inputValue(),
    echo: await page.locator('#echo').inputValue(),
    address: new URL(page.url()).search,
  });
  const chosen = await setup();
  expect(chosen).toMatchObject({ model: 'svm', echo: '2', manifest: '', address: '?dataset=flights-250k&model=svm&echo=2' });
  const json = downloads.find((d) => d.name.endsWith('.json'))!;
  const bin = downloads.find((d) => d !== json)!;
  const pointedAt = (url: string) => {
    const model = JSON.parse(json.buffer.toString('utf8'));
    model.modelTopology.bytelab.dataset.manifestUrl = url;
    return { ...json, buffer: Buffer.from(JSON.stringify(model)) };
  };
  await page.locator('#model-files').setInputFiles([pointedAt('datasets/gone/manifest.json'), bin]);
  await expect(page.locator('#model-status')).toContainText(/was loaded, but its run failed: .*404/, { timeout: 30_000 });
  await expect(page.locator('#log')).toContainText("the loaded model's run failed before its first step: the dataset and model chosen before it are back");
  await expect.poll(setup).toEqual(chosen);
  await expect(page.locator('#start')).toBeEnabled();
  await page.locator('#model-files').setInputFiles([pointedAt('http://127.0.0.1:9/nothere/manifest.json'), bin]);
  await expect(page.locator('#model-status')).toContainText(/^not started: .*port 9/);
  expect(await setup()).toEqual(chosen);
  await expect(page.locator('#start')).toBeEnabled();
  // Its dataset's server never answers, and the person stops the run: the same.
  await page.route('**/datasets/hangs/**', () => undefined);
  await page.locator('#model-files').setInputFiles([pointedAt('datasets/hangs/manifest.json'), bin]);
  await expect(page.locator('#state')).toContainText('loading');
  await page.locator('#stop').click();
  await expect(page.locator('#log')).toContainText("the loaded model's run stopped before its first step: the dataset and model chosen before it are back");
  await expect.poll(setup).toEqual(chosen);
  await expect(page.locator('#start')).toBeEnabled();
  expect(pageErrors).toEqual([]);
});
