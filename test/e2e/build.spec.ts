// Building a dataset in the browser: drop a folder of JPEGs and PNGs (one
// subfolder per class), get a PCR dataset in IndexedDB, train on it at once,
// find it again after a reload, download it as a .zip.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { unzipSync } from 'fflate';
import { waitFor } from './helpers.js';

function makeFolder(): string {
  const root = join(mkdtempSync(join(tmpdir(), 'bytelab-drop-')), 'shapes');
  const ppm = join(root, '..', 'x.ppm');
  for (const [c, cls] of ['red', 'blue'].entries()) {
    mkdirSync(join(root, cls), { recursive: true });
    for (let i = 0; i < 12; i++) {
      const [w, h] = [48 + 4 * i, 40 + 2 * i];
      const px = Buffer.alloc(w * h * 3);
      for (let p = 0; p < w * h; p++) px.set(c === 0 ? [200 + (p % 50), 30, 40] : [30, 60, 200 + (p % 50)], 3 * p);
      writeFileSync(ppm, Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), px]));
      writeFileSync(join(root, cls, `${i}.jpg`), execFileSync('cjpeg', ['-quality', '85', ppm]));
    }
  }
  writeFileSync(join(root, 'red', 'broken.jpg'), 'this is not a JPEG');
  return root;
}

test('a dropped folder becomes a dataset in this browser, trains, survives a reload, downloads', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&evalEvery=5');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#build-size').fill('32x32');
  await page.locator('#build-folder').setInputFiles(makeFolder());
  await expect(page.locator('#build-status')).toContainText('built "shapes"', { timeout: 60_000 });
  await expect(page.locator('#build-status')).toContainText('2 classes, colour');
  await expect(page.locator('#build-status')).toContainText('1 left out');
  await expect(page.locator('#log')).toContainText('broken.jpg left out');
  expect(await page.locator('#dataset').inputValue()).toMatch(/^idb:\/\/local\/.+\/manifest\.json$/);

  await page.locator('#start').click();
  const s = await waitFor(page, 'training on the built dataset', (x) => x.steps.length >= 6 && x.evals.length > 0);
  expect(s.dataset).toMatchObject({ kind: 'image', name: 'shapes', classes: ['blue', 'red'], inputShape: [32, 32, 3] });
  expect(s.steps.every((x) => Number.isFinite(x.loss))).toBe(true);
  await page.screenshot({ path: 'test-results/lab-built-dataset.png' });
  await page.evaluate(() => window.__lab!.stop());

  await page.reload();
  await expect(page.locator('#dataset optgroup[label="Built in this browser"] option')).toHaveCount(1);
  await page.locator('#dataset').selectOption({ label: (await page.locator('#dataset optgroup[label="Built in this browser"] option').textContent())! });
  const download = page.waitForEvent('download');
  await page.locator('#build-download').click();
  const zip = unzipSync(new Uint8Array(readFileSync((await (await download).path())!)));
  const manifest = JSON.parse(new TextDecoder().decode(zip['shapes/manifest.json']!));
  expect(manifest).toMatchObject({ format: 'bytelab-pcr', variableSize: true, scanGroups: 10, classes: ['blue', 'red'] });
  expect(Object.keys(zip).filter((f) => f.endsWith('.pcr')).length).toBeGreaterThan(0);
});

test('dropping files rather than a folder on "Build a dataset" says what to drop', async ({ page }) => {
  await page.goto('/');
  // Pages cannot make a DataTransfer that holds a folder; the walk of a real one is tested in test/unit/app/dropped-folder.test.ts.
  const dataTransfer = await page.evaluateHandle(() => {
    const dt = new DataTransfer();
    dt.items.add(new File(['x'], 'cat.jpg', { type: 'image/jpeg' }));
    return dt;
  });
  await page.dispatchEvent('#build-panel', 'dragover', { dataTransfer });
  await expect(page.locator('#build-panel')).toHaveClass(/drop-target/);
  await page.dispatchEvent('#build-panel', 'drop', { dataTransfer });
  await expect(page.locator('#build-status')).toHaveText('drop one folder, with one subfolder of images per class');
  await expect(page.locator('#build-panel')).not.toHaveClass(/drop-target/);
});
