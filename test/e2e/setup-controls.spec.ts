// The setup controls as a person meets them in the first minute (each case found
// by a walk through the lab): they follow the dataset chosen now, not the last
// run's; a control changed as a run opens is where the run starts; a typed
// manifest URL is read before Start uses it; the address bar follows all of it.
import { createServer, type Server } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import { waitFor } from './helpers.js';

const FLIGHTS = 'datasets/flights-250k-toc/manifest.json';
const FASHION = 'datasets/fashion-mnist-mini/manifest.json';

test('after a TOC run, an image dataset gets its fidelity slider, echo mode and scan-group sweep back before any run', async ({ page }) => {
  await page.goto('/?dataset=flights-250k&model=logreg&evalEvery=1000&autostart=1');
  await waitFor(page, '3 steps', (s) => s.steps.length >= 3);
  await expect(page.locator('#fidelity')).toBeDisabled();
  await expect(page.locator('#sweep-kind')).toHaveValue('echo'); // a TOC table has one fidelity: nothing to sweep there
  await expect(page.locator('#sweep-values')).toHaveValue('1,2,4');
  await page.evaluate(() => window.__lab!.stop());
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#fidelity')).toBeEnabled();
  await expect(page.locator('#echo-mode')).toBeEnabled();
  await expect(page.locator('#fidelity-label')).toContainText('scan group 6 of 6');
  await page.locator('#fidelity').focus();
  await page.keyboard.press('ArrowLeft');
  await expect(page.locator('#fidelity')).toHaveValue('5');
  await expect(page.locator('#sweep-kind option[value="group"]')).toBeEnabled();
  // The sweep the table ruled out comes back with its values; one the person picks stays theirs.
  await expect(page.locator('#sweep-kind')).toHaveValue('group');
  await expect(page.locator('#sweep-values')).toHaveValue('6,3,2');
  // The samples and the test split below are still the flights run's, and say so until its dataset is chosen again.
  await expect(page.locator('#last-run-note')).toHaveText(/^From the last run, on .*[Ff]lights.*; a run on the chosen dataset shows its own\.$/);
  await page.locator('#dataset').selectOption(FLIGHTS);
  await expect(page.locator('#last-run-note')).toBeHidden();
  await page.locator('#sweep-kind').selectOption('echo');
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#sweep-kind')).toHaveValue('echo');
  // Scan groups typed, then a table chosen: set aside and said, not run as echo factors (5,4 is a valid echo sweep); back with images.
  await page.locator('#sweep-kind').selectOption('group');
  await page.locator('#sweep-values').fill('5,4');
  await page.locator('#dataset').selectOption(FLIGHTS);
  await expect(page.locator('#sweep-values')).toHaveValue('1,2,4');
  await expect(page.locator('#sweep-status')).toContainText('your scan groups 5,4 come back with an image dataset');
  // Echo factors typed on the table wait aside in turn (before, "1,2" stayed and ran as scan groups, 5,4 lost).
  await page.locator('#sweep-values').fill('1,2');
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#sweep-kind')).toHaveValue('group');
  await expect(page.locator('#sweep-values')).toHaveValue('5,4');
  await expect(page.locator('#sweep-status')).toHaveText('your echo factors 1,2 come back with a table');
  await page.locator('#dataset').selectOption(FLIGHTS);
  await expect(page.locator('#sweep-values')).toHaveValue('1,2');
  await expect(page.locator('#sweep-status')).toContainText('your scan groups 5,4 come back');
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#sweep-values')).toHaveValue('5,4');
  // Values the table's kind change makes valid, or not, are checked as that kind's (before, the last kind's error stayed).
  await page.locator('#sweep-kind').selectOption('group');
  await page.locator('#sweep-values').fill('9');
  await expect(page.locator('#sweep-values')).toHaveAttribute('aria-invalid', 'true');
  await page.locator('#dataset').selectOption(FLIGHTS);
  await expect(page.locator('#sweep-kind')).toHaveValue('echo');
  await expect(page.locator('#sweep-values')).toHaveAttribute('aria-invalid', 'false');
  await page.locator('#sweep-values').fill('12');
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#sweep-kind')).toHaveValue('group');
  await expect(page.locator('#sweep-values')).toHaveValue('9'); // the scan group typed before the table, checked as one
  await expect(page.locator('#sweep-values')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.locator('#sweep-values-error')).toContainText('scan group');
  // Auto echo sets the echo factor itself: an echo sweep would compare nothing, and says so instead of running.
  await page.locator('#sweep-kind').selectOption('echo');
  await page.locator('#sweep-values').fill('1,2');
  await page.locator('#echo-auto').check();
  await page.locator('#sweep-start').click();
  await expect(page.locator('#sweep-status')).toHaveText('not started: auto echo sets the echo factor itself: untick "auto" to sweep it');
  await expect(page.locator('#state')).toHaveText('stopped');
});

test("a table's disabled echo mode shows what it does (whole batches); the mode chosen for images comes back, in the address too", async ({ page }) => {
  await page.goto('/?echoMode=examples-after-augment');
  await expect(page.locator('#echo-mode')).toHaveValue('examples-after-augment');
  await page.locator('#dataset').selectOption(FLIGHTS);
  // Before, the disabled list read "each example, after the random flip" over a table that echoes batches.
  await expect(page.locator('#echo-mode')).toBeDisabled();
  await expect(page.locator('#echo-mode')).toHaveValue('batches');
  await expect.poll(() => new URL(page.url()).searchParams.get('echoMode')).toBe('examples-after-augment');
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#echo-mode')).toBeEnabled();
  await expect(page.locator('#echo-mode')).toHaveValue('examples-after-augment');
  // Opened on a table, the address's mode waits aside for an image dataset.
  await page.goto(`/?dataset=flights-250k&echoMode=examples`);
  await expect(page.locator('#echo-mode')).toHaveValue('batches');
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#echo-mode')).toHaveValue('examples');
  await expect.poll(() => new URL(page.url()).searchParams.get('echoMode')).toBeNull();
});

test('the model chosen for each kind of dataset comes back with that kind', async ({ page }) => {
  await page.goto('/?model=tiny-cnn');
  await expect(page.locator('#start')).toBeEnabled();
  await page.locator('#dataset').selectOption(FLIGHTS);
  await expect(page.locator('#model')).toHaveValue('logreg'); // a table's models: the first
  await page.locator('#model').selectOption('svm');
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#model')).toHaveValue('tiny-cnn'); // before, the first image model (cnn)
  await page.locator('#dataset').selectOption(FLIGHTS);
  await expect(page.locator('#model')).toHaveValue('svm');
  await expect.poll(() => new URL(page.url()).searchParams.get('model')).toBe('svm');
});

test('a manifest URL typed in writes the model it chose into the address bar, and that address opens as it was left', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('#start')).toBeEnabled();
  await page.locator('#manifest-url').fill(`/${FLIGHTS}`);
  await page.locator('#manifest-url').press('Enter');
  await expect(page.locator('#model')).toHaveValue('logreg');
  await expect.poll(() => new URL(page.url()).searchParams.get('model')).toBe('logreg');
  await page.reload();
  await expect(page.locator('#model')).toHaveValue('logreg');
  await expect(page.locator('#param-error')).toBeHidden();
  await expect(page.locator('#start')).toBeEnabled();
});

test("a URL's model refused for the typed dataset is taken once the manifest field is cleared", async ({ page }) => {
  await page.goto(`/?manifest=${encodeURIComponent(`/${FLIGHTS}`)}&model=cnn`);
  await expect(page.locator('#param-error')).toContainText(
    'URL parameter model=cnn: Small CNN (2 conv + dense) reads image data, the chosen dataset is tabular',
  );
  await expect(page.locator('#start')).toBeDisabled();
  await page.locator('#manifest-url').fill('');
  await page.locator('#manifest-url').press('Enter');
  await expect(page.locator('#param-error')).toBeHidden();
  await expect(page.locator('#model')).toHaveValue('cnn');
  await expect(page.locator('#start')).toBeEnabled();
  await expect.poll(() => new URL(page.url()).searchParams.get('model')).toBe('cnn');
});

test('a batch size from the URL past the limit waits aside on a TOC dataset, and is refused once an image dataset would use it', async ({ page }) => {
  await page.goto('/?batch=2000&dataset=flights-250k');
  await expect(page.locator('#batch-size')).toHaveValue('250');
  // Said above the page as waiting, as size= and group= are (before, only the log said batch= was for image datasets).
  await expect(page.locator('#param-error')).toHaveText(
    'URL parameter batch=2000: batch size must be a whole number from 1 to 1024, not "2000" ' +
      '(not used by a table; it keeps Start off once an image dataset is chosen)',
  );
  await expect(page.locator('#start')).toBeEnabled();
  // The address bar follows the controls, and keeps the person's batch.
  await page.locator('#model').selectOption('svm');
  await expect.poll(() => page.url()).toContain('model=svm');
  expect(new URL(page.url()).searchParams.get('batch')).toBe('2000');
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#batch-size')).toHaveValue('2000');
  await expect(page.locator('#batch-size-error')).toHaveText(/batch size must be a whole number from 1 to 1024/);
  await expect(page.locator('#start')).toBeDisabled();
});

test("a URL's scan group on a TOC table is the person's group for image datasets, not an error", async ({ page }) => {
  await page.goto('/?dataset=flights-250k&group=3');
  await expect(page.locator('#model')).toHaveValue('logreg');
  await expect(page.locator('#param-error')).toBeHidden();
  await expect(page.locator('#start')).toBeEnabled();
  expect(new URL(page.url()).searchParams.get('group')).toBe('3'); // kept in the address bar too, as the README says
  await page.locator('#dataset').selectOption(FASHION);
  await expect(page.locator('#fidelity')).toHaveValue('3');
  await expect(page.locator('#fidelity-label')).toContainText('scan group 3 of 6');
});

test("a URL's scan group past the image dataset chosen after a table is refused as on that dataset, not cut down silently", async ({ page }) => {
  await page.goto('/?dataset=flights-250k&group=9');
  await expect(page.locator('#model')).toHaveValue('logreg');
  await expect(page.locator('#start')).toBeEnabled();
  await page.locator('#dataset').selectOption(FASHION);
  // Before, the slider said group 6 of 6 and the address bar group=6, without a word.
  await expect(page.locator('#param-error')).toContainText('URL parameter group=9: scan group must be a whole number from 1 to 6');
  await expect(page.locator('#start')).toBeDisabled();
  // Moving the slider is the person's answer: the error goes.
  await page.locator('#fidelity').focus();
  await page.keyboard.press('ArrowLeft');
  await expect(page.locator('#param-error')).toBeHidden();
  await expect(page.locator('#start')).toBeEnabled();
});

test('Start pressed straight after typing a manifest URL reads it, then starts', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('#start')).toBeEnabled();
  await page.locator('#manifest-url').fill('/datasets/birdstrikes-toc/manifest.json');
  await page.locator('#start').click(); // no Enter: the click itself leaves the field, which begins the read
  await waitFor(page, 'a step on birdstrikes', (s) => s.steps.length > 0 && s.dataset?.kind === 'tabular');
  await expect(page.locator('#model')).toHaveValue('logreg');
  expect((await page.evaluate(() => window.__lab!.runs())).open).toBe(1);
});

test('scan group and echo set as a run opens are where it starts: its record says so, and no mark is left', async ({ page }) => {
  await page.goto('/?model=mlp&evalEvery=1000&cache=0');
  await expect(page.locator('#start')).toBeEnabled();
  // The run's manifest answers a second late, so the controls are set before its split opens however busy the machine.
  let held = 0;
  await page.route('**/fashion-mnist-mini/manifest.json', async (route) => {
    held++;
    await new Promise((r) => setTimeout(r, 1000));
    await route.continue();
  });
  await page.locator('#start').click();
  await page.locator('#fidelity').fill('2');
  await page.locator('#fidelity').dispatchEvent('change');
  await page.locator('#echo').fill('3'); // applied at once; the field is left only after the run has begun
  await waitFor(page, '5 steps', (s) => s.steps.length >= 5);
  // The row says the echo the run started with while the field still has the focus.
  await expect(page.locator('#runs-table tbody tr').first()).toContainText('group 2, echo 3 (examples)');
  await page.locator('#echo').blur();
  const [record] = await page.evaluate(() => window.__lab!.records());
  expect(record!.settings).toMatchObject({ fidelity: 2, echoFactor: 3 });
  expect(record!.name).toMatch(/^mlp · group 2 · echo 3 · /);
  expect(record!.marks).toEqual([]);
  await expect(page.locator('#runs-table tbody tr').first()).toContainText('group 2, echo 3 (examples)');
  expect(held).toBeGreaterThan(0);
  // No training record was asked for at the group the run was started with: the pipeline reads only once the controls are in.
  const levels = await page.evaluate(() => [
    ...new Set(
      window
        .__lab!.snapshot()
        .fetches.filter((f) => f.record.startsWith('train'))
        .map((f) => f.level),
    ),
  ]);
  expect(levels).toEqual([2]);
});

test('an echo factor typed mid-run is marked where it took effect, not where the field was left', async ({ page }) => {
  await page.goto('/?dataset=flights-250k&model=logreg&evalEvery=1000');
  await page.locator('#start').click();
  await waitFor(page, '20 steps', (s) => s.steps.length >= 20);
  // A table trains fast (CI once saw 21 steps between the fill and a reading after it): the mark is bounded by readings on both sides.
  const before = (await page.evaluate(() => window.__lab!.progress())).last!.step;
  await page.locator('#echo').fill('2'); // applied at once
  const typedAt = (await page.evaluate(() => window.__lab!.progress())).last!.step;
  await waitFor(page, '30 steps more', (s) => s.steps.at(-1)!.step >= typedAt + 30);
  await page.locator('#echo').blur();
  const marks = await page.evaluate(() => window.__lab!.marks());
  expect(marks).toHaveLength(1);
  const [step, label] = marks[0]!.split(': ');
  expect(label).toBe('echo 2');
  expect(Number(step)).toBeGreaterThanOrEqual(before);
  expect(Number(step)).toBeLessThanOrEqual(typedAt); // not where the field was left, 30 steps and more later
  // The learning rate too: the run trains at the typed rate from then on, and its record says so.
  await page.locator('#learning-rate').fill('0.02');
  await page.locator('#learning-rate').blur();
  await expect.poll(() => page.evaluate(() => window.__lab!.marks())).toEqual([marks[0], expect.stringMatching(/^\d+: lr 0\.02$/)]);
  await expect(page.locator('#runs-table tbody tr').first()).toContainText('2 changes');
});

test('scan-group presses in a row with the arrow keys make one mark, at the step the first took effect', async ({ page }) => {
  await page.goto('/?model=mlp&evalEvery=1000');
  await page.locator('#start').click();
  await waitFor(page, '3 steps', (s) => s.steps.length >= 3);
  await page.locator('#fidelity').focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowLeft');
  await expect(page.locator('#fidelity')).toHaveValue('3');
  await expect.poll(() => page.evaluate(() => window.__lab!.marks())).toEqual([expect.stringMatching(/^\d+: group 3$/)]);
  await page.waitForTimeout(1000);
  expect(await page.evaluate(() => window.__lab!.marks())).toHaveLength(1);
  await expect(page.locator('#runs-table tbody tr').first()).toContainText(/\b1 change(?!s)/);
});

/** A few steps of a flights run with `model`, then a pause: the pause saves it. */
async function saveRun(page: Page, model: string): Promise<void> {
  await page.goto(`/?dataset=flights-250k&model=${model}&evalEvery=1000`);
  await page.locator('#start').click();
  await waitFor(page, '3 steps', (s) => s.steps.length >= 3);
  await page.locator('#pause').click();
  await expect(page.locator('#resume-text')).toContainText('Checkpoint saved');
}

test('while a slow server lists the datasets, Start is off and says so; Continue clicked then waits, and the run keeps its model and seed', async ({
  page,
}) => {
  await page.goto('/?dataset=flights-250k&model=logreg&evalEvery=1000&seed=5');
  await page.locator('#start').click();
  await waitFor(page, '3 steps', (s) => s.steps.length >= 3);
  await page.locator('#pause').click();
  await expect(page.locator('#resume-text')).toContainText('Checkpoint saved');
  // Every manifest answers 3 s late: the page opens with its list unread.
  await page.route('**/manifest.json', async (route) => {
    await new Promise((r) => setTimeout(r, 3000));
    await route.continue();
  });
  await page.goto('/?dataset=flights-250k&model=svm&lr=abc&seed=x');
  await expect(page.locator('#resume-text')).toContainText('Saved run');
  await expect(page.locator('#start')).toBeDisabled();
  expect(await page.locator('#start-hint').textContent()).toBe('Start is off: the address and the dataset list are still being read');
  await page.locator('#resume-go').click(); // before the list is in: the address's model (svm) goes in first, then the run's over it
  await waitFor(page, 'the continued run', (s) => s.steps.length >= 2);
  await expect(page.locator('#model')).toHaveValue('logreg');
  // The address's errors went with its values: the run's are in the controls, the banner is gone, the address bar says the run.
  await expect(page.locator('#param-error')).toBeHidden();
  await expect(page.locator('#learning-rate')).not.toHaveAttribute('aria-invalid', 'true');
  await expect.poll(() => new URL(page.url()).searchParams.get('seed')).toBe('5');
  const url = new URL(page.url()).searchParams;
  expect([url.get('model'), url.get('lr')]).toEqual(['logreg', null]);
  await page.evaluate(() => window.__lab!.stop());
});

test('Continue on a saved run puts its dataset and model in the address bar, whatever the list showed', async ({ page }) => {
  await saveRun(page, 'logreg');
  await page.reload();
  await expect(page.locator('#resume-text')).toContainText('Saved run');
  await page.locator('#dataset').selectOption(FASHION);
  await expect.poll(() => new URL(page.url()).searchParams.get('dataset')).toBe('fashion-mnist-mini');
  await page.locator('#resume-go').click();
  await waitFor(page, 'the continued run', (s) => s.steps.length >= 2);
  await expect(page.locator('#dataset')).toHaveValue(FLIGHTS);
  const url = new URL(page.url()).searchParams;
  expect([url.get('dataset'), url.get('model')]).toEqual(['flights-250k', 'logreg']);
});

test('a typed URL that is not a manifest says what came back instead', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('#start')).toBeEnabled();
  // A page (single-page servers answer files they do not have with theirs).
  await page.locator('#manifest-url').fill('/index.html');
  await page.locator('#manifest-url').press('Enter');
  await expect(page.locator('#manifest-url-error')).toHaveText(/not a manifest: the server answered with an HTML page \(HTTP 200\)/);
  await expect(page.locator('#start')).toBeDisabled();
  // JSON, but not a manifest of ours.
  await page.locator('#manifest-url').fill('/package.json');
  await page.locator('#manifest-url').press('Enter');
  await expect(page.locator('#manifest-url-error')).toHaveText(
    /package\.json: not a bytelab manifest \(it has no "format"; "bytelab-pcr" or "bytelab-toc" expected\)/,
  );
  await expect(page.locator('#start')).toBeDisabled();
});

test('Start after a manifest read that hangs was given up for another URL starts on what the fields say now', async ({ page }) => {
  // A server that takes the connection and never answers.
  const silent: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const port = (silent.address() as { port: number }).port;
    await page.goto('/?model=mlp&evalEvery=1000');
    await expect(page.locator('#start')).toBeEnabled();
    await page.locator('#manifest-url').fill(`http://127.0.0.1:${port}/manifest.json`);
    await page.locator('#manifest-url').press('Tab'); // the read begins, and hangs
    await expect(page.locator('#start-hint')).toHaveText('reading the manifest…');
    await page.locator('#manifest-url').fill('');
    await page.locator('#manifest-url').press('Enter'); // back to the dataset in the list
    await expect(page.locator('#start-hint')).toHaveText('');
    await page.locator('#start').click();
    await waitFor(page, 'a step on the listed dataset', (s) => s.steps.length > 0 && s.dataset?.kind === 'image');
  } finally {
    silent.close();
  }
});

test('Discard on a saved run shows the next one saved at once, and the line says how many wait behind it', async ({ page }) => {
  for (const model of ['svm', 'logreg']) await saveRun(page, model);
  await page.reload();
  await expect(page.locator('#resume-text')).toContainText('Logistic regression');
  await expect(page.locator('#resume-text')).toContainText('1 older saved run behind it');
  await page.locator('#resume-discard').focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('#resume-text')).toContainText('Linear SVM');
  await expect(page.locator('#resume-text')).not.toContainText('behind it');
  await expect(page.locator('#resume-discard')).toBeFocused(); // from the keyboard: it fell to the page
  await page.locator('#resume-discard').click();
  await expect(page.locator('#resume-text')).toBeHidden();
});

test('the address bar keeps "/" and ":" as typed when it follows the controls (before: %2F and %3A)', async ({ page }) => {
  await page.goto('/?manifest=datasets/birdstrikes-toc/manifest.json&share=1/2');
  await expect(page.locator('#model')).toHaveValue('logreg');
  await page.locator('#model').selectOption('svm');
  await expect.poll(() => page.url()).toContain('model=svm');
  expect(page.url()).toContain('manifest=datasets/birdstrikes-toc/manifest.json');
  expect(page.url()).toContain('share=1/2');
  const origin = new URL(page.url()).origin;
  await page.locator('#manifest-url').fill(`${origin}/datasets/birdstrikes-toc/manifest.json`);
  await expect.poll(() => page.url()).toContain(`manifest=${origin}/datasets/birdstrikes-toc/manifest.json`);
  // And it reads back as the same controls.
  await page.reload();
  await expect(page.locator('#manifest-url')).toHaveValue(`${origin}/datasets/birdstrikes-toc/manifest.json`);
  await expect(page.locator('#model')).toHaveValue('svm');
  await expect(page.locator('#param-error')).toBeHidden();
});
