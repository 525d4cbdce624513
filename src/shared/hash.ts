// FNV-1a, 32 bit: the one hash for stable splits and seeds. Callers feed it
// bytes, 16-bit code units or 32-bit words (little-endian byte order).
const OFFSET = 0x811c9dc5;
const PRIME = 0x01000193;

export class Fnv1a {
  private h = OFFSET;

  byte(b: number): this {
    this.h = Math.imul(this.h ^ (b & 0xff), PRIME);
    return this;
  }

  u16(x: number): this {
    return this.byte(x).byte(x >>> 8);
  }

  u32(x: number): this {
    return this.byte(x)
      .byte(x >>> 8)
      .byte(x >>> 16)
      .byte(x >>> 24);
  }

  /** The string's UTF-8 bytes. */
  utf8(s: string): this {
    for (const b of new TextEncoder().encode(s)) this.byte(b);
    return this;
  }

  get value(): number {
    return this.h >>> 0;
  }
}
