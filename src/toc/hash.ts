// Open-addressing hash map from three uint32 words to a uint32 value. The encoder
// keys it by (column, float64 bits) for unique pairs and by (parent node, pair id, 0)
// for tree children: typed arrays and integer keys are several times faster than Map.

const EMPTY = 0; // slots store value + 1, so 0 marks a free slot

const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO = littleEndian ? 0 : 1;
const HI = littleEndian ? 1 : 0;

export class U32KeyMap {
  // Interleaved [a, b, c, value + 1] per slot: one cache line per probe.
  private table: Uint32Array;
  private mask: number;
  private count = 0;

  /** `expected` entries fit without rehashing (load factor <= 1/2). */
  constructor(expected = 0) {
    let capacity = 64;
    while (capacity < 2 * expected) capacity *= 2;
    this.table = new Uint32Array(4 * capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.count;
  }

  /** Returns the value stored for (a, b, c); when absent, stores `value` and returns it. */
  getOrInsert(a: number, b: number, c: number, value: number): number {
    const { table, mask } = this;
    let i = hash(a, b, c) & mask;
    for (;;) {
      const at = 4 * i;
      const slot = table[at + 3];
      if (slot === EMPTY) {
        table[at] = a;
        table[at + 1] = b;
        table[at + 2] = c;
        table[at + 3] = value + 1;
        if (++this.count * 2 > mask) this.grow();
        return value;
      }
      if (table[at] === a && table[at + 1] === b && table[at + 2] === c) return slot - 1;
      i = (i + 1) & mask;
    }
  }

  /** getOrInsert keyed by `a` and the exact IEEE-754 bits of `x`. */
  getOrInsertF64(a: number, x: number, value: number): number {
    f64[0] = x;
    return this.getOrInsert(a, f64Words[HI], f64Words[LO], value);
  }

  private grow(): void {
    const old = this.table;
    const table = new Uint32Array(2 * old.length);
    const mask = 2 * this.mask + 1;
    for (let from = 0; from < old.length; from += 4) {
      if (old[from + 3] === EMPTY) continue;
      let i = hash(old[from], old[from + 1], old[from + 2]) & mask;
      while (table[4 * i + 3] !== EMPTY) i = (i + 1) & mask;
      for (let w = 0; w < 4; w++) table[4 * i + w] = old[from + w];
    }
    this.table = table;
    this.mask = mask;
  }
}

/** 32-bit mix of three words (murmur3-style finaliser). */
function hash(a: number, b: number, c: number): number {
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b ^ (b >>> 15), 0x85ebca77) ^ Math.imul(c ^ (c >>> 13), 0x27d4eb2f);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Maps each distinct value (by IEEE-754 bits) to a dense id in first-appearance order. */
export class ValueDictionary {
  private readonly map = new U32KeyMap();
  readonly values: number[] = [];

  idOf(value: number): number {
    const id = this.map.getOrInsertF64(0, value, this.values.length);
    if (id === this.values.length) this.values.push(value);
    return id;
  }
}
