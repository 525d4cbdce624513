// The seeded PRNG of bytelab's data: shuffles, echo draws and the synthetic
// datasets all draw from sfc32 (Chris Doty-Humphrey's small fast counting
// generator), so the same seed gives the same numbers everywhere. (A model's
// initial weights are drawn by tfjs's seeded initializers, from hash32 of the seed.)
import { Fnv1a } from './hash.js';

export type Random = () => number;

/** A 32-bit hash of strings and integers: FNV-1a over the parts, then murmur3's finaliser to spread the bits. */
export function hash32(...parts: (string | number)[]): number {
  const fnv = new Fnv1a();
  for (const part of parts) {
    if (typeof part === 'string') for (let i = 0; i < part.length; i++) fnv.u16(part.charCodeAt(i));
    else fnv.u32(part | 0);
    fnv.byte(0x1f); // separator, so ('ab', 'c') and ('a', 'bc') differ
  }
  let h = fnv.value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A seeded stream whose state can be written down and set again (a pipeline's stream snapshot keeps it). */
export interface SeededRandom extends Random {
  /** sfc32's four words. */
  state(): number[];
  setState(words: number[]): void;
}

/** Uniform numbers in [0, 1) from sfc32, its state seeded from `seed` and two hashes of it, after 12 discarded draws. */
export function seededRandom(seed: number): SeededRandom {
  let a = seed >>> 0;
  let b = hash32(seed, 1);
  let c = hash32(seed, 2);
  let d = 1;
  const next = () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  const state = () => [a, b, c, d];
  const setState = (words: number[]) => {
    if (!(words.length === 4 && words.every(Number.isInteger))) throw new Error(`a random state is four whole numbers, got ${JSON.stringify(words)}`);
    [a, b, c, d] = words as [number, number, number, number];
  };
  return Object.assign(next, { state, setState });
}

/** Fisher-Yates, in place. */
export function shuffleInPlace<T>(items: T[], random: Random): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
