// Generic pipeline stages over async iterables: echo, shuffle buffer, batch.
import { shuffleInPlace, type Random } from '../shared/random.js';

export interface EchoStage<T> {
  /** Read per item, so the control takes effect immediately. */
  factor(): number;
  random: Random;
  /** Whether this echo stage is the one in use (read per item: the echo mode is a live control); always when left out. */
  active?(): boolean;
  /** For items whose buffers are transferred (and so detached) once consumed: every copy but the last is a clone. */
  clone?(item: T): T;
  /** Called once per extra copy (the echoed, not the fresh, items), with the item copied. */
  echoed?(item: T): void;
}

/**
 * Data echoing (Choi et al. 2019): repeats every upstream item e times so the
 * downstream consumer keeps working while upstream is slow. A fractional e is
 * realised per item: floor(e) copies plus one more with probability e - floor(e).
 */
export async function* echo<T>(source: AsyncIterable<T>, stage: EchoStage<T>): AsyncGenerator<T> {
  for await (const item of source) {
    if (stage.active && !stage.active()) {
      yield item;
      continue;
    }
    const e = Math.max(1, stage.factor());
    const copies = Math.floor(e) + (stage.random() < e - Math.floor(e) ? 1 : 0);
    for (let c = 0; c < copies; c++) {
      if (c > 0) stage.echoed?.(item);
      yield stage.clone && c < copies - 1 ? stage.clone(item) : item;
    }
  }
}

/**
 * A shuffle buffer: holds up to `capacity()` items and emits a random one each
 * time a new one arrives, then drains in random order. The capacity is read per
 * item (a live control): when it shrinks, the surplus is emitted at random first.
 */
export async function* shuffleBuffer<T>(source: AsyncIterable<T>, capacity: () => number, random: Random): AsyncGenerator<T> {
  const buffer: T[] = [];
  const takeRandom = () => {
    const j = Math.floor(random() * buffer.length);
    const out = buffer[j]!;
    buffer[j] = buffer[buffer.length - 1]!;
    buffer.pop();
    return out;
  };
  for await (const item of source) {
    buffer.push(item);
    const cap = Math.max(1, Math.round(capacity()));
    while (buffer.length > cap) yield takeRandom();
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
