// Starts the lab for a benchmark: a Vite dev server on a free localhost port
// (no HMR, no watching: a reload would restart the run) and the system Chromium.
import { createServer as createNetServer } from 'node:net';
import { chromium, type Browser, type Page } from '@playwright/test';
import { createServer, type ViteDevServer } from 'vite';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../test/support/chromium.js';

export interface LabBrowser {
  page: Page;
  origin: string;
  close(): Promise<void>;
}

/** A TCP port free on localhost right now, for a bench's own server. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** `cacheDir`: Vite's dependency cache, when two trees share one node_modules (a worktree's symlink) and must not rewrite each other's. */
export async function openLabBrowser(root: string, cacheDir?: string): Promise<LabBrowser> {
  const port = await freePort();
  let server: ViteDevServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await createServer({
      root,
      cacheDir,
      clearScreen: false,
      logLevel: 'warn',
      server: { host: 'localhost', port, strictPort: true, hmr: false, watch: null },
    });
    await server.listen();
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const [b, s] = [browser, server];
    return { page, origin: `http://localhost:${port}`, close: async () => void (await Promise.allSettled([b.close(), s.close()])) };
  } catch (err) {
    await browser?.close();
    await server?.close();
    throw err;
  }
}

/**
 * The page's results, from `window[name]` (a value, or a Promise of one) once the page sets it: waited for again when Vite
 * reloads the page to pre-bundle a dependency it discovered (at most twice). `problems`: the page's errors so far, said
 * with a failure. Waits `appearMs` for the name to be set, then `resultMs` for its value.
 */
export async function pageResults<T>(page: Page, name: string, problems: string[], appearMs: number, resultMs: number, log: (m: string) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      await page.waitForFunction((n) => (window as unknown as Record<string, unknown>)[n] !== undefined, name, { timeout: appearMs, polling: 500 });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`the page gave no results within ${resultMs / 1000} s`)), resultMs);
      });
      try {
        return await Promise.race([page.evaluate((n) => (window as unknown as Record<string, unknown>)[n], name) as Promise<T>, late]);
      } finally {
        clearTimeout(timer);
      }
    } catch (e) {
      const message = (e as Error).message;
      if (attempt < 3 && /context was destroyed|navigat/i.test(message)) {
        log('the page reloaded (Vite optimised a dependency); waiting for it again');
        continue;
      }
      throw new Error(`${message.split('\n')[0]}${problems.length ? `\npage errors:\n  ${problems.join('\n  ')}` : ''}`);
    }
  }
}
