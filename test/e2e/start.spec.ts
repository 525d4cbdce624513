// `npm start` as a person runs it: the lab's own build (vite build and vite preview in mode "lab", vite.config.ts), with
// public/ served as it is. A restart of that server leaves an open page and its run alone: under the dev server, Vite's
// client reloaded the page once its socket came back, and the run lost its steps since its last checkpoint.
import type { AddressInfo } from 'node:net';
import { expect, test } from '@playwright/test';
import { build, type PreviewServer, preview } from 'vite';
import { waitFor } from './helpers.js';

const serve = (port: number): Promise<PreviewServer> =>
  preview({ mode: 'lab', logLevel: 'error', preview: { host: '127.0.0.1', port, strictPort: true, open: false } });

test("npm start's server: the lab trains from it, and a restart of the server leaves the page and its run alone", async ({ page }) => {
  test.setTimeout(180_000);
  await build({ mode: 'lab', logLevel: 'error' });
  let server = await serve(0);
  const port = (server.httpServer.address() as AddressInfo).port;
  try {
    await page.goto(`http://127.0.0.1:${port}/?model=tiny-cnn&batch=32&evalEvery=1000&cache=0`);
    await page.evaluate(() => Object.assign(window, { keptSinceOpened: true }));
    await page.locator('#start').click();
    const before = await waitFor(page, '5 steps', (s) => s.steps.length >= 5);
    await server.close();
    await page.waitForTimeout(2_000);
    server = await serve(port);
    await waitFor(page, '10 steps after the restart', (s) => s.steps.length >= before.steps.length + 10);
    expect(await page.evaluate(() => (window as { keptSinceOpened?: boolean }).keptSinceOpened)).toBe(true);
    await expect(page.locator('#state')).toHaveText('running');
  } finally {
    await server.close();
  }
});
