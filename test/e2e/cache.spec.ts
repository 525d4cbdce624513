// The prefix cache in Chromium, on its own IndexedDB, with the real workers and
// the bundled dataset: what a run fetched is there after a reload, a lower
// fidelity reads nothing from the network, and Clear empties it.
import { expect, test } from '@playwright/test';
import { snapshot, waitFor } from './helpers.js';

const usage = (page: import('@playwright/test').Page) => page.evaluate(() => window.__lab!.cache());

test('a reload reads what the last run fetched from the cache; a lower scan group needs no request; Clear empties it', async ({ page }) => {
  await page.goto('/?model=mlp&batch=64&evalEvery=5&autostart=1');
  const first = await waitFor(
    page,
    'an evaluation and a few train records',
    (s) => s.evals.length > 0 && s.fetches.filter((f) => f.record.startsWith('train')).length >= 4,
  );
  // Its controls are off while the run reads through it, and the page says why.
  await expect(page.locator('#cache-clear')).toBeDisabled();
  await expect(page.locator('#cache-busy')).toBeVisible();
  await page.locator('#stop').click();
  await expect(page.locator('#start')).toBeEnabled({ timeout: 10_000 });
  await expect(page.locator('#cache-busy')).toBeHidden();
  // Every record read from the server is kept: the 4 test records and the train records read so far.
  const fetched = new Set((await snapshot(page)).fetches.filter((f) => f.status === 206).map((f) => f.record));
  expect(first.fetches.every((f) => f.status === 206)).toBe(true); // a fresh browser: nothing cached yet
  expect((await usage(page))!.entries).toBe(fetched.size);
  await expect(page.locator('#cache-usage')).toHaveText(new RegExp(`^Holds [\\d.]+ (KiB|MiB) in ${fetched.size} record prefixes\\.$`));

  // Same seed, so the same records come first; at scan group 3 they are prefixes of what is cached.
  await page.goto('/?model=mlp&batch=64&evalEvery=5&group=3&autostart=1');
  const second = await waitFor(page, 'an evaluation', (s) => s.evals.length > 0 && s.fetches.filter((f) => f.record.startsWith('train')).length >= 2);
  const test = second.fetches.filter((f) => f.record.startsWith('test'));
  expect(test.length).toBe(4);
  expect(test.every((f) => f.status === 0 && f.received === 0 && f.cached === f.requested)).toBe(true);
  const train = second.fetches.filter((f) => f.record.startsWith('train') && fetched.has(f.record));
  expect(train.length).toBeGreaterThan(0);
  expect(train.every((f) => f.status === 0 && f.level === 3 && f.received === 0)).toBe(true);
  await expect(page.locator('#m-cache')).toHaveText(/^\d+%$/);
  await expect(page.locator('#m-cache')).toHaveAttribute(
    'title',
    /^[\d.]+ (B|KiB|MiB) of [\d.]+ (B|KiB|MiB) read came from the cache; \d+ of \d+ records without a request$/,
  );
  await page.locator('#stop').click();
  await expect(page.locator('#start')).toBeEnabled({ timeout: 10_000 });

  await page.locator('#cache-clear').click();
  await expect(page.locator('#cache-usage')).toHaveText('Holds 0 B in 0 record prefixes.');
});

test('cache size 0 turns the cache off; a bad size is refused beside the field', async ({ page }) => {
  await page.goto('/?model=mlp&cache=0&evalEvery=5&autostart=1');
  await waitFor(page, 'an evaluation', (s) => s.evals.length > 0);
  await page.locator('#stop').click();
  await expect(page.locator('#start')).toBeEnabled({ timeout: 10_000 });
  expect(await usage(page)).toEqual({ bytes: 0, entries: 0 });
  await expect(page.locator('#cache-usage')).toHaveText('Off for runs (limit 0).');
  await page.locator('#cache-limit').fill('-5');
  await page.locator('#cache-limit').blur();
  await expect(page.locator('#cache-limit-error')).toContainText('cache size (MiB) must be a whole number from 0 to 65536');
  await expect(page.locator('#start')).toBeDisabled();
  // The line no longer says the limit 0 it no longer has (it stayed "Off for runs (limit 0)." under the error).
  await expect(page.locator('#cache-usage')).toHaveText('Holds 0 B in 0 record prefixes.');
});

/** A first run that leaves more than 1 MiB cached: the 4 test records and at least `train` train records at full fidelity. */
async function fill(page: import('@playwright/test').Page, train: number) {
  await page.goto('/?model=mlp&batch=64&evalEvery=5&autostart=1');
  await waitFor(page, `${train} train records`, (s) => s.evals.length > 0 && s.fetches.filter((f) => f.record.startsWith('train')).length >= train);
  await page.locator('#stop').click();
  await expect(page.locator('#start')).toBeEnabled({ timeout: 10_000 });
  const u = (await usage(page))!;
  expect(u.bytes).toBeGreaterThan(2 ** 20);
  return u;
}

test('a run at a lower cache size shrinks the cache to it, though every read it makes is a hit', async ({ page }) => {
  const before = await fill(page, 10);
  // The same seed reads the same records first; at scan group 3 each is a prefix of a cached one: no write, which is where eviction was.
  await page.goto('/?model=mlp&batch=64&evalEvery=5&group=3&cache=1&autostart=1');
  // (Before the limit applied at open, this run's reads were all hits and the cache stayed as large as the first run left it.)
  await waitFor(page, 'an evaluation', (x) => x.evals.length > 0);
  await page.locator('#stop').click();
  await expect(page.locator('#start')).toBeEnabled({ timeout: 10_000 });
  const after = (await usage(page))!;
  expect(after.bytes).toBeLessThanOrEqual(2 ** 20);
  expect(after.entries).toBeLessThan(before.entries);
  await expect(page.locator('#cache-usage')).toHaveText(new RegExp(`^Holds [\\d.]+ (B|KiB|MiB) in ${after.entries} record prefix(es)?\\.$`));
});

test('lowering "Keep up to" evicts down to it at once, and the panel shows what is left', async ({ page }) => {
  await fill(page, 6);
  await page.locator('#cache-limit').fill('1');
  await page.locator('#cache-limit').blur();
  await expect.poll(async () => (await usage(page))!.bytes).toBeLessThanOrEqual(2 ** 20);
  const after = (await usage(page))!;
  await expect(page.locator('#cache-usage')).toHaveText(new RegExp(`^Holds [\\d.]+ (B|KiB|MiB) in ${after.entries} record prefix(es)?\\.$`));
});
