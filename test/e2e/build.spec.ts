// Building a dataset in the browser: drop a folder of JPEGs and PNGs (one
// subfolder per class), get a PCR dataset in IndexedDB, train on it at once,
// find it again after a reload, download it as a .zip.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { encode as encodePng } from 'fast-png';
import { unzipSync } from 'fflate';
import { snapshot, waitFor } from './helpers.js';

/** `n` small JPEGs of one colour in root/cls. */
function writeJpegs(root: string, cls: string, n: number, colour: number): void {
  const ppm = join(root, '..', 'x.ppm');
  mkdirSync(join(root, cls), { recursive: true });
  for (let i = 0; i < n; i++) {
    const [w, h] = [48 + 4 * i, 40 + 2 * i];
    const px = Buffer.alloc(w * h * 3);
    for (let p = 0; p < w * h; p++) px.set(colour === 0 ? [200 + (p % 50), 30, 40] : [30, 60, 200 + (p % 50)], 3 * p);
    writeFileSync(ppm, Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), px]));
    writeFileSync(join(root, cls, `${i}.jpg`), execFileSync('cjpeg', ['-quality', '85', ppm]));
  }
}

/** A folder `name` with the class folders red and blue, `perClass` JPEGs each. */
function makeFolder(name = 'shapes', perClass = 12): string {
  const root = join(mkdtempSync(join(tmpdir(), 'bytelab-drop-')), name);
  for (const [c, cls] of ['red', 'blue'].entries()) writeJpegs(root, cls, perClass, c);
  writeFileSync(join(root, 'red', 'broken.jpg'), 'this is not a JPEG');
  return root;
}

test('a dropped folder becomes a dataset in this browser, trains, survives a reload, downloads', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&evalEvery=5');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#build-size').fill('32x32');
  await page.locator('#build-folder').setInputFiles(makeFolder());
  await expect(page.locator('#build-status')).toContainText('built "shapes"', { timeout: 60_000 });
  await expect(page.locator('#build-status')).toContainText('2 classes (blue, red), colour');
  await expect(page.locator('#build-status')).toContainText('1 left out');
  await expect(page.locator('#log')).toContainText('broken.jpg left out');
  const built = await page.locator('#dataset').inputValue();
  expect(built).toMatch(/^idb:\/\/local\/.+\/manifest\.json$/);
  // The address bar names it, so a reload (or the URL kept) opens it again.
  const id = built.replace(/^idb:\/\/local\//, '').replace(/\/manifest\.json$/, '');
  await expect.poll(() => new URL(page.url()).searchParams.get('dataset')).toBe(`local:${id}`);
  // Its own scan groups under the slider before any run (colour: 10), not the last dataset's.
  await expect(page.locator('#fidelity-label')).toContainText(/scan group 10 of 10: \d+ bytes\/image/);

  await expect(page.locator('#build-delete')).toBeEnabled();
  await page.locator('#start').click();
  // The run reads it: it cannot be deleted under the run.
  await expect(page.locator('#build-delete')).toBeDisabled();
  const s = await waitFor(page, 'training on the built dataset', (x) => x.steps.length >= 6 && x.evals.length > 0);
  expect(s.dataset).toMatchObject({ kind: 'image', name: 'shapes', classes: ['blue', 'red'], inputShape: [32, 32, 3] });
  expect(s.steps.every((x) => Number.isFinite(x.loss))).toBe(true);
  // Its test split is a few images: the log says what its accuracy is worth.
  await expect(page.locator('#log')).toContainText(/the test split has only \d examples?: accuracy moves in steps of \d+\.\d% and says little/);
  await page.screenshot({ path: 'test-results/lab-built-dataset.png' });
  await page.evaluate(() => window.__lab!.stop());
  await page.locator('#model-save').click();
  await expect(page.locator('#model-status')).toContainText('saved in this browser');
  // The runs table names it as it was built, not with the size the list shows beside the name.
  await expect(page.locator('#runs-table tbody tr td:nth-child(2)').first()).toHaveAttribute('title', /^shapes, /);

  await page.reload();
  await expect(page.locator('#dataset optgroup[label="Built in this browser"] option')).toHaveCount(1);
  await expect(page.locator('#dataset')).toHaveValue(built);
  const download = page.waitForEvent('download');
  await page.locator('#build-download').click();
  const zip = unzipSync(new Uint8Array(readFileSync((await (await download).path())!)));
  const manifest = JSON.parse(new TextDecoder().decode(zip['shapes/manifest.json']!));
  expect(manifest).toMatchObject({ format: 'bytelab-pcr', variableSize: true, scanGroups: 10, classes: ['blue', 'red'] });
  expect(Object.keys(zip).filter((f) => f.endsWith('.pcr')).length).toBeGreaterThan(0);

  // Deleted, the stopped run on it is no longer offered to continue (Continue failed on the missing dataset), only to discard.
  await expect(page.locator('#resume-text')).toContainText(/Saved run "[^"]+": shapes/);
  page.once('dialog', (d) => void d.accept());
  await page.locator('#build-delete').click();
  const gone = async () => {
    await expect(page.locator('#resume-text')).toContainText('Its dataset was built in this browser and has been deleted: it cannot be continued.');
    await expect(page.locator('#resume-go')).toBeHidden();
    await expect(page.locator('#resume-discard')).toBeVisible();
  };
  await gone();
  await page.reload();
  await gone();
  // A model saved from a run on it is not started either, and the controls stay as they were (before, the manifest field
  // got its idb:// address and Start was refused there).
  await page.locator('#model-load').click();
  await expect(page.locator('#model-status')).toContainText("its dataset, shapes, was built in a browser and is not in this one's built datasets");
  await expect(page.locator('#manifest-url')).toHaveValue('');
  await expect(page.locator('#start')).toBeEnabled();
  await expect(page.locator('#state')).toHaveText('idle');
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

test('the model input size is checked as it is typed; a size the lab cannot train at builds nothing', async ({ page }) => {
  await page.goto('/');
  const size = page.locator('#build-size');
  const error = page.locator('#build-size-error');
  await expect(size).toHaveAttribute('aria-invalid', 'false');
  await expect(size).toHaveAttribute('aria-describedby', /build-size-error/);
  const folder = makeFolder('sizes', 3);
  for (const bad of ['0x0', '2000x2000', '64x', 'abc']) {
    await size.fill(bad);
    await expect(error).toContainText(`each 8 to 1024 pixels, not "${bad}"`);
    await expect(size).toHaveAttribute('aria-invalid', 'true');
    await page.locator('#build-folder').setInputFiles(folder);
    await expect(page.locator('#build-status')).toHaveText(`not built: ${await error.textContent()}`);
  }
  await expect(page.locator('#dataset optgroup[label="Built in this browser"]')).toHaveCount(0);
  await size.fill('24');
  await expect(error).toBeEmpty();
  await expect(size).toHaveAttribute('aria-invalid', 'false');
  await page.locator('#build-folder').setInputFiles(folder);
  await expect(page.locator('#build-status')).toContainText('built "sizes"', { timeout: 60_000 });
});

const builtHere = (page: Page) => page.locator('#dataset optgroup[label="Built in this browser"] option');

test('an empty folder says it is empty', async ({ page }) => {
  await page.goto('/');
  const empty = join(mkdtempSync(join(tmpdir(), 'bytelab-drop-')), 'emptydir');
  mkdirSync(empty);
  await page.locator('#build-folder').setInputFiles(empty);
  await expect(page.locator('#build-status')).toHaveText('not built: the folder is empty: it has no class folders with images');
  await expect(page.locator('#log')).toContainText('dataset not built: the folder is empty');
});

test('files the build cannot read are counted and named, a few then "and N more", with why', async ({ page }) => {
  await page.goto('/');
  await page.locator('#build-size').fill('16x16');
  const mixed = makeFolder('mixed', 3);
  for (const f of ['x.gif', 'y.webp', 'notes.txt', 'more.txt', 'last.txt']) writeFileSync(join(mixed, 'blue', f), 'not an image the build reads');
  await page.locator('#build-folder').setInputFiles(mixed);
  await expect(page.locator('#build-status')).toContainText('built "mixed"', { timeout: 60_000 });
  await expect(page.locator('#build-status')).toContainText(
    '6 left out (not an image type the build reads (JPEG or PNG): mixed/blue/last.txt, mixed/blue/more.txt, mixed/blue/notes.txt and 2 more; ' +
      'could not be decoded: mixed/red/broken.jpg)',
  );
  await expect(page.locator('#log')).toContainText('mixed/blue/y.webp left out: not an image type the build reads');
  await expect(page.locator('#log')).toContainText('mixed/red/broken.jpg left out: could not be decoded: ');
});

test('a small folder gives each class a test image: 2 classes of 12 PNGs named circles-0.png .. got none, and no accuracy', async ({ page }) => {
  await page.goto('/');
  await page.locator('#build-size').fill('16x16');
  const root = join(mkdtempSync(join(tmpdir(), 'bytelab-drop-')), 'shapes');
  for (const [c, cls] of ['circles', 'squares'].entries()) {
    mkdirSync(join(root, cls), { recursive: true });
    for (let i = 0; i < 12; i++) {
      const data = new Uint8Array(20 * 20).map((_, p) => (c ? 40 : 200) + ((p + i) % 30));
      writeFileSync(join(root, cls, `${cls}-${i}.png`), encodePng({ width: 20, height: 20, data, channels: 1, depth: 8 }));
    }
  }
  await page.locator('#build-folder').setInputFiles(root);
  const status = page.locator('#build-status');
  // The split is stable: these names always give circles-1.png and squares-5.png to the test split (it was 24 + 0).
  await expect(status).toContainText('built "shapes": 22 + 2 images, 2 classes (circles, squares)', { timeout: 60_000 });
  await expect(status).not.toContainText('no test images');
});

test('a folder too small for a test split says so as it is built, and its run names it, not its idb:// address', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=2&evalEvery=2');
  // One image a class: each is trained on, so the test split has none.
  await page.locator('#build-folder').setInputFiles(makeFolder('pair', 1));
  const status = page.locator('#build-status');
  await expect(status).toContainText('built "pair": 2 + 0 images', { timeout: 60_000 });
  await expect(status).toContainText('no test images (a class needs 2 images or more for one to go to the test split): runs on it show no accuracy');
  await page.locator('#start').click();
  await expect(page.locator('#log')).toContainText('pair has no test split: accuracy will not be shown', { timeout: 30_000 });
  await expect(page.locator('#log')).not.toContainText('idb://');
  // Where the confusion matrix would be: before, it said one would come after each evaluation.
  await expect(page.locator('#test-split-hint')).toHaveText("This run's dataset has no test split: no accuracy, confusion matrix or mistakes.");
  await page.locator('#stop').click();
});

test('a class folder counts only if one of its images decodes', async ({ page }) => {
  await page.goto('/');
  const txt = join(mkdtempSync(join(tmpdir(), 'bytelab-drop-')), 'txt');
  mkdirSync(join(txt, 'catA'), { recursive: true });
  mkdirSync(join(txt, 'catB'), { recursive: true });
  writeFileSync(join(txt, 'catA', 'a.txt'), 'text');
  writeFileSync(join(txt, 'catB', 'b.txt'), 'text');
  writeFileSync(join(txt, 'catB', 'fake.png'), 'not a PNG inside');
  await page.locator('#build-folder').setInputFiles(txt);
  const status = page.locator('#build-status');
  await expect(status).toContainText('not built: none of the 1 JPEG or PNG files in txt could be read; 3 left out', { timeout: 60_000 });
  await expect(status).toContainText('could not be decoded: txt/catB/fake.png');
  await expect(status).not.toContainText('class folder(s) with images');
});

test('a class is a folder right under the one dropped, with its images at any depth; a file beside the classes is in none', async ({ page }) => {
  await page.goto('/');
  await page.locator('#build-size').fill('16x16');
  const root = join(mkdtempSync(join(tmpdir(), 'bytelab-drop-')), 'nested');
  writeJpegs(root, 'red', 3, 0);
  writeJpegs(root, 'blue', 3, 1);
  // red/small and blue/small are more red and more blue, not a class "small" of both.
  writeJpegs(root, 'red/small', 2, 0);
  writeJpegs(root, 'blue/small', 2, 1);
  copyFileSync(join(root, 'red', '0.jpg'), join(root, 'cover.jpg')); // beside the class folders
  await page.locator('#build-folder').setInputFiles(root);
  await expect(page.locator('#build-status')).toContainText('built "nested"', { timeout: 60_000 });
  await expect(page.locator('#build-status')).toContainText('2 classes (blue, red)');
  await expect(page.locator('#build-status')).toContainText('1 left out (not in a class folder (a folder right under the one dropped): nested/cover.jpg)');
});

test('a dataset built while a manifest URL is typed is the one chosen: the field is emptied', async ({ page }) => {
  await page.goto('/');
  await page.locator('#build-size').fill('16x16');
  await page.locator('#manifest-url').fill('datasets/birdstrikes-toc/manifest.json');
  await expect(page.locator('#dataset option:checked')).toHaveText('(the manifest URL below)');
  await page.locator('#build-folder').setInputFiles(makeFolder('typed', 3));
  await expect(page.locator('#build-status')).toContainText('built "typed"', { timeout: 60_000 });
  // Before, the list was read anew under the typed URL and kept showing a dataset that was not read.
  await expect(page.locator('#manifest-url')).toHaveValue('');
  await expect(page.locator('#dataset')).toHaveValue(/^idb:\/\/local\/.+\/manifest\.json$/);
  await expect(page.locator('#dataset')).not.toHaveClass(/superseded/);
  await expect.poll(() => new URL(page.url()).searchParams.get('dataset') ?? '').toMatch(/^local:/);
});

test('the same folder built twice gives two entries that can be told apart', async ({ page }) => {
  await page.goto('/');
  await page.locator('#build-size').fill('16x16');
  const folder = makeFolder('twice', 3);
  await page.locator('#build-folder').setInputFiles(folder);
  // One build at a time: the folder picker is off until this one is done (two at once took one name).
  await expect(page.locator('#build-folder')).toBeDisabled();
  await expect(page.locator('#build-status')).toContainText('built "twice"', { timeout: 60_000 });
  await expect(page.locator('#build-folder')).toBeEnabled();
  await expect(builtHere(page)).toHaveCount(1);
  await page.locator('#build-folder').setInputFiles(folder);
  await expect(page.locator('#build-status')).toContainText('built "twice (2)"', { timeout: 60_000 });
  await expect(builtHere(page)).toHaveCount(2);
  const labels = await builtHere(page).allTextContents();
  expect(labels.filter((l) => l.startsWith('twice (2) ('))).toHaveLength(1);
  expect(new Set(labels).size).toBe(2);

  // Delete asks first, naming what goes: No keeps it, Yes takes it out of the list and the address bar.
  const chosen = await page.locator('#dataset').inputValue();
  // It names what it acts on: the dataset chosen in the list, which need not be the one the status line last built.
  await expect(page.locator('#build-delete')).toHaveAttribute('aria-label', /^Delete twice \(2\)/);
  let asked = '';
  page.once('dialog', (d) => {
    asked = d.message();
    void d.dismiss();
  });
  await page.locator('#build-delete').click();
  await expect.poll(() => asked).toMatch(/^Delete "twice \(2\)" \(\d+ KiB\) from this browser\? It cannot be undone\.$/);
  await expect(builtHere(page)).toHaveCount(2);
  page.once('dialog', (d) => void d.accept());
  await page.locator('#build-delete').click();
  await expect(page.locator('#build-status')).toHaveText('deleted "twice (2)"');
  // The keyboard's focus stays on Delete, or goes to the line saying what went if Delete is off now (it fell to the page).
  await expect(page.locator('#build-delete:focus:enabled, #build-status:focus')).toHaveCount(1);
  await expect(builtHere(page)).toHaveCount(1);
  await expect(page.locator(`#dataset option[value="${chosen}"]`)).toHaveCount(0);
  await expect.poll(() => new URL(page.url()).searchParams.get('dataset') ?? '').not.toContain(chosen.split('/')[3]!);
});

test('a dataset built while a run trains joins the list without being chosen under the run', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=32&evalEvery=1000');
  await expect(page.locator('#backend')).toContainText('webgpu');
  const chosen = await page.locator('#dataset').inputValue();
  await page.locator('#start').click();
  await waitFor(page, 'a step', (s) => s.steps.length >= 1);
  await page.locator('#build-size').fill('16x16');
  await page.locator('#build-folder').setInputFiles(makeFolder('during', 3));
  await expect(page.locator('#build-status')).toContainText('built "during"', { timeout: 60_000 });
  await expect(page.locator('#log')).toContainText('"during" is in the dataset list: choose it once this run ends');
  // Before, the list and the address bar named the new dataset while the run went on reading Fashion-MNIST.
  await expect(page.locator('#dataset')).toHaveValue(chosen);
  await expect(page.locator('#dataset option', { hasText: 'during' })).toHaveCount(1);
  expect(new URL(page.url()).searchParams.get('dataset') ?? '').not.toMatch(/^local:/);
  expect((await snapshot(page)).state).toBe('running');
});

test("a build while the build worker's script cannot be fetched (the lab's server down) says it was not built and can be tried again", async ({ page }) => {
  await page.goto('/?model=tiny-cnn');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#build-size').fill('32x32');
  const workerScript = '**/pipeline/build-worker.ts*';
  await page.route(workerScript, (route) => route.abort());
  const folder = makeFolder('shapes', 4);
  await page.locator('#build-folder').setInputFiles(folder);
  // Before, "reading N files…" stayed, and the folder picker off, for good.
  await expect(page.locator('#build-status')).toHaveText("not built: the build worker could not start: its script did not load (is the lab's server up?)", {
    timeout: 20_000,
  });
  await expect(page.locator('#build-folder')).toBeEnabled();
  await page.unroute(workerScript);
  await page.locator('#build-folder').setInputFiles(folder);
  await expect(page.locator('#build-status')).toContainText('built "shapes"', { timeout: 60_000 });
});
