// "Prefix cache": what the workers' shared cache of record prefixes holds
// (src/storage/prefix-cache.ts), and a Clear button. The size limit is a setup
// field of the run (main.ts); the page reads the usage, clears, and applies a
// lowered limit at once (limit()), not only when a run next writes.
import { PrefixCache, type CacheUsage } from '../storage/prefix-cache.js';
import { formatBytes } from './format.js';

export interface CachePanel {
  /** Shows what the cache holds, at most once per `throttleMs`; undefined where there is no IndexedDB or when throttled. */
  show(throttleMs?: number): Promise<CacheUsage | undefined>;
  /**
   * The size limit was set to `bytes`: evicts the least recently used prefixes down to it, then shows the usage. 0 turns
   * the cache off for the next run and leaves what it holds (Clear empties it).
   */
  limit(bytes: number): Promise<CacheUsage | undefined>;
}

/** `limitMb`: the size limit field's value in MiB (undefined while it is not a valid one). */
export function setupCachePanel(
  usageLine: HTMLElement,
  clear: HTMLButtonElement,
  log: (message: string) => void,
  limitMb: () => number | undefined,
): CachePanel {
  const cache = PrefixCache.available ? new PrefixCache(0) : undefined;
  let shownAt = -Infinity;
  /** A throttled call's read, due once the throttle allows it. */
  let due: ReturnType<typeof setTimeout> | undefined;

  async function show(throttleMs = 0): Promise<CacheUsage | undefined> {
    if (!cache) return undefined;
    const wait = shownAt + throttleMs - performance.now();
    if (wait > 0) {
      // Not dropped: a throttled call is read when the throttle allows. Before, the last of a burst was lost, and a one-record
      // table (fetched once, then read from the cache) kept saying "Holds 0 B" while the tile said 73% came from the cache.
      due ??= setTimeout(() => {
        due = undefined;
        void show();
      }, wait);
      return undefined;
    }
    clearTimeout(due);
    due = undefined;
    shownAt = performance.now();
    try {
      const u = await cache.usage();
      const holds = `${formatBytes(u.bytes)} in ${u.entries} record prefix${u.entries === 1 ? '' : 'es'}`;
      // Limit 0 turns the cache off for runs; what earlier runs left stays until Clear (said, or the line would read as in use).
      usageLine.textContent =
        limitMb() === 0 ? `Off for runs (limit 0).${u.entries > 0 ? ` Holds ${holds} from earlier runs: Clear empties it.` : ''}` : `Holds ${holds}.`;
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
  async function limit(bytes: number): Promise<CacheUsage | undefined> {
    if (cache && bytes > 0) await cache.trim(bytes).catch((err: Error) => log(`the prefix cache could not be trimmed to its new limit: ${err.message}`));
    return show();
  }

  return { show, limit };
}
