// "Prefix cache": what the workers' shared cache of record prefixes holds
// (src/storage/prefix-cache.ts), and a Clear button. The size limit is a setup
// field of the run (main.ts); the page itself only reads the usage and clears.
import { PrefixCache, type CacheUsage } from '../storage/prefix-cache.js';
import { formatBytes } from './format.js';

export interface CachePanel {
  /** Shows what the cache holds, at most once per `throttleMs`; undefined where there is no IndexedDB or when throttled. */
  show(throttleMs?: number): Promise<CacheUsage | undefined>;
}

export function setupCachePanel(usageLine: HTMLElement, clear: HTMLButtonElement, log: (message: string) => void): CachePanel {
  const cache = PrefixCache.available ? new PrefixCache(0) : undefined;
  let shownAt = -Infinity;

  async function show(throttleMs = 0): Promise<CacheUsage | undefined> {
    if (!cache || performance.now() - shownAt < throttleMs) return undefined;
    shownAt = performance.now();
    try {
      const u = await cache.usage();
      usageLine.textContent = `Holds ${formatBytes(u.bytes)} in ${u.entries} record prefix${u.entries === 1 ? '' : 'es'}.`;
      return u;
    } catch (err) {
      usageLine.textContent = `The cache cannot be read here: ${(err as Error).message}`;
      return undefined;
    }
  }

  clear.addEventListener('click', async () => {
    await cache?.clear();
    await show();
    log('prefix cache cleared');
  });
  return { show };
}
