// The cache panel applies a lowered "Keep up to" at once and shows what is left (fake-indexeddb for the browser's).
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { setupCachePanel } from '../../../src/app/cache-panel.js';
import { PrefixCache } from '../../../src/storage/prefix-cache.js';

describe('cache panel', () => {
  it('a lower limit evicts down to it and the usage line says so; 0 (cache off) leaves the entries, and says so', async () => {
    const runs = new PrefixCache(10 * 2 ** 20); // the page's database, as a run's workers filled it
    for (let i = 0; i < 17; i++) await runs.write(`r${i}`, new Uint8Array(160 * 1024).fill(i));
    runs.close();
    const line = { textContent: '' } as HTMLElement;
    const clear = { addEventListener: () => undefined } as unknown as HTMLButtonElement;
    let field = 512; // "Keep up to", in MiB
    const panel = setupCachePanel(
      line,
      clear,
      () => undefined,
      () => field,
    );
    await panel.show();
    expect(line.textContent).toBe('Holds 2.66 MiB in 17 record prefixes.');
    field = 0;
    expect(await panel.limit(0)).toEqual({ bytes: 17 * 160 * 1024, entries: 17 });
    // Off: the line does not read as a cache in use (it had said "Holds 2.66 MiB" as if runs used it).
    expect(line.textContent).toBe('Off for runs (limit 0). Holds 2.66 MiB in 17 record prefixes from earlier runs: Clear empties it.');
    field = 1;
    expect(await panel.limit(2 ** 20)).toEqual({ bytes: 6 * 160 * 1024, entries: 6 });
    expect(line.textContent).toBe('Holds 960.0 KiB in 6 record prefixes.');
  });

  it('a throttled call is not dropped: what was written meanwhile is shown once the throttle allows', async () => {
    const line = { textContent: '' } as HTMLElement;
    const clear = { addEventListener: () => undefined } as unknown as HTMLButtonElement;
    const panel = setupCachePanel(
      line,
      clear,
      () => undefined,
      () => 512,
    );
    const runs = new PrefixCache(10 * 2 ** 20);
    await runs.clear();
    await panel.show(200); // the run's first fetch: nothing written yet
    expect(line.textContent).toBe('Holds 0 B in 0 record prefixes.');
    await runs.write('train-0', new Uint8Array(1024));
    expect(await panel.show(200)).toBeUndefined(); // throttled: the last call of a burst
    await new Promise((r) => setTimeout(r, 400));
    expect(line.textContent).toBe('Holds 1.0 KiB in 1 record prefix.'); // before: "Holds 0 B" until the next call
    runs.close();
  });
});
