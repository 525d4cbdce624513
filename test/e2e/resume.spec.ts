// Exact resume in the browser: a run paused (which saves a checkpoint to
// IndexedDB), then reloaded and continued, trains on the same batches and
// reaches the same losses as the same run carried on without the reload. Real
// workers (two readers), real WebGPU device (SwiftShader), a fidelity change
// mid-run and a fractional echo factor, so the tape has something to replay.
// The run goes past its readers' first stream snapshots (every 64 batches each),
// so the continued run starts from one and works out only the batches after it.
import { type BrowserContext, expect, test, type Page } from '@playwright/test';
import { snapshot, waitFor } from './helpers.js';

const AFTER = 8; // steps compared after the checkpoint

const stepsFrom = async (page: Page, from: number, to: number) =>
  (await snapshot(page)).steps.filter((m) => m.step > from && m.step <= to).map(({ step, loss, batchKey }) => ({ step, loss, batchKey }));

test('a paused run, reloaded and continued, goes on with the same batches and losses as if it had never stopped', async ({ page }) => {
  test.setTimeout(240_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&readers=2&echo=1.5&seed=9');
  await expect(page.locator('#backend')).toContainText('webgpu');
  await page.locator('#start').click();
  await waitFor(page, 'the first steps', (s) => s.steps.length >= 3);
  // A fidelity change mid-run: where it took effect in the stream is timing, which only the tape keeps.
  await page.locator('#fidelity').fill('2');
  // Two readers take turns: each has handed out 64 batches (its first snapshot) by step 128. Past step 150's checkpoint,
  // so that carrying on from the pause (below) takes no checkpoint of its own before step 200 replaces the pause's.
  await waitFor(page, 'steps past the first snapshots', (s) => (s.steps.at(-1)?.step ?? 0) > 150, 120_000);

  await page.locator('#pause').click();
  await expect(page.locator('#state')).toHaveText('paused', { timeout: 30_000 });
  // The pause's own checkpoint (not the one taken every 50 steps): at the last step trained, once its report is in.
  const checkpointStep = async () => Number(((await page.locator('#resume-text').textContent()) ?? '').match(/saved at step ([\d,]+)/)?.[1]?.replace(/,/g, ''));
  await expect.poll(async () => (await checkpointStep()) === (await snapshot(page)).steps.at(-1)!.step, { timeout: 30_000 }).toBe(true);
  const saved = await checkpointStep();
  expect(saved).toBeGreaterThan(150);
  expect(saved + AFTER).toBeLessThan(200);
  // The same run, carried on: the reference.
  await page.locator('#pause').click(); // Resume
  // Read in the page as soon as the steps are in, and reloaded at once: the run trains on meanwhile, and its checkpoint at
  // step 200 would replace the pause's (the test's own polling and reads once let it get there, under CI's load).
  const reference = await page.evaluate(async (to) => {
    const lab = window.__lab!;
    while ((lab.progress().last?.step ?? 0) < to) await new Promise((r) => setTimeout(r, 5));
    const s = lab.snapshot();
    return { steps: s.steps, examplesRead: s.pipeline!.examplesRead };
  }, saved + AFTER);
  await page.reload();
  const carriedOn = reference.steps.filter((m) => m.step > saved && m.step <= saved + AFTER).map(({ step, loss, batchKey }) => ({ step, loss, batchKey }));
  expect(carriedOn).toHaveLength(AFTER);
  const carriedOnRead = reference.examplesRead;

  // A reload mid-run, as after a crash (a Stop would save a checkpoint of its own): the paused step's run is offered, and continued.
  await expect(page.locator('#resume-text')).toContainText(`step ${saved}`);
  await page.locator('#resume-go').click();
  const resumed = await waitFor(page, 'the continued run', (s) => (s.steps.at(-1)?.step ?? 0) >= saved + AFTER, 180_000);
  expect(resumed.steps[0]!.step).toBe(saved + 1);
  // From the snapshots: the readers worked out the batches after them, not the run's whole stream.
  const workedOut = resumed.pipeline!.batchesWorkedOut;
  expect(workedOut).toBeLessThan(saved - 64);
  // Fresh examples read ("epochs read") go on from the saved count as if the run had carried on: the records read again to
  // revive what the snapshots held are not fresh. The slack is what the readers happened to have read ahead (2 x 4 records of 256).
  expect(resumed.pipeline!.examplesReread).toBeGreaterThan(0);
  expect(Math.abs(resumed.pipeline!.examplesRead - carriedOnRead)).toBeLessThanOrEqual(2 * 4 * 256);
  await expect(page.locator('#echo-counters')).toContainText('read again to continue');
  expect(Number(await page.locator('#fidelity').inputValue())).toBe(2); // the controls show the saved run's settings
  const continued = await stepsFrom(page, saved, saved + AFTER);
  // The same examples in the same order...
  expect(continued.map((m) => m.batchKey)).toEqual(carriedOn.map((m) => m.batchKey));
  // ...and the same model and optimiser state: the same losses.
  continued.forEach((m, i) => expect(m.loss).toBeCloseTo(carriedOn[i]!.loss, 5));
  // The charts show the history up to the checkpoint, marked where the run was continued.
  expect(await page.evaluate(() => window.__lab!.marks())).toContainEqual(expect.stringContaining('continued'));
  // Its row says so, not as a change of its settings (it read "1 change").
  await expect(page.locator('#runs-table tbody tr').first()).toContainText('continued once');
  // Stop saves where it stopped: the run offered next goes on from the last step trained.
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const last = (await snapshot(page)).steps.at(-1)!.step;
  await expect(page.locator('#resume-text')).toContainText('Saved run');
  await expect(page.locator('#resume-text')).toContainText(`step ${last.toLocaleString('en-US')}`);
  expect(errors).toEqual([]);
});

/**
 * Trains a few steps, then holds every training record (as a stalled server holds them) until the trainer has waited
 * `waitedMs` for its next batch; the last step. A stall shows (and saves its checkpoint) after 3 s and more.
 */
async function trainThenStall(page: Page, context: BrowserContext, waitedMs: number): Promise<number> {
  await page.goto('/?model=tiny-cnn&batch=64&evalEvery=1000&cache=0');
  await page.locator('#start').click();
  await waitFor(page, 'the first steps', (s) => s.steps.length >= 3);
  await context.route('**/train-*.pcr', () => undefined);
  await expect.poll(() => page.evaluate(() => window.__lab!.progress().waitingForDataMs), { timeout: 120_000, intervals: [100] }).toBeGreaterThan(waitedMs);
  return (await snapshot(page)).steps.at(-1)!.step;
}

test('Stop then a reload at once: the browser asks first while the stop is saved, and the run is offered at the step it stopped', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&seed=5');
  await page.locator('#start').click();
  await waitFor(page, 'a few steps', (s) => s.steps.length >= 8);
  const asked: string[] = [];
  page.on('dialog', (d) => {
    asked.push(d.type());
    void d.dismiss(); // stay: the person answers "do not leave yet"
  });
  await page.locator('#stop').click();
  // Held by the browser's question while the stop's checkpoint is saved (if it is not saved already).
  await page.reload({ timeout: 5_000 }).catch(() => undefined);
  if (asked.length) {
    await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
    await page.reload();
  }
  // Before, a reload at once lost the stop's checkpoint: a run of fewer than 50 steps was not offered at all.
  await expect.poll(() => page.evaluate(() => window.__lab!.records().length)).toBe(1); // read from IndexedDB
  const last = (await page.evaluate(() => window.__lab!.records()[0]!.steps.at(-1)![0]!)) as number;
  await expect(page.locator('#resume-text')).toContainText(`, step ${last.toLocaleString('en-US')} (saved`, { timeout: 10_000 });
  expect(asked.every((t) => t === 'beforeunload')).toBe(true);
});

test('Stop of a model whose losses come back seconds late (the CNN on SwiftShader) saves it at the step the page shows', async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto('/?model=cnn&evalEvery=1000');
  await page.locator('#start').click();
  await waitFor(page, '4 steps', (s) => s.steps.length >= 4, 120_000);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 30_000 });
  const shown = Number(await page.locator('#m-step').textContent());
  // Before, the stop waited 3 s for the last losses and saved the model without them: step 9 offered, 7 shown (2 of 2).
  await expect(page.locator('#resume-text')).toContainText(`, step ${shown} (saved`, { timeout: 10_000 });
  await expect.poll(() => page.evaluate(() => window.__lab!.records()[0]?.steps.at(-1)?.[0])).toBe(shown);
});

test('a run cut off by a reload before its first checkpoint is said to be so, not passed over for an older saved run', async ({ page }) => {
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000');
  await page.locator('#start').click();
  await waitFor(page, 'a few steps', (s) => s.steps.length >= 3);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const first = (await page.evaluate(() => window.__lab!.records()))[0]!.name;
  await page.locator('#start').click();
  await waitFor(page, 'the second run training', (s) => s.steps.length >= 2);
  await page.reload();
  // Before, the line offered the first run as "Saved run: …, step 5" and nothing said the second could not be continued.
  await expect(page.locator('#resume-text')).toContainText(/^The last run, "[^"]+", was cut off before its first checkpoint, so it cannot be continued\. /);
  await expect(page.locator('#resume-text')).toContainText(`Saved run "${first}": `);
  await expect(page.locator('#resume-go')).toBeVisible();
});

test("Pause of a model whose losses come back late says it is saving until the step count has stopped, then 'paused'", async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto('/?model=cnn&evalEvery=1000');
  await page.locator('#start').click();
  await waitFor(page, '4 steps', (s) => s.steps.length >= 4, 120_000);
  await page.locator('#pause').click();
  // Before, "paused" at once while the count went on by one or two (the step under way, the losses read back late).
  await expect(page.locator('#state')).toHaveText('paused: saving the run at its last step');
  await expect(page.locator('#state')).toHaveText('paused', { timeout: 30_000 });
  const shown = await page.locator('#m-step').textContent();
  await page.waitForTimeout(2_000);
  await expect(page.locator('#m-step')).toHaveText(shown!);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 30_000 });
});

test('a link that stalls: Stop while the trainer waits for data saves the run at its last step', async ({ page, context }) => {
  test.setTimeout(180_000);
  const last = await trainThenStall(page, context, 1_000); // Stop before a stall would save the run itself
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped');
  // Before, Stop waited 3 s for a step that never came, then saved nothing (a reload offered no run, or an older one).
  await expect(page.locator('#resume-text')).toContainText(`, step ${last.toLocaleString('en-US')} (saved`);
});

test('a link that stalls: Pause saves the run at its last step at once, and a reload then offers it there', async ({ page, context }) => {
  test.setTimeout(180_000);
  const last = await trainThenStall(page, context, 1_000); // Pause before a stall would save the run itself
  await page.locator('#pause').click();
  // Before, the pause's checkpoint waited for the next batch, which never came: a reload lost every step since the last.
  await expect(page.locator('#resume-text')).toHaveText(`Checkpoint saved at step ${last.toLocaleString('en-US')}.`, { timeout: 10_000 });
  await page.reload();
  await expect(page.locator('#resume-text')).toContainText(`, step ${last.toLocaleString('en-US')} (saved`);
});

test('a link that stalls: the page says so, the steps since the last checkpoint are saved once it does, and a reload offers them', async ({
  page,
  context,
}) => {
  test.setTimeout(180_000);
  const last = await trainThenStall(page, context, 1_000);
  await expect(page.locator('#state')).toContainText(/no batch for \d+ s, waiting for data/, { timeout: 60_000 });
  await expect(page.locator('#m-wait')).toHaveText('100%');
  // Before, nothing was saved until a next step that never came (or Pause, or Stop): the reload lost every step.
  await expect(page.locator('#resume-text')).toHaveText(`Checkpoint saved at step ${last.toLocaleString('en-US')}.`, { timeout: 10_000 });
  await expect(page.locator('#state')).toContainText('waiting for data'); // still the run's, not paused
  await page.reload();
  await expect(page.locator('#resume-text')).toContainText(`, step ${last.toLocaleString('en-US')} (saved`);
});

test('before the first batch the page says it waits for it; once records come, the run trains and the words go', async ({ page, context }) => {
  test.setTimeout(120_000);
  await page.goto('/?model=tiny-cnn&batch=64&evalEvery=1000&cache=0');
  await expect(page.locator('#backend')).toContainText('webgpu');
  // The training records are held (a server slow to answer), then let go.
  const held: (() => Promise<void>)[] = [];
  let letGo = false;
  await context.route('**/train-*.pcr', (route) => (letGo ? route.continue() : void held.push(() => route.continue())));
  await page.locator('#start').click();
  await expect(page.locator('#state')).toContainText(/running: waiting for the first batch, \d+ s/, { timeout: 60_000 });
  letGo = true;
  for (const go of held.splice(0)) await go();
  await waitFor(page, 'steps once the records come', (s) => s.steps.length >= 2, 60_000);
  await expect(page.locator('#state')).toHaveText('running');
});

test('a run paused and reloaded at once keeps every step up to its checkpoint in its record; continued, its fresh count goes on from there', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&echo=2&seed=4');
  await page.locator('#start').click();
  await waitFor(page, 'a dozen steps', (s) => s.steps.length >= 12);
  await page.locator('#pause').click();
  // The pause's checkpoint is at the last step trained; the losses of the last steps come back after the pause.
  await expect(page.locator('#resume-text')).toContainText(/saved at step \d+/, { timeout: 30_000 });
  const saved = Number((await page.locator('#resume-text').textContent())!.match(/saved at step ([\d,]+)/)![1]!.replace(/,/g, ''));
  await page.reload();
  await expect(page.locator('#resume-text')).toContainText(`step ${saved}`);
  type Rec = { steps: number[][] };
  const before = ((await page.evaluate(() => window.__lab!.records())) as Rec[]).at(-1)!;
  // Before, the record was saved as the run paused, and a reload lost the steps reported after that.
  expect(before.steps.map((p) => p[0])).toEqual(Array.from({ length: saved }, (_, i) => i + 1));
  await page.locator('#resume-go').click();
  await waitFor(page, 'steps after the checkpoint', (s) => (s.steps.at(-1)?.step ?? 0) >= saved + 3, 120_000);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const after = ((await page.evaluate(() => window.__lab!.records())) as Rec[]).at(-1)!;
  expect(after.steps.map((p) => p[0]).slice(0, saved + 3)).toEqual(Array.from({ length: saved + 3 }, (_, i) => i + 1));
  const fresh = after.steps.map((p) => p[4]!);
  // Each step adds the fresh examples of its batch (echo 2: about half of 16), from the checkpoint's count on.
  fresh.forEach((f, i) => i > 0 && expect(f - fresh[i - 1]!).toBeGreaterThanOrEqual(0));
  fresh.forEach((f, i) => i > 0 && expect(f - fresh[i - 1]!).toBeLessThanOrEqual(16));
  expect(fresh[saved - 1]).toBe(before.steps[saved - 1]![4]);
});

test('a run training in one tab is not offered to continue, renamed or deleted in another; once that tab stops it, it is offered there', async ({
  page,
  context,
}) => {
  test.setTimeout(180_000);
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&seed=5');
  await page.locator('#start').click();
  await waitFor(page, 'the first steps', (s) => s.steps.length >= 3);
  await page.locator('#pause').click();
  await expect(page.locator('#resume-text')).toContainText(/saved at step \d+/, { timeout: 30_000 });

  // A second tab of the lab: the paused run is still this tab's. Before, it was offered there, and both tabs trained it.
  const other = await context.newPage();
  await other.goto('/');
  await expect(other.locator('#resume-text')).toContainText('It is training in another tab of this lab');
  await expect(other.locator('#resume-go')).toBeHidden();
  await expect(other.locator('#resume-discard')).toBeHidden();
  const row = other.locator('#runs-table tbody tr').first();
  await row.getByRole('button', { name: /^delete / }).click();
  await expect(other.locator('#log')).toContainText('is training in another tab of this lab: stop it there, then delete it');
  await expect(other.locator('#runs-table tbody tr')).toHaveCount(1);
  // Nor renamed there: its own tab writes the record back at its next save, and the name would be lost.
  other.once('dialog', (d) => {
    expect.soft(false, 'no name is asked for').toBe(true);
    void d.dismiss();
  });
  await row.getByRole('button', { name: /^rename / }).click();
  await expect(other.locator('#log')).toContainText('is training in another tab of this lab: rename it there, or once it has stopped');

  // Its own tab carries on; a control focused in the runs table stays focused while the table is redrawn at every step.
  await page.locator('#pause').click();
  const overlay = page.locator('#runs-table tbody tr').first().getByRole('checkbox');
  await overlay.focus();
  // Redrawn (at most once a second): the focused box is replaced by its row's new one.
  const focused = await overlay.elementHandle();
  await page.waitForFunction((box) => !box?.isConnected, focused, { timeout: 30_000 });
  await expect(overlay).toBeFocused();

  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  // Let go: the other tab offers it now, without a reload.
  await expect(other.locator('#resume-text')).toContainText('Saved run', { timeout: 10_000 });
  await expect(other.locator('#resume-text')).not.toContainText('another tab');
  await expect(other.locator('#resume-go')).toBeVisible();

  // The first tab continues it while the second still shows Continue: the second's click reads the run again and says
  // where it trains, instead of training a second copy (before, both tabs trained it).
  await page.locator('#resume-go').click();
  await expect(page.locator('#state')).toHaveText('running', { timeout: 30_000 });
  // Dispatched, not clicked: the other tab may already have hidden it, told of the continued run's first checkpoint.
  await other.locator('#resume-go').dispatchEvent('click');
  await expect(other.locator('#resume-text')).toContainText('It is training in another tab of this lab');
  await expect(other.locator('#resume-go')).toBeHidden();
  await expect(other.locator('#state')).toHaveText('idle');
});

test('Continue pressed in two tabs at once: one tab trains the run, the other says so and keeps focus on why', async ({ page, context }) => {
  test.setTimeout(180_000);
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&seed=6');
  await page.locator('#start').click();
  await waitFor(page, 'the first steps', (s) => s.steps.length >= 3);
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  const other = await context.newPage();
  await other.goto('/');
  const tabs = [page, other];
  for (const tab of tabs) {
    await expect(tab.locator('#resume-go')).toBeVisible({ timeout: 10_000 });
    await tab.locator('#learning-rate').fill('0.0123'); // the person's setting, not the saved run's (0.005)
    await tab.locator('#resume-go').focus();
  }
  // Both read the run as free; before, both trained it (each overwriting the other's record and checkpoint).
  await Promise.all(tabs.map((tab) => tab.keyboard.press('Enter')));
  const states = async () => (await Promise.all(tabs.map((tab) => tab.locator('#state').textContent()))).join(' ');
  await expect.poll(states, { timeout: 30_000 }).toMatch(/^(running (idle|stopped)|(idle|stopped) running)$/);
  const [trains, refused] = (await page.locator('#state').textContent()) === 'running' ? [page, other] : [other, page];
  await expect(refused.locator('#resume-text')).toContainText('It is training in another tab of this lab');
  await expect(refused.locator('#resume-go')).toBeHidden();
  await expect(refused.locator('#resume-text')).toBeFocused();
  await expect(refused.locator('#learning-rate')).toHaveValue('0.0123'); // refused before the run's settings went in
  // The tab that trains it hands focus from Continue (hidden as the run opens) to Pause.
  await expect(trains.locator('#pause')).toBeFocused();
  // Still one run training a few seconds on: the refused tab did not start it late.
  await refused.waitForTimeout(3_000);
  await expect(refused.locator('#state')).not.toHaveText('running');
});

test("Continue while another tab holds the run's lock for a moment (waiting for the run to end) trains the run", async ({ page, context }) => {
  test.setTimeout(120_000);
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&seed=6');
  await page.locator('#start').click();
  await waitFor(page, 'the first steps', (s) => s.steps.length >= 3);
  await page.locator('#stop').click();
  await expect(page.locator('#resume-go')).toBeVisible({ timeout: 30_000 });
  const runId = (await page.evaluate(() => window.__lab!.records()))[0]!.id;
  // A tab that offered the run while it trained elsewhere waits for its lock with a shared hold, let go at once; here the
  // hold lasts 120 ms, so the Continue surely falls in it.
  const other = await context.newPage();
  await other.goto('/');
  await other.evaluate((name) => {
    void navigator.locks.request(name, { mode: 'shared' }, () => new Promise((r) => setTimeout(r, 120)));
  }, `bytelab-run:${runId}`);
  await page.locator('#resume-go').click();
  // Before, the Continue was refused: "the saved run was continued in another tab of this lab just now".
  await expect(page.locator('#state')).toHaveText('running', { timeout: 30_000 });
  await expect(page.locator('#log')).not.toContainText('continued in another tab');
});

test('a run stopped in one tab and continued at once in another keeps every step in its record', async ({ page, context }) => {
  test.setTimeout(180_000);
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&seed=9');
  await page.locator('#start').click();
  await waitFor(page, 'a checkpoint and steps after it', (s) => s.steps.length >= 60);
  const other = await context.newPage();
  await other.goto('/');
  await expect(other.locator('#resume-text')).toContainText('It is training in another tab of this lab');
  await page.locator('#stop').click();
  await expect(other.locator('#resume-go')).toBeVisible({ timeout: 30_000 });
  await other.locator('#resume-go').click(); // at once: this tab read the run's record seconds before the stop
  await waitFor(other, 'steps after the stop', (s) => s.steps.length >= 3, 60_000);
  await other.locator('#stop').click();
  await expect(other.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  // Before, the record went on from the steps the other tab had read (50), without those trained up to the stop.
  const steps = (await other.evaluate(() =>
    window
      .__lab!.records()
      .at(-1)!
      .steps.map((p) => p[0]!),
  )) as number[];
  expect(steps).toEqual(Array.from({ length: steps.length }, (_, i) => i + 1));
  expect(steps.length).toBeGreaterThan(60);
});

test('a run at full fidelity, continued after the slider was moved, goes on at full fidelity and the slider says so', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&seed=6');
  const full = Number(await page.locator('#fidelity').getAttribute('max'));
  await page.locator('#start').click();
  await waitFor(page, 'the first steps', (s) => s.steps.length >= 3);
  await page.locator('#stop').click();
  await expect(page.locator('#resume-go')).toBeVisible({ timeout: 30_000 });
  await page.locator('#fidelity').fill('2');
  await page.locator('#resume-go').click();
  await expect(page.locator('#state')).toHaveText('running', { timeout: 30_000 });
  // Before, the slider stayed at 2 while the run read every group.
  expect(Number(await page.locator('#fidelity').inputValue())).toBe(full);
  await expect(page.locator('#fidelity-label')).toContainText(`scan group ${full} of ${full}`);
  await page.locator('#stop').click();
});

test('a tab opened before another starts a run follows it: the run joins its table, its saved-run line names it, and a delete there goes here', async ({
  page,
  context,
}) => {
  test.setTimeout(120_000);
  // Opened first, and left open: before, it learned of the run only on a reload.
  const other = await context.newPage();
  await other.goto('/');
  await expect(other.locator('#backend')).toContainText('webgpu');
  await expect(other.locator('#resume')).toBeHidden();
  await page.goto('/?model=tiny-cnn&batch=16&evalEvery=1000&seed=7');
  await page.locator('#start').click();
  await waitFor(page, 'the first steps', (s) => s.steps.length >= 3);
  const rows = other.locator('#runs-table tbody tr');
  await expect(rows).toHaveCount(1, { timeout: 10_000 });
  await expect(rows.first()).toContainText('tiny-cnn');
  await page.locator('#pause').click();
  await expect(page.locator('#resume-text')).toContainText(/saved at step \d+/, { timeout: 30_000 });
  await expect(other.locator('#resume-text')).toContainText('It is training in another tab of this lab');
  await expect(other.locator('#resume-go')).toBeHidden();
  await page.locator('#stop').click();
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  await expect(other.locator('#resume-go')).toBeVisible({ timeout: 10_000 });
  await expect(rows.first().locator('td').nth(1)).toHaveAttribute('title', /; stopped$/);
  // Deleted in the tab that trained it: its row and its offer to continue go in the other too.
  page.once('dialog', (d) => void d.accept());
  await page
    .locator('#runs-table tbody tr')
    .first()
    .getByRole('button', { name: /^delete / })
    .click();
  await expect(rows).toHaveCount(0);
  await expect(other.locator('#resume')).toBeHidden();
});

test('a fast run reloaded between its 3-s record saves keeps the steps it showed in its record (a table run cut off at step 33 had 1)', async ({ page }) => {
  await page.goto('/?dataset=birdstrikes&model=logreg&evalEvery=1000');
  await page.locator('#start').click();
  // Well before the first checkpoint (step 50), and within 3 s of the record's first save at step 1 on this fast table.
  const s = await waitFor(page, '12 steps', (x) => x.steps.length >= 12);
  const shown = s.steps.at(-1)!.step;
  await page.reload();
  await expect.poll(() => page.evaluate(() => window.__lab!.records().length)).toBe(1); // read from IndexedDB
  const kept = (await page.evaluate(() => window.__lab!.records()[0]!.steps.at(-1)![0]!)) as number;
  expect(kept).toBeGreaterThanOrEqual(shown);
});
