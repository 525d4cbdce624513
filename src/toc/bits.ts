// Bit packing (§3.2): arrays of small non-negative integers stored with a fixed
// number of bits each, least significant bit first, starting on a byte boundary.

/** Bits needed for any integer in [0, n): ceil(log2(n)), and 0 when n <= 1. */
export function bitsFor(n: number): number {
  return n <= 1 ? 0 : 32 - Math.clz32(n - 1);
}

/** Bytes taken by `count` integers of `bits` bits each. */
export function packedBytes(count: number, bits: number): number {
  return Math.ceil((count * bits) / 8);
}

/** Writes `values` (each < 2^bits, bits <= 32) into zeroed `out` from `byteOffset`. */
export function packBits(out: Uint8Array, byteOffset: number, values: ArrayLike<number>, bits: number): void {
  let byte = byteOffset;
  let shift = 0; // bits already used in out[byte]
  for (let i = 0; i < values.length; i++) {
    let rest = values[i];
    let left = bits;
    while (left > 0) {
      const take = Math.min(8 - shift, left);
      out[byte] = out[byte] | ((rest & ((1 << take) - 1)) << shift);
      rest >>>= take;
      left -= take;
      shift += take;
      if (shift === 8) {
        shift = 0;
        byte++;
      }
    }
  }
}

/** Reads `count` integers of `bits` bits each from `bytes` at `byteOffset`. */
export function unpackBits(bytes: Uint8Array, byteOffset: number, count: number, bits: number): Uint32Array {
  const out = new Uint32Array(count);
  if (bits === 0) return out;
  let byte = byteOffset;
  let shift = 0;
  for (let i = 0; i < count; i++) {
    let value = 0;
    let got = 0;
    while (got < bits) {
      const take = Math.min(8 - shift, bits - got);
      value |= ((bytes[byte] >>> shift) & ((1 << take) - 1)) << got;
      got += take;
      shift += take;
      if (shift === 8) {
        shift = 0;
        byte++;
      }
    }
    out[i] = value >>> 0;
  }
  return out;
}
