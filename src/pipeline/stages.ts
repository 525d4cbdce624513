// Generic pipeline stages over async iterables: echo, shuffle buffer, batch.
import { shuffleInPlace, type Random } from '../shared/random.js';

/**
 * Data echoing (Choi et al. 2019): repeats every upstream item e times so the
 * downstream consumer keeps working while upstream is slow. A fractional e is
 * realised per item: floor(e) copies plus one more with probability e - floor(e).
 * `factor` is read per item, so the control takes effect immediately. With
 * `clone`, every copy but the last is a clone, for items whose buffers are
 * transferred (and so detached) once consumed.
 */
export async function* echo<T>(source: AsyncIterable<T>, factor: () => number, random: Random, clone?: (item: T) => T): AsyncGenerator<T> {
  for await (const item of source) {
    const e = Math.max(1, factor());
    const copies = Math.floor(e) + (random() < e - Math.floor(e) ? 1 : 0);
    for (let c = 0; c < copies; c++) yield clone && c < copies - 1 ? clone(item) : item;
  }
}

/**
 * A shuffle buffer: holds up to `capacity` items and emits a random one each time
 * a new one arrives, then drains in random order.
 */
export async function* shuffleBuffer<T>(source: AsyncIterable<T>, capacity: number, random: Random): AsyncGenerator<T> {
  const buffer: T[] = [];
  for await (const item of source) {
    if (buffer.length < capacity) {
      buffer.push(item);
      continue;
    }
    const j = Math.floor(random() * capacity);
    const out = buffer[j]!;
    buffer[j] = item;
    yield out;
  }
  shuffleInPlace(buffer, random);
  yield* buffer;
}

/** Groups items into arrays of `size`; the last, shorter one too. */
export async function* chunk<T>(source: AsyncIterable<T>, size: () => number): AsyncGenerator<T[]> {
  let group: T[] = [];
  for await (const item of source) {
    group.push(item);
    if (group.length >= size()) {
      yield group;
      group = [];
    }
  }
  if (group.length) yield group;
}
