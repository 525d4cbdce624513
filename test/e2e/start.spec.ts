// `npm start` as a person runs it: the lab's own build (vite build and vite preview in mode "lab", vite.config.ts), with
// public/ served as it is. A restart of that server leaves an open page and its run alone: under the dev server, Vite's
// client reloaded the page once its socket came back, and the run lost its steps since its last checkpoint.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { build, type PreviewServer, preview } from 'vite';
import { waitFor } from './helpers.js';

test("npm start's server: the lab trains from it, a restart of the server leaves the page and its run alone, and the model downloads", async ({ page }) => {
  test.slow(); // a build, then a run across a restart, on a shared 2-core machine
  // Its own folder: a person's `npm start` may be serving node_modules/.cache/bytelab-lab meanwhile.
  const outDir = mkdtempSync(join(tmpdir(), 'bytelab-start-'));
  await build({ mode: 'lab', logLevel: 'error', build: { outDir, emptyOutDir: true } });
  const serve = (port: number): Promise<PreviewServer> =>
    preview({ mode: 'lab', logLevel: 'error', build: { outDir }, preview: { host: '127.0.0.1', port, strictPort: true, open: false } });
  let server = await serve(0);
  const port = (server.httpServer.address() as AddressInfo).port;
  try {
    await page.goto(`http://127.0.0.1:${port}/?model=tiny-cnn&batch=32&evalEvery=1000&cache=0`);
    await page.evaluate(() => Object.assign(window, { keptSinceOpened: true }));
    await page.locator('#start').click();
    const before = await waitFor(page, '5 steps', (s) => s.steps.length >= 5);
    await server.close();
    await page.waitForTimeout(2_000);
    const restarted = Date.now();
    server = await serve(port);
    // Records read from the restarted server, not only batches read ahead before it went.
    const after = await waitFor(
      page,
      'a training record read after the restart, and 10 steps more',
      (s) => s.steps.length >= before.steps.length + 10 && s.fetches.some((f) => f.record.startsWith('train') && f.endedAt > restarted && f.status === 206),
    );
    expect(after.state).toBe('running');
    expect(await page.evaluate(() => (window as { keptSinceOpened?: boolean }).keptSinceOpened)).toBe(true);
    // Download in the production build (it failed there, "reading 'save'", while the dev server's tests passed).
    await page.locator('#stop').click();
    const names: string[] = [];
    page.on('download', (d) => names.push(d.suggestedFilename()));
    await page.locator('#model-download').click();
    await expect.poll(() => names.sort()).toEqual([expect.stringMatching(/\.json$/), expect.stringMatching(/\.weights\.bin$/)]);
    await expect(page.locator('#model-status')).toContainText('downloaded');
  } finally {
    await server.close();
    rmSync(outDir, { recursive: true, force: true });
  }
});
