import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/shared/random.js';
import { chunk, echo, shuffleBuffer } from '../../../src/pipeline/stages.js';

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function* range(n: number): AsyncGenerator<number> {
  for (let i = 0; i < n; i++) yield i;
}

describe('echo stage', () => {
  it('repeats every item exactly e times for an integer e, in order', async () => {
    const out = await collect(echo(range(5), { factor: () => 3, random: seededRandom(1) }));
    expect(out).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);
  });

  it('passes items through once when e = 1', async () => {
    expect(await collect(echo(range(100), { factor: () => 1, random: seededRandom(1) }))).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('realises a fractional e by a Bernoulli draw: the mean count is e', async () => {
    const n = 20_000;
    const e = 1.5;
    const out = await collect(echo(range(n), { factor: () => e, random: seededRandom(3) }));
    const counts = new Map<number, number>();
    for (const x of out) counts.set(x, (counts.get(x) ?? 0) + 1);
    expect([...counts.values()].every((c) => c === 1 || c === 2)).toBe(true);
    // Binomial(n, 0.5) extra copies: 4 standard deviations is ~283.
    expect(Math.abs(out.length - n * e)).toBeLessThan(4 * Math.sqrt(n * 0.25));
  });

  it('reads the factor per item, so a change applies at once', async () => {
    let e = 1;
    const out: number[] = [];
    for await (const x of echo(range(6), { factor: () => e, random: seededRandom(1) })) {
      out.push(x);
      if (x === 2) e = 2;
    }
    expect(out).toEqual([0, 1, 2, 3, 3, 4, 4, 5, 5]);
  });
});

describe('shuffle buffer and batching', () => {
  it('emits a permutation of its input, not the input order', async () => {
    const out = await collect(shuffleBuffer(range(500), () => 64, seededRandom(5)));
    expect([...out].sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(out).not.toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('a shrinking capacity emits the surplus at once; a growing one holds more back', async () => {
    let cap = 8;
    const emittedAt: number[] = [];
    let seen = 0;
    async function* counted() {
      for (let i = 0; i < 40; i++) {
        seen = i + 1;
        if (i === 20) cap = 2;
        yield i;
      }
    }
    for await (const _ of shuffleBuffer(counted(), () => cap, seededRandom(2))) emittedAt.push(seen);
    // Item 8 (the 9th) overflows 8; at item 20 the buffer shrinks to 2, emitting 7 at once.
    expect(emittedAt.filter((n) => n === 9)).toHaveLength(1);
    expect(emittedAt.filter((n) => n === 21)).toHaveLength(7);
    expect(emittedAt).toHaveLength(40);
  });

  it('warms up: emits from the first arrivals, holding half of what came until it holds its capacity, and again when it grows', async () => {
    let cap = 64;
    const emittedAt: number[] = [];
    let seen = 0;
    async function* counted() {
      for (let i = 0; i < 400; i++) {
        seen = i + 1;
        if (i === 200) cap = 100;
        yield i;
      }
    }
    const out: number[] = [];
    for await (const x of shuffleBuffer(counted(), () => cap, seededRandom(4))) {
      emittedAt.push(seen);
      out.push(x);
    }
    const emittedBy = (n: number) => emittedAt.filter((at) => at <= n).length;
    // Two in, one out from the start: the first batch of 32 leaves after 63 arrivals, not after 64 + 32.
    for (let n = 1; n <= 200; n++) expect(emittedBy(n), `after ${n}`).toBe(n - Math.min(64, Math.floor(n / 2)));
    expect(emittedBy(63)).toBe(32);
    // Raised to 100 at arrival 201: it grows by half an item per arrival instead of emitting nothing until it holds 100 (then drains).
    for (let n = 201; n < 400; n++) expect(emittedBy(n), `after ${n}`).toBe(n - Math.min(100, 64 + Math.floor((n - 200) / 2)));
    // Counts decide when it emits, the seed what: a permutation, the same for the same seed.
    expect([...out].sort((a, b) => a - b)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    cap = 64;
    const again = await collect(shuffleBuffer(counted(), () => cap, seededRandom(4)));
    expect(again).toEqual(out);
  });

  it('counts echoed copies, and a stage that is not active passes items through', async () => {
    let echoed = 0;
    expect(await collect(echo(range(4), { factor: () => 3, random: seededRandom(1), echoed: () => echoed++ }))).toHaveLength(12);
    expect(echoed).toBe(8);
    // The copies, and only they, are marked: the fresh item comes first.
    const marked = await collect(echo(range(2), { factor: () => 3, random: seededRandom(1), markCopy: (n) => -n - 1 }));
    expect(marked).toEqual([0, -1, -1, 1, -2, -2]);
    expect(await collect(echo(range(4), { factor: () => 3, random: seededRandom(1), active: () => false }))).toEqual([0, 1, 2, 3]);
  });

  it('batches items and keeps the short last batch', async () => {
    const out = await collect(chunk(range(10), () => 4));
    expect(out.map((b) => b.length)).toEqual([4, 4, 2]);
  });
});
