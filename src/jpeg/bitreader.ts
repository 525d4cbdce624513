// Reading side of JPEG entropy coding: Huffman decoding tables (T.81 C and
// F.2.2.3) and a bit reader over entropy-coded segments that undoes byte
// stuffing (F.1.2.3) and stops at markers (B.1.1.2).
//
// Robustness: once the data stops (a marker or the end of the buffer) the
// reader feeds zero bytes and counts them, so decoding never reads out of
// bounds; checkInterval() then turns "used bits that were not there" into a
// TranscodeError. Every decoding loop is bounded by the block count.

import { TranscodeError } from './transcode-error.js';

/** Codes up to this long are decoded with one table lookup. */
const LOOKUP_BITS = 9;

export interface HuffDecodeTable {
  /** lookup[next 9 bits] = (code length << 8) | symbol, or 0 for a longer code */
  lookup: Uint16Array;
  /** F.2.2.3 decoding procedure for longer codes: largest code of each length (-1: none) */
  maxcode: Int32Array;
  /** index into values of code c of length l is c + delta[l] (VALPTR - MINCODE) */
  delta: Int32Array;
  values: Uint8Array;
}

/**
 * Builds a decoding table from DHT contents (counts[1..16], values) with the
 * C.2 code generation. Rejects over-subscribed tables and all-1 codes, as
 * libjpeg does (jdhuff.c jpeg_make_d_derived_tbl).
 */
export function buildDecodeTable(counts: Uint8Array, values: Uint8Array, name: string): HuffDecodeTable {
  const lookup = new Uint16Array(1 << LOOKUP_BITS);
  const maxcode = new Int32Array(18).fill(-1);
  const delta = new Int32Array(18);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    const n = counts[len]!;
    if (n > 0) {
      delta[len] = k - code;
      for (let i = 0; i < n; i++, k++, code++) {
        if (len <= LOOKUP_BITS) {
          const shift = LOOKUP_BITS - len;
          const entry = (len << 8) | values[k]!;
          lookup.fill(entry, code << shift, (code + 1) << shift);
        }
      }
      maxcode[len] = code - 1;
    }
    if (code >= 1 << len) throw new TranscodeError(`corrupt JPEG: Huffman table ${name} has more codes than fit in ${len} bits`);
    code <<= 1;
  }
  return { lookup, maxcode, delta, values };
}

export class BitReader {
  private pos: number;
  /** unread bits are the low `nbits` bits of acc */
  private acc = 0;
  private nbits = 0;
  /** zero bytes fed in after the data stopped */
  private fill = 0;
  /** where the data stopped: offset of a marker's first 0xFF, or data.length; -1 while reading */
  private stop = -1;
  private nextRst = 0;

  constructor(
    private readonly data: Uint8Array,
    start: number,
    /** names the scan in error messages */
    private readonly label: string,
  ) {
    this.pos = start;
  }

  /** Tops the accumulator up to more than 24 bits. */
  private refill(): void {
    const data = this.data;
    while (this.nbits <= 24) {
      let b = 0;
      if (this.stop < 0) {
        const p = this.pos;
        if (p >= data.length) {
          this.stop = data.length;
          this.fill++;
        } else if ((b = data[p]!) !== 0xff) {
          this.pos = p + 1;
        } else {
          let q = p + 1;
          while (q < data.length && data[q] === 0xff) q++; // fill bytes before a marker (B.1.1.2)
          if (q < data.length && data[q] === 0) {
            this.pos = q + 1; // stuffed zero: a literal 0xFF data byte
          } else {
            this.stop = q < data.length ? q - 1 : data.length;
            this.fill++;
            b = 0;
          }
        }
      } else {
        this.fill++;
      }
      this.acc = (this.acc << 8) | b;
      this.nbits += 8;
    }
  }

  bits(n: number): number {
    if (this.nbits < n) this.refill();
    this.nbits -= n;
    return (this.acc >>> this.nbits) & ((1 << n) - 1);
  }

  bit(): number {
    if (this.nbits < 1) this.refill();
    this.nbits--;
    return (this.acc >>> this.nbits) & 1;
  }

  /** F.2.2.1 RECEIVE + EXTEND: s raw bits read as a signed value. */
  receiveExtend(s: number): number {
    if (s === 0) return 0;
    const v = this.bits(s);
    return v < 1 << (s - 1) ? v - (1 << s) + 1 : v;
  }

  /** F.2.2.3 DECODE: next Huffman symbol. */
  decode(t: HuffDecodeTable): number {
    if (this.nbits < 16) this.refill();
    const entry = t.lookup[(this.acc >>> (this.nbits - LOOKUP_BITS)) & ((1 << LOOKUP_BITS) - 1)]!;
    if (entry !== 0) {
      this.nbits -= entry >> 8;
      return entry & 0xff;
    }
    for (let len = LOOKUP_BITS + 1; len <= 16; len++) {
      const code = (this.acc >>> (this.nbits - len)) & ((1 << len) - 1);
      if (code <= t.maxcode[len]!) {
        this.nbits -= len;
        return t.values[code + t.delta[len]!]!;
      }
    }
    throw new TranscodeError(`corrupt JPEG: invalid Huffman code in ${this.label} near byte ${this.pos}`);
  }

  /**
   * End of a restart interval or scan: fails if decoding used bits past the
   * data, then returns the offset of the next marker, skipping any data the
   * decoder did not need (libjpeg warns about such bytes; they carry nothing).
   */
  private endOfData(): number {
    if (this.stop < 0) {
      // Decoding finished before the reader saw the marker: find it.
      const data = this.data;
      let p = this.pos;
      while (p < data.length && !(data[p] === 0xff && p + 1 < data.length && data[p + 1] !== 0 && data[p + 1] !== 0xff)) p++;
      this.stop = p;
    }
    if (this.fill * 8 > this.nbits) {
      if (this.stop >= this.data.length) {
        throw new TranscodeError(`truncated JPEG: data ends at byte ${this.data.length} inside ${this.label}`);
      }
      throw new TranscodeError(`corrupt JPEG: ${this.label} needs more data than precedes the marker at byte ${this.stop}`);
    }
    return this.stop;
  }

  /** T.81 F.2.2.5 / E.2.4: byte-align, expect RSTn with n = interval number mod 8, start afresh. */
  restart(): void {
    const at = this.endOfData();
    const expected = 0xd0 + this.nextRst;
    if (at >= this.data.length) throw new TranscodeError(`truncated JPEG: data ends at byte ${this.data.length} inside ${this.label}`);
    const marker = this.data[at + 1]!;
    if (marker !== expected) {
      throw new TranscodeError(`corrupt JPEG: expected RST${this.nextRst} at byte ${at} in ${this.label}, found marker FF${marker.toString(16).toUpperCase()}`);
    }
    this.nextRst = (this.nextRst + 1) & 7;
    this.pos = at + 2;
    this.acc = this.nbits = this.fill = 0;
    this.stop = -1;
  }

  /** End of the scan: offset of the marker that follows its entropy-coded data. */
  finish(): number {
    return this.endOfData();
  }
}
