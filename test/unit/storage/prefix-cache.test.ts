// The prefix cache's size limit on its own (fake-indexeddb stands in for the browser's): a lower limit is applied when a
// cache opens with it, even if it then only reads, and at once when trimmed to it; the page's reader (limit 0) evicts nothing.
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { PrefixCache } from '../../../src/storage/prefix-cache.js';

let dbCount = 0;
const freshName = () => `limit-test-${dbCount++}`;
const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

/** A cache holding four 100-byte prefixes a..d, d used last, then a read again (the most recent). */
async function filled(name: string): Promise<void> {
  const c = new PrefixCache(1000, name);
  for (const [i, url] of ['a', 'b', 'c', 'd'].entries()) await c.write(url, bytes(100, i));
  await c.read('a');
  c.close();
}

describe('prefix cache size limit', () => {
  it('a cache opened with a lower limit evicts down to it before its first read, least recently used first', async () => {
    const name = freshName();
    await filled(name);
    const reader = new PrefixCache(250, name);
    expect(await reader.read('a')).toMatchObject({ bytes: bytes(100, 0) }); // a hit: nothing written
    expect(await reader.usage()).toEqual({ bytes: 200, entries: 2 });
    expect(await reader.read('b')).toBeUndefined();
    expect(await reader.read('c')).toBeUndefined();
    expect(await reader.read('d')).toBeDefined();
    reader.close();
  });

  it('trim() evicts down to a new limit at once; the page reader (limit 0) evicts nothing by opening', async () => {
    const name = freshName();
    await filled(name);
    const page = new PrefixCache(0, name);
    expect(await page.usage()).toEqual({ bytes: 400, entries: 4 });
    await page.trim(150);
    expect(await page.usage()).toEqual({ bytes: 100, entries: 1 });
    expect(await page.read('a')).toBeDefined(); // the most recently used stays
    page.close();
  });
});
