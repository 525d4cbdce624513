// Generic pipeline stages over async iterables: echo, shuffle buffer, batch.
// The stages that hold items between pulls (an echo stage owing copies, the
// shuffle buffer) keep them in a `held` object the caller passes in: a stream
// snapshot (base.ts) writes it down, and a stage given a filled one starts
// where the snapshotted stream stood.
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
  /** Marks an extra copy as echoed, so the batch it lands in can say how many of its examples are copies. */
  markCopy?(item: T): T;
}

/** An echo stage between pulls: the item it is repeating and the copies of it still owed. */
export interface EchoHeld<T> {
  item?: T;
  left: number;
}

/** An echo stage's held item written down or revived with `f`; nothing once it owes no copies. */
export function mapHeld<T, U>(held: EchoHeld<T>, f: (item: T) => U): EchoHeld<U> {
  return held.left > 0 ? { item: f(held.item!), left: held.left } : { left: 0 };
}

/**
 * Data echoing (Choi et al. 2019): repeats every upstream item e times so the
 * downstream consumer keeps working while upstream is slow. A fractional e is
 * realised per item: floor(e) copies plus one more with probability e - floor(e).
 */
export async function* echo<T>(source: AsyncIterable<T>, stage: EchoStage<T>, held: EchoHeld<T> = { left: 0 }): AsyncGenerator<T> {
  // Copies a restored stream still owes (they were decided before its snapshot).
  yield* owed(held, stage);
  for await (const item of source) {
    if (stage.active && !stage.active()) {
      yield item;
      continue;
    }
    const e = Math.max(1, stage.factor());
    held.item = item;
    held.left = Math.floor(e) + (stage.random() < e - Math.floor(e) ? 1 : 0) - 1;
    yield held.left > 0 && stage.clone ? stage.clone(item) : item;
    yield* owed(held, stage);
  }
}

/** The copies `held` still owes, each counted as echoed; every one but the last a clone. */
function* owed<T>(held: EchoHeld<T>, stage: EchoStage<T>): Generator<T> {
  while (held.left > 0) {
    const item = held.item!;
    held.left--;
    stage.echoed?.(item);
    const copy = held.left > 0 && stage.clone ? stage.clone(item) : item;
    yield stage.markCopy ? stage.markCopy(copy) : copy;
  }
  held.item = undefined;
}

/**
 * A shuffle buffer between pulls: its items, the capacity the last arrival was checked against (growing by halves while it
 * warms up), and whether it is draining (the source ended).
 */
export interface ShuffleHeld<T> {
  items: T[];
  capacity: number;
  draining: boolean;
}

/**
 * A shuffle buffer: holds up to `capacity()` items and emits a random one each
 * time a new one arrives, then drains in random order. It does not wait to be
 * full before the first emits: the capacity in force grows by half an item per
 * arrival (two in, one out) from 0 up to `capacity()`, so the first batch leaves
 * after twice its size has arrived, not after the whole buffer; a decision that
 * depends only on counts, so the order stays a function of the seed. The
 * capacity is read per item (a live control): when it shrinks, the surplus is
 * emitted at random first; when it grows, the buffer grows toward it the same way.
 * `warmUp` false: the capacity in force is the control's at once (what runs taped
 * before the warm-up did; their resumes must do the same).
 */
export async function* shuffleBuffer<T>(
  source: AsyncIterable<T>,
  capacity: () => number,
  random: Random,
  held: ShuffleHeld<T> = { items: [], capacity: 0, draining: false },
  warmUp = true,
): AsyncGenerator<T> {
  const growth = warmUp ? 0.5 : Infinity;
  const buffer = held.items;
  const takeRandom = () => {
    const j = Math.floor(random() * buffer.length);
    const out = buffer[j]!;
    buffer[j] = buffer[buffer.length - 1]!;
    buffer.pop();
    return out;
  };
  if (!held.draining) {
    while (buffer.length > held.capacity) yield takeRandom(); // a surplus a restored stream was still emitting
    for await (const item of source) {
      buffer.push(item);
      held.capacity = Math.min(Math.max(1, Math.round(capacity())), held.capacity + growth);
      while (buffer.length > held.capacity) yield takeRandom();
    }
    // Drained from the end of a shuffled copy: the order the buffer always drained in, and the buffer shrinks as it goes.
    shuffleInPlace(buffer, random).reverse();
    held.draining = true;
  }
  while (buffer.length > 0) yield buffer.pop()!;
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
