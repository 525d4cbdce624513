// The lab for every person and every screen: an automated accessibility check
// (axe-core) idle, during and after a run, in light and dark; the keyboard alone
// starts a run; the fidelity slider and the charts speak; phone, laptop and wide
// screens show the page without sideways scrolling, charts fitting their boxes.
// Screenshots of each width and of dark mode are attached to the report.
import AxeBuilder from '@axe-core/playwright';
import { expect, type Page, type TestInfo, test } from '@playwright/test';
import { snapshot, waitFor } from './helpers.js';

/** WCAG 2.0, 2.1 and 2.2 A and AA and axe's best practices; the tags also turn on WCAG 2.2's target size, off in axe's default set. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];

async function expectNoAxeViolations(page: Page, what: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
  const found = violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help}\n` +
      v.nodes
        .slice(0, 5)
        .map((n) => `    ${n.target.join(' ')}: ${(n.failureSummary ?? '').replace(/\s+/g, ' ')}`)
        .join('\n'),
  );
  expect(found, `axe, ${what}`).toEqual([]);
}

async function ready(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await expect(page.locator('#backend')).toContainText('webgpu');
}

async function shoot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  await expect.poll(() => misfits(page), { message: `charts before ${name}` }).toEqual([]);
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))); // painted after a resize
  const path = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path, fullPage: true });
  await testInfo.attach(name, { path, contentType: 'image/png' });
}

const openAllHelp = (page: Page) => page.locator('details.help').evaluateAll((ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));

/** Each chart's drawing width (canvas pixels over the pixel ratio), and the width of the box it sits in. */
const chartWidths = (page: Page) =>
  page
    .locator('.charts > div')
    .evaluateAll((boxes) => boxes.map((b) => ({ box: Math.floor(b.clientWidth), canvas: b.querySelector('canvas')!.width / devicePixelRatio })));
/** The charts whose drawing does not fill their box. */
const misfits = async (page: Page) => (await chartWidths(page)).filter(({ box, canvas }) => box !== canvas);

/** Light opaque pixels (luminance over 0.7) left of the loss chart's plot, where only the y axis' numbers are drawn. */
const lightChartPixels = (page: Page) =>
  page.locator('#chart-loss canvas').evaluate((c: HTMLCanvasElement) => {
    const d = c.getContext('2d')!.getImageData(0, 0, Math.round(40 * devicePixelRatio), c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3]! > 200 && (0.2126 * d[i]! + 0.7152 * d[i + 1]! + 0.0722 * d[i + 2]!) / 255 > 0.7) n++;
    return n;
  });

test('axe finds nothing on the idle page, help closed and open, in light and dark', async ({ page }) => {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    await ready(page, '/');
    await expectNoAxeViolations(page, `idle, ${colorScheme}`);
    await openAllHelp(page);
    await expectNoAxeViolations(page, `idle with every help open, ${colorScheme}`);
  }
  // The help's links reach the docs from the served page.
  const links = await page.locator('details.help a').evaluateAll((as) => [...new Set(as.map((a) => (a as HTMLAnchorElement).href))]);
  expect(links.length).toBeGreaterThan(3);
  for (const url of links) {
    const r = await page.request.get(url);
    expect(r.status(), url).toBe(200);
    expect(await r.text(), url).toMatch(/^# /);
  }
});

test('during and after a run: axe finds nothing (light and dark), the charts and the slider speak, the state is announced', async ({ page }) => {
  await ready(page, '/?model=tiny-cnn&batch=32&evalEvery=10&autostart=1');
  const running = await waitFor(page, 'an evaluation', (s) => s.evals.length > 0 && s.steps.length >= 12);
  await expect(page.locator('#announce')).toHaveText('run running');
  await expectNoAxeViolations(page, 'during a run, light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectNoAxeViolations(page, 'during a run, dark');
  await page.emulateMedia({ colorScheme: 'light' });

  // The charts' text alternatives name what they show, up to a recent step.
  const loss = page.locator('#chart-loss');
  await expect(loss).toHaveAttribute('role', 'img');
  const lossSummary = /^training loss chart: step 1 to (\d+), latest [\d.]+$/;
  await expect(loss).toHaveAttribute('aria-label', lossSummary);
  await expect
    .poll(async () => Number(lossSummary.exec((await loss.getAttribute('aria-label'))!)![1]), { message: 'the loss summary follows the run' })
    .toBeGreaterThanOrEqual(running.steps.at(-1)!.step);
  await expect(page.locator('#chart-acc')).toHaveAttribute('aria-label', /^test accuracy chart: step \d+ to \d+, latest (0|0\.\d+|1)$/);

  // The slider says which scan group and what it costs per image, from the dataset the run opened, as it moves.
  const info = running.dataset!;
  const slider = page.locator('#fidelity');
  await slider.focus();
  for (const group of [5, 4, 3]) {
    await page.keyboard.press('ArrowLeft');
    await expect(slider).toHaveValue(String(group));
    const perImage = (info.bytesPerLevel[group - 1]! / info.examples).toFixed(0);
    await expect(slider).toHaveAttribute('aria-valuetext', `scan group ${group} of ${info.fidelityLevels}, ${perImage} bytes per image`);
  }
  expect(Number(info.bytesPerLevel[2]! / info.examples)).toBeLessThan(info.bytesPerLevel[5]! / info.examples);

  await page.locator('#stop').click();
  await expect(page.locator('#announce')).toHaveText('run stopped');
  await expectNoAxeViolations(page, 'after a run, light');
  await page.emulateMedia({ colorScheme: 'dark' });
  await expectNoAxeViolations(page, 'after a run, dark');
});

test('a TOC table run: axe finds nothing, and the slider says there is one fidelity', async ({ page }) => {
  await ready(page, '/?dataset=birdstrikes&model=logreg&evalEvery=10&autostart=1');
  const s = await waitFor(page, 'an evaluation', (x) => x.evals.length > 0);
  await expect(page.locator('#features')).toBeVisible();
  await expectNoAxeViolations(page, 'during a TOC run');
  const perRow = (s.dataset!.bytesPerLevel[0]! / s.dataset!.examples).toFixed(1);
  await expect(page.locator('#fidelity')).toHaveAttribute('aria-valuetext', `one fidelity: TOC is lossless, ${perRow} bytes per row`);
  await page.evaluate(() => window.__lab!.stop());
});

test('a failure is announced at once: a refused autostart, and a page without WebGPU', async ({ page }) => {
  await ready(page, '/?batch=0&autostart=1');
  await expect(page.locator('#alert')).toContainText('autostart refused');
  await expect(page.locator('#alert')).toHaveAttribute('role', 'alert');

  await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }));
  await page.goto('/');
  await expect(page.locator('#alert')).toContainText('WebGPU is unavailable');
});

test('the keyboard alone: Tab reaches every control with a visible focus ring, a help opens with Enter, Space and Enter start runs', async ({ page }) => {
  await ready(page, '/?model=tiny-cnn&batch=32&evalEvery=1000');
  await expect(page.locator('#start')).toBeEnabled();
  const seen: string[] = [];
  for (let i = 0; i < 60 && !seen.includes('start'); i++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement;
      const css = getComputedStyle(el);
      const label = el.id || `${el.tagName.toLowerCase()}:${el.textContent?.trim()}`;
      return { label, ring: css.outlineStyle !== 'none' && Number.parseFloat(css.outlineWidth) >= 2 };
    });
    expect(focused.ring, `focus ring on ${focused.label}`).toBe(true);
    seen.push(focused.label);
  }
  // In page order: the dataset, its help, the manifest URL, ... then Start.
  expect(seen.slice(0, 3)).toEqual(['dataset', 'summary:?About datasets, PCR and TOC', 'manifest-url']);
  for (const id of ['model', 'batch-size', 'learning-rate', 'eval-every', 'readers']) expect(seen).toContain(id);
  expect(seen.at(-1)).toBe('start');

  // A help disclosure opens and closes from the keyboard.
  const help = page.locator('details.help').first();
  await help.locator('summary').focus();
  await page.keyboard.press('Enter');
  await expect(help).toHaveAttribute('open', '');
  await page.keyboard.press('Enter');
  await expect(help).not.toHaveAttribute('open', '');

  await page.locator('#start').focus();
  await page.keyboard.press('Space');
  await waitFor(page, 'the run Space started', (s) => s.steps.length > 0);
  // Start turned off by its own press hands focus to Pause (it fell to the page), and Pause keeps it: Space pauses, Space
  // resumes.
  await expect(page.locator('#pause')).toBeFocused();
  await page.keyboard.press('Space');
  await expect(page.locator('#state')).toHaveText('paused', { timeout: 30_000 });
  await expect(page.locator('#pause')).toBeFocused();
  await page.keyboard.press('Space');
  await expect(page.locator('#state')).toHaveText(/running|evaluating/, { timeout: 30_000 });
  await page.keyboard.press('Tab');
  await expect(page.locator('#stop')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('#state')).toHaveText('stopped', { timeout: 10_000 });
  await expect(page.locator('#start')).toBeFocused(); // Stop turned off: focus goes to Start

  await page.keyboard.press('Enter');
  await waitFor(page, 'the run Enter started', (s) => s.steps.length > 0 && s.state !== 'stopped');
  await page.evaluate(() => window.__lab!.stop());
});

test('any screen: 390, 1024 and 1920 px and dark mode, without sideways scrolling, charts fitting their boxes', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await ready(page, '/?model=tiny-cnn&batch=32&evalEvery=10&autostart=1');
  await waitFor(page, 'an evaluation', (s) => s.evals.length > 0 && s.steps.length >= 12);
  await page.evaluate(() => window.__lab!.pause());
  await expect(page.locator('#state')).toHaveText('paused');
  const wide = await chartWidths(page);

  for (const width of [1920, 1024, 390]) {
    await page.setViewportSize({ width, height: 900 });
    // Each chart's canvas follows its box (ResizeObserver), whatever the width.
    await expect.poll(() => misfits(page), { message: `charts at ${width} px` }).toEqual([]);
    const { scrollWidth, viewport } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, viewport: window.innerWidth }));
    expect(scrollWidth, `page width at ${width} px`).toBeLessThanOrEqual(viewport);
    await shoot(page, testInfo, `lab-${width}`);
  }
  const narrow = await chartWidths(page);
  // At 390 px the charts stack, each nearly the screen's width; at 1920 px two sit side by side, wider still.
  expect(narrow.every((c) => c.canvas === narrow[0]!.canvas && c.canvas > 300)).toBe(true);
  expect(wide[0]!.canvas).toBeGreaterThan(narrow[0]!.canvas);

  // Dark mode: the page and the charts' axis text turn over.
  expect(await lightChartPixels(page)).toBe(0);
  await page.emulateMedia({ colorScheme: 'dark' });
  const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  const [r, g, b] = background.match(/\d+/g)!.map(Number);
  expect((0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255, `page background ${background}`).toBeLessThan(0.2);
  await expect.poll(() => lightChartPixels(page), { message: 'light axis text on the dark chart' }).toBeGreaterThan(10); // light mode: none at all
  await shoot(page, testInfo, 'lab-390-dark');
  await page.setViewportSize({ width: 1024, height: 900 });
  await shoot(page, testInfo, 'lab-1024-dark');
  expect((await snapshot(page)).state).toBe('paused');
  await page.evaluate(() => window.__lab!.stop());
});

test('the log is a Tab stop only once it has lines: empty, Tab went to it and showed no focus ring anywhere', async ({ page }) => {
  await ready(page, '/');
  await expect(page.locator('#log li')).toHaveCount(0);
  // The import's file picker is the last control before the log.
  await page.locator('#runs-import').focus();
  await page.keyboard.press('Tab');
  const focused = () => page.evaluate(() => ({ id: document.activeElement?.id, width: document.activeElement?.getBoundingClientRect().width ?? 0 }));
  expect((await focused()).id).not.toBe('log');
  // A line in it (a refused import is logged): Tab reaches it, a box the ring is drawn around, and the keyboard scrolls it.
  await page.locator('#runs-import').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('notes') });
  await expect(page.locator('#log li')).toHaveCount(1);
  await page.locator('#runs-import').focus();
  await page.keyboard.press('Tab');
  const log = await focused();
  expect(log.id).toBe('log');
  expect(log.width).toBeGreaterThan(100);
  expect((await page.locator('#log').boundingBox())!.height).toBeGreaterThan(10);
  await expectNoAxeViolations(page, 'idle, a line in the log');
});
