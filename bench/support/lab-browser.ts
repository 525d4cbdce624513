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
