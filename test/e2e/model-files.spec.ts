// Models saved and loaded in tfjs's formats, as a person does it: pause a run
// right after an evaluation, save the model in the browser and download it,
// reload, load it (from the browser, then from the files) and see it evaluate
// to the same accuracy before it trains on.
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { snapshot, waitFor } from './helpers.js';

/** Waits for the run's next evaluation and pauses it there: the pause takes effect when the evaluation ends. */
async function pauseAtAnEvaluation(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      if (window.__lab!.progress().state !== 'evaluating') return false;
      window.__lab!.pause();
      return true;
    },
    undefined,
    { polling: 'raf', timeout: 120_000 },
  );
  await expect(page.locator('#state')).toHaveText('paused', { timeout: 30_000 });
}

test('a saved model reloads, from the browser and from its files, and evaluates to the same accuracy', async ({ page }) => {
  test.setTimeout(240_000);
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=10');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#start').click();
  await waitFor(page, 'a first evaluation', (s) => s.evals.length >= 1);
  await pauseAtAnEvaluation(page);
  const saved = (await snapshot(page)).evals.at(-1)!;
  expect(saved.accuracy).toBeGreaterThan(0.3); // trained, not a guess among 10 classes

  await page.locator('#model-save').click();
  await expect(page.locator('#model-status')).toContainText('saved in this browser');
  // A saved model's long name in its list must not widen the page on a phone.
  await page.setViewportSize({ width: 390, height: 860 });
  await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390); // once the charts follow
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
  expect(loaded.evals[0]!.accuracy).toBeCloseTo(saved.accuracy, 6);
  await waitFor(page, 'training on', (s) => s.steps.length >= 2);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });

  // From the downloaded files; and a file that is not a bytelab model is refused, saying so.
  const files = downloads.map((d) => ({ name: d.name, mimeType: 'application/octet-stream', buffer: d.bytes }));
  await page.locator('#model-files').setInputFiles(files);
  const fromFiles = await waitFor(page, 'the model from files evaluated', (s) => s.evals.length >= 1 && s.evals[0]!.step === 0);
  expect(fromFiles.evals[0]!.accuracy).toBeCloseTo(saved.accuracy, 6);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const other = { modelTopology: { class_name: 'Sequential' }, weightsManifest: [{ paths: ['w.bin'], weights: [] }] };
  await page.locator('#model-files').setInputFiles([
    { name: 'other.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(other)) },
    { name: 'w.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(0) },
  ]);
  await expect(page.locator('#model-status')).toContainText('other.json: not a bytelab model');
});
