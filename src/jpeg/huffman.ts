// Entropy-coding plumbing: a recorded symbol stream (for frequency counting),
// optimal length-limited Huffman tables (T.81 Annex K.2) and a byte/bit writer
// with JPEG byte stuffing.

/**
 * One scan's entropy-coded output, recorded before any Huffman code exists.
 * Recording once and then (1) counting frequencies and (2) emitting replaces
 * libjpeg's "run the scan model twice" approach and keeps the model code free
 * of gather/emit branches.
 *
 * Each op is one Int32:
 *   negative: ~(table << 8 | symbol), a Huffman symbol of table 0..3;
 *   positive: (nbits << 16) | value, nbits (1..16) raw bits appended as-is.
 */
export class SymbolStream {
  ops = new Int32Array(4096);
  length = 0;

  reset(): void {
    this.length = 0;
  }

  symbol(table: number, sym: number): void {
    if (this.length === this.ops.length) this.grow();
    this.ops[this.length++] = ~((table << 8) | sym);
  }

  bits(value: number, nbits: number): void {
    if (this.length === this.ops.length) this.grow();
    this.ops[this.length++] = (nbits << 16) | (value & ((1 << nbits) - 1));
  }

  /** Adds the symbol counts of this stream to freqs[table] (256 entries each). */
  countFrequencies(freqs: Uint32Array[]): void {
    const ops = this.ops;
    for (let i = 0, n = this.length; i < n; i++) {
      const op = ops[i]!;
      if (op < 0) {
        const id = ~op;
        freqs[id >> 8]![id & 0xff]!++;
      }
    }
  }

  private grow(): void {
    const next = new Int32Array(this.ops.length * 2);
    next.set(this.ops);
    this.ops = next;
  }
}

/** A Huffman table: DHT contents plus the encoder's lookup (T.81 C.2 EHUFCO/EHUFSI). */
export interface HuffTable {
  /** counts[len] = number of codes of length len (1..16); counts[0] unused. */
  counts: Uint8Array;
  /** symbols ordered by code length (HUFFVAL). */
  values: Uint8Array;
  /** code[sym] / size[sym]: code word and its length; size 0 = symbol absent. */
  code: Uint16Array;
  size: Uint8Array;
}

// Scratch for buildOptimalTable (only symbols that occur are processed, so the
// O(n^2) K.2 loop stays cheap for the small alphabets of small images).
const kSym = new Int32Array(257);
const kFreq = new Float64Array(257);
const kCodeSize = new Int32Array(257);
const kOthers = new Int32Array(257);
const kBits = new Int32Array(260);

/**
 * Optimal Huffman table for the given symbol frequencies, code lengths limited
 * to 16 bits, following T.81 Annex K.2 (Figures K.1-K.4) as libjpeg's
 * jpeg_gen_optimal_table does. A reserved pseudo-symbol with frequency 1 is
 * added and its code dropped afterwards, so no real code is all 1-bits.
 */
export function buildOptimalTable(freq: Uint32Array): HuffTable {
  let n = 0;
  for (let s = 0; s < 256; s++) {
    if (freq[s]! > 0) {
      kSym[n] = s;
      kFreq[n] = freq[s]!;
      n++;
    }
  }
  if (n === 0) {
    // An unused table still needs one code to be a well-formed DHT.
    kSym[0] = 0;
    kFreq[0] = 1;
    n = 1;
  }
  kSym[n] = 256;
  kFreq[n] = 1;
  n++;
  kCodeSize.fill(0, 0, n);
  kOthers.fill(-1, 0, n);

  // K.1 Code_size: repeatedly merge the two least frequent trees. "<=" picks
  // the highest index on ties so the reserved symbol ends up longest.
  for (;;) {
    let c1 = -1;
    let v = Infinity;
    for (let i = 0; i < n; i++) {
      if (kFreq[i]! > 0 && kFreq[i]! <= v) {
        v = kFreq[i]!;
        c1 = i;
      }
    }
    let c2 = -1;
    v = Infinity;
    for (let i = 0; i < n; i++) {
      if (kFreq[i]! > 0 && kFreq[i]! <= v && i !== c1) {
        v = kFreq[i]!;
        c2 = i;
      }
    }
    if (c2 < 0) break;
    kFreq[c1] = kFreq[c1]! + kFreq[c2]!;
    kFreq[c2] = 0;
    kCodeSize[c1]!++;
    while (kOthers[c1]! >= 0) {
      c1 = kOthers[c1]!;
      kCodeSize[c1]!++;
    }
    kOthers[c1] = c2;
    kCodeSize[c2]!++;
    while (kOthers[c2]! >= 0) {
      c2 = kOthers[c2]!;
      kCodeSize[c2]!++;
    }
  }

  // K.2 Count_BITS.
  kBits.fill(0);
  let maxLen = 0;
  for (let i = 0; i < n; i++) {
    const len = kCodeSize[i]!;
    kBits[len]!++;
    if (len > maxLen) maxLen = len;
  }
  // K.3 Adjust_BITS: push codes longer than 16 bits up the tree. A leaf pair
  // at length i is replaced by a node at i-1, and a shorter leaf at j becomes
  // a node carrying the pair's partner and itself at j+1.
  for (let i = maxLen; i > 16; i--) {
    while (kBits[i]! > 0) {
      let j = i - 2;
      while (kBits[j] === 0) j--;
      kBits[i] = kBits[i]! - 2;
      kBits[i - 1]!++;
      kBits[j + 1] = kBits[j + 1]! + 2;
      kBits[j]!--;
    }
  }
  // Drop the reserved symbol: it holds one of the longest (all 1-bits) codes.
  let longest = 16;
  while (kBits[longest] === 0) longest--;
  kBits[longest]!--;

  const counts = new Uint8Array(17);
  for (let len = 1; len <= 16; len++) counts[len] = kBits[len]!;

  // K.4 Sort_input: symbols by (original) code size, then by symbol value.
  const values = new Uint8Array(n - 1);
  let p = 0;
  for (let len = 1; len <= maxLen; len++) {
    for (let i = 0; i < n - 1; i++) if (kCodeSize[i] === len) values[p++] = kSym[i]!;
  }

  // C.1/C.2: canonical codes from counts, then per-symbol lookup.
  const code = new Uint16Array(256);
  const size = new Uint8Array(256);
  let c = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    for (let i = 0; i < counts[len]!; i++) {
      const sym = values[k++]!;
      code[sym] = c++;
      size[sym] = len;
    }
    c <<= 1;
  }
  return { counts, values, code, size };
}

/**
 * Growable byte buffer that also packs bit fields MSB-first with JPEG byte
 * stuffing (every 0xFF data byte is followed by 0x00).
 */
export class ByteWriter {
  private buf = new Uint8Array(8192);
  private pos = 0;
  private acc = 0; // pending bits, right-aligned
  private nacc = 0; // number of pending bits (< 8 between calls)

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  u16(v: number): void {
    this.ensure(2);
    this.buf[this.pos++] = (v >> 8) & 0xff;
    this.buf[this.pos++] = v & 0xff;
  }

  bytes(src: ArrayLike<number>): void {
    this.ensure(src.length);
    for (let i = 0; i < src.length; i++) this.buf[this.pos++] = src[i]!;
  }

  /**
   * Emits a recorded scan with the given tables (indexed by table id), then
   * pads the last byte with 1-bits as T.81 F.1.2.3 requires.
   */
  writeScan(stream: SymbolStream, tables: readonly (HuffTable | undefined)[]): void {
    // Worst case: 16 bits per op, each byte stuffed -> 4 bytes per op.
    this.ensure(stream.length * 4 + 8);
    const ops = stream.ops;
    for (let i = 0, n = stream.length; i < n; i++) {
      const op = ops[i]!;
      if (op < 0) {
        const id = ~op;
        const t = tables[id >> 8]!;
        const sym = id & 0xff;
        this.putBits(t.code[sym]!, t.size[sym]!);
      } else {
        this.putBits(op & 0xffff, op >>> 16);
      }
    }
    if (this.nacc > 0) this.putBits((1 << (8 - this.nacc)) - 1, 8 - this.nacc);
  }

  /** Returns a copy of everything written since the last take()/reset() and resets. */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.pos);
    this.reset();
    return out;
  }

  reset(): void {
    this.pos = 0;
    this.acc = 0;
    this.nacc = 0;
  }

  // Caller guarantees capacity (writeScan reserves the worst case up front).
  private putBits(value: number, nbits: number): void {
    const acc = (this.acc << nbits) | value;
    let n = this.nacc + nbits; // at most 7 + 16 = 23 bits, safe in int32
    const buf = this.buf;
    while (n >= 8) {
      n -= 8;
      const b = (acc >> n) & 0xff;
      buf[this.pos++] = b;
      if (b === 0xff) buf[this.pos++] = 0;
    }
    this.acc = acc & ((1 << n) - 1);
    this.nacc = n;
  }

  private ensure(extra: number): void {
    if (this.pos + extra <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + extra) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }
}
