// Data echoing as a person uses it: the page reads where the time goes (R),
// auto echo follows it, and the echo mode switches live.
import { expect, test } from '@playwright/test';
import { snapshot, waitFor } from './helpers.js';

test('the page shows upstream and trainer time and R; auto echo moves the factor to the suggestion; the mode switches live', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('/?model=mlp&batch=32&evalEvery=1000&autoEcho&autostart=1');
  await expect(page.locator('#echo')).toHaveJSProperty('readOnly', true);
  // It looks read-only and says why (before, it kept the look of a field to type in).
  await expect(page.locator('#echo')).toHaveAttribute('title', /set by auto echo/);
  await expect(page.locator('#echo')).toHaveCSS('border-top-style', 'dashed');
  const reading = page.locator('#echo-reading');
  await expect(reading).toHaveText(/^Upstream \(fetch, decode, augment\) \d+ ms per batch · trainer \d+ ms per step · R = [\d.]+ · waiting for data \d+%/, {
    timeout: 120_000,
  });
  // After a few auto moves the factor is the suggestion for the R shown (R to the half, 1 to 16).
  await waitFor(page, '40 steps', (s) => s.steps.length >= 40);
  const r = Number(/R = ([\d.]+)/.exec((await reading.textContent()) ?? '')![1]);
  const echo = Number(await page.locator('#echo').inputValue());
  expect(echo).toBeGreaterThanOrEqual(1);
  expect(echo).toBeLessThanOrEqual(16);
  expect(Math.abs(echo - Math.min(16, Math.max(1, r)))).toBeLessThanOrEqual(1.5); // R moves between the move and the reading
  await expect(page.locator('#echo-counters')).toHaveText(
    /^[\d,]+ fresh examples? read · [\d,]+ echoed cop(y|ies) · [\d,]+ SGD steps? · [\d,]+ repeats? within a batch$/,
  );

  // Whole batches from now on: no example repeats within a batch any more.
  await page.locator('#echo-auto').uncheck();
  await page.locator('#echo').fill('2');
  await page.locator('#echo').dispatchEvent('change');
  await expect(page.locator('#echo')).toHaveAttribute('title', '');
  // The two example modes are told apart on the charts (both were "echo examples"), and the shuffle buffer is marked too.
  // A step apart: a control changed twice at one step keeps one mark.
  const aStepLater = async () => {
    const now = (await snapshot(page)).steps.at(-1)!.step;
    await waitFor(page, 'a step later', (s) => (s.steps.at(-1)?.step ?? 0) > now + 1);
  };
  await aStepLater();
  await page.locator('#echo-mode').selectOption('examples-after-augment');
  await page.locator('#shuffle-buffer').fill('256');
  await page.locator('#shuffle-buffer').dispatchEvent('change');
  await aStepLater();
  await page.locator('#echo-mode').selectOption('batches');
  // Each change is marked on the charts at the step it was made.
  expect(await page.evaluate(() => window.__lab!.marks())).toEqual([
    expect.stringMatching(/^\d+: echo 2$/),
    expect.stringMatching(/^\d+: echo after flip$/),
    expect.stringMatching(/^\d+: shuffle 256$/),
    expect.stringMatching(/^\d+: echo batches$/),
  ]);
  const at = (await snapshot(page)).pipeline!;
  // What the shuffle buffer and queue held from before the switch drains first; then duplicates stop growing.
  const later = await waitFor(page, 'batches echoed', (s) => (s.pipeline?.examplesEchoed ?? 0) > at.examplesEchoed + 2048);
  const settled = later.pipeline!.duplicatesInBatches;
  const after = await waitFor(page, 'more batches', (s) => (s.pipeline?.batchesEmitted ?? 0) > later.pipeline!.batchesEmitted + 20);
  expect(after.pipeline!.duplicatesInBatches).toBe(settled);
  expect(after.pipeline!.examplesEchoed).toBeGreaterThan(later.pipeline!.examplesEchoed);
  expect(errors).toEqual([]);
  await page.screenshot({ path: 'test-results/lab-echo.png', fullPage: true });
  await page.evaluate(() => window.__lab!.stop());
});

test('auto echo ticked over a typed factor, then unticked: the typed factor comes back and is applied', async ({ page }) => {
  await page.goto('/?model=mlp&batch=32&evalEvery=1000&echo=16&autostart=1');
  await waitFor(page, 'a few steps', (s) => s.steps.length >= 3);
  await page.locator('#echo-auto').check();
  // Auto moves the factor to R (well under 16 for this MLP on any machine the tests run on).
  await expect(page.locator('#echo')).not.toHaveValue('16', { timeout: 60_000 });
  const auto = await page.locator('#echo').inputValue();
  // A step past auto's mark: a change at the same step replaces it (only the last took effect there), and the mark is looked for below.
  await expect.poll(() => page.evaluate(() => window.__lab!.marks().find((m) => m.includes('auto echo')))).toBeTruthy();
  const autoAt = Number((await page.evaluate(() => window.__lab!.marks().find((m) => m.includes('auto echo'))))!.split(':')[0]);
  await waitFor(page, 'a step past auto echo', (s) => (s.steps.at(-1)?.step ?? 0) > autoAt);
  await page.locator('#echo-auto').uncheck();
  // Before, auto's last factor stayed on and the person's was lost.
  await expect(page.locator('#echo')).toHaveValue('16');
  await expect(page.locator('#echo')).toHaveJSProperty('readOnly', false);
  await expect(page.locator('#log')).toContainText(/auto echo off: the echo factor is back to 16, as it was before auto echo set [\d.]+/);
  const marks = await page.evaluate(() => window.__lab!.marks());
  expect(marks.at(-1)).toMatch(/^\d+: echo 16$/);
  expect(marks).toContainEqual(expect.stringMatching(new RegExp(`: auto echo ${auto.replace('.', '\\.')}$`)));
  await page.evaluate(() => window.__lab!.stop());
});

test('a bad echo factor typed, then auto ticked: its error goes, auto starts from the factor in force, and unticking brings that back', async ({ page }) => {
  // Idle: the bad value would keep Start off under a field the person cannot type in.
  await page.goto('/?model=mlp&batch=32&evalEvery=1000');
  await expect(page.locator('#start')).toBeEnabled();
  await page.locator('#echo').fill('0');
  await expect(page.locator('#echo-error')).toContainText('echo factor must be a number from 1 to 16');
  await expect(page.locator('#start')).toBeDisabled();
  await page.locator('#echo-auto').check();
  await expect(page.locator('#echo')).toHaveValue('1');
  await expect(page.locator('#echo-error')).toHaveText('');
  await expect(page.locator('#start')).toBeEnabled();
  // The same bad value from the address: its line above the page goes too.
  await page.goto('/?model=mlp&batch=32&evalEvery=1000&echo=0');
  await expect(page.locator('#param-error')).toContainText('URL parameter echo=0');
  await page.locator('#echo-auto').check();
  await expect(page.locator('#echo')).toHaveValue('1');
  await expect(page.locator('#param-error')).toBeHidden();
  await expect(page.locator('#start')).toBeEnabled();
  await expect.poll(() => new URL(page.url()).searchParams.has('autoEcho')).toBe(true); // the address bar follows again

  // A run at 16: 0 typed is not applied; auto ticked starts from 16, moves it, and unticking puts 16 back (not 0).
  await page.goto('/?model=mlp&batch=32&evalEvery=1000&echo=16&autostart=1');
  await waitFor(page, 'a few steps', (s) => s.steps.length >= 3);
  await page.locator('#echo').fill('0');
  await expect(page.locator('#echo-error')).toContainText('echo factor must be a number from 1 to 16');
  await page.locator('#echo-auto').check();
  await expect(page.locator('#echo-error')).toHaveText('');
  await expect(page.locator('#echo')).not.toHaveValue('16', { timeout: 60_000 }); // auto's own factor now
  await expect(page.locator('#echo-error')).toHaveText('');
  await page.locator('#echo-auto').uncheck();
  await expect(page.locator('#echo')).toHaveValue('16');
  await expect(page.locator('#echo-error')).toHaveText('');
  await expect.poll(() => page.evaluate(() => window.__lab!.marks().at(-1))).toMatch(/^\d+: echo 16$/);
  await page.evaluate(() => window.__lab!.stop());
});

test("a change's label on the charts starts right of its line (it was drawn ending there, over the line and the labels before)", async ({ page }) => {
  // The labels are canvas text: each fillText is noted with the alignment it was drawn with.
  await page.addInitScript(() => {
    const drawn: { text: string; align: string }[] = [];
    (window as unknown as { __fills: typeof drawn }).__fills = drawn;
    const fillText = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (this: CanvasRenderingContext2D, text: string, x: number, y: number, max?: number) {
      drawn.push({ text, align: this.textAlign });
      return max === undefined ? fillText.call(this, text, x, y) : fillText.call(this, text, x, y, max);
    };
  });
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000');
  await page.locator('#start').click();
  await waitFor(page, '3 steps', (s) => s.steps.length >= 3);
  await page.locator('#echo').fill('2');
  await page.locator('#echo').press('Enter');
  await waitFor(page, '8 steps', (s) => s.steps.length >= 8);
  const labels = await page.evaluate(() => (window as unknown as { __fills: { text: string; align: string }[] }).__fills.filter((f) => f.text === 'echo 2'));
  expect(labels.length).toBeGreaterThan(0);
  expect(labels.every((l) => l.align === 'left')).toBe(true);
  await page.locator('#stop').click();
});
