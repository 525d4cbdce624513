// A minimal protocol-buffers wire-format reader and writer: varints, 32-bit
// signed integers, length-delimited fields (bytes, strings, sub-messages) and
// packed repeated integers. Just what the PCR reference format needs
// (src/pcr/reference.ts); no schema, no reflection, no DOM or Node APIs.
//
// Wire format recap: a field is a varint key (field number << 3 | wire type)
// followed by its value. Wire type 0 = varint, 1 = 8 bytes, 2 = varint length +
// that many bytes, 5 = 4 bytes; 3 and 4 (groups) are deprecated and refused here.

export const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

const TWO_32 = 4294967296;
const MAX_VARINT_BYTES = 10;

/** Malformed protobuf bytes; `offset` is the byte position (in the buffer given to the reader) where the problem is. */
/** One decoder for every string field: making one per string dominated reading a large index. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

export class ProtobufError extends Error {
  override name = 'ProtobufError';
  constructor(
    readonly offset: number,
    readonly detail: string,
  ) {
    super(`byte ${offset}: ${detail}`);
  }
}

export interface FieldKey {
  field: number;
  wire: number;
  /** Offset of the key's first byte. */
  at: number;
}

function wireTypeName(wire: number): string {
  switch (wire) {
    case WIRE_VARINT:
      return 'varint';
    case WIRE_FIXED64:
      return '64-bit';
    case WIRE_LEN:
      return 'length-delimited';
    case 3:
      return 'start-group';
    case 4:
      return 'end-group';
    case WIRE_FIXED32:
      return '32-bit';
    default:
      return `invalid (${wire})`;
  }
}

/**
 * Reads fields from bytes[start, end). Offsets in errors and in the values it
 * returns are positions in `bytes`, so a reader over a whole file prefix
 * reports file offsets.
 */
export class ProtoReader {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    start = 0,
    readonly end = bytes.byteLength,
  ) {
    if (start < 0 || end > bytes.byteLength || start > end) {
      throw new RangeError(`bad message bounds [${start}, ${end}) in ${bytes.byteLength} bytes`);
    }
    this.pos = start;
  }

  done(): boolean {
    return this.pos >= this.end;
  }

  /** Reads a varint as two unsigned 32-bit halves. */
  private varint64(): { lo: number; hi: number; at: number } {
    const at = this.pos;
    const bytes = this.bytes;
    let lo = 0;
    let hi = 0;
    for (let i = 0; ; i++) {
      if (i === MAX_VARINT_BYTES) throw new ProtobufError(at, `varint longer than ${MAX_VARINT_BYTES} bytes`);
      if (this.pos >= this.end) throw new ProtobufError(this.pos, `truncated varint (started at byte ${at}, message ends at byte ${this.end})`);
      const b = bytes[this.pos++]!;
      const bits = b & 0x7f;
      if (i < 4) lo |= bits << (7 * i);
      else if (i === 4) {
        lo |= (bits & 0x0f) << 28;
        hi = bits >>> 4;
      } else {
        if (i === 9 && bits > 1) throw new ProtobufError(at, 'varint overflows 64 bits');
        hi |= bits << (7 * i - 32);
      }
      if ((b & 0x80) === 0) break;
    }
    return { lo: lo >>> 0, hi: hi >>> 0, at };
  }

  /** An unsigned varint that must fit a JavaScript safe integer (lengths, offsets, uint32/uint64 fields). */
  uint(): number {
    const { lo, hi, at } = this.varint64();
    if (hi >= 1 << 21) throw new ProtobufError(at, 'varint too large for a safe integer (or a negative value where none is allowed)');
    return hi * TWO_32 + lo;
  }

  /** An int32 field: the low 32 bits of the varint, as a signed number (negative values are sign-extended to 10 bytes on the wire). */
  int32(): number {
    return this.varint64().lo | 0;
  }

  /** An int64 field as a number; throws if it is outside the safe-integer range. */
  int64(): number {
    const { lo, hi, at } = this.varint64();
    if (hi & 0x80000000) {
      // Negative: two's complement of the 64-bit value.
      const nlo = (~lo + 1) >>> 0;
      const nhi = (~hi + (nlo === 0 ? 1 : 0)) >>> 0;
      if (nhi >= 1 << 21) throw new ProtobufError(at, 'int64 below the safe-integer range');
      return -(nhi * TWO_32 + nlo);
    }
    if (hi >= 1 << 21) throw new ProtobufError(at, 'int64 above the safe-integer range');
    return hi * TWO_32 + lo;
  }

  /** A field key. Field number 0 and the invalid wire types 6 and 7 are errors. */
  key(): FieldKey {
    const at = this.pos;
    const raw = this.uint();
    const field = Math.floor(raw / 8);
    const wire = raw % 8;
    if (field === 0 || field > 0x1fffffff) throw new ProtobufError(at, `invalid field number ${field}`);
    if (wire === 6 || wire === 7) throw new ProtobufError(at, `invalid wire type ${wire} for field ${field}`);
    return { field, wire, at };
  }

  /** The bounds of a length-delimited value; checks that it fits inside the message. */
  lengthDelimited(): { start: number; end: number } {
    const at = this.pos;
    const length = this.uint();
    const start = this.pos;
    if (length > this.end - start) {
      throw new ProtobufError(at, `length-delimited value of ${length} bytes at byte ${start} runs past the end of the message at byte ${this.end}`);
    }
    this.pos = start + length;
    return { start, end: this.pos };
  }

  /** A bytes field, as a view into the buffer (no copy). */
  bytesView(): Uint8Array {
    const { start, end } = this.lengthDelimited();
    return this.bytes.subarray(start, end);
  }

  /** A string field; invalid UTF-8 is an error. */
  string(): string {
    const at = this.pos;
    const view = this.bytesView();
    try {
      return utf8.decode(view);
    } catch {
      throw new ProtobufError(at, 'string field is not valid UTF-8');
    }
  }

  /**
   * One or more values of a repeated varint field: a packed run (wire type 2)
   * or a single value (wire type 0). Parsers must accept both encodings.
   */
  repeatedVarint(key: FieldKey, read: (r: ProtoReader) => number, into: number[]): void {
    if (key.wire === WIRE_VARINT) {
      into.push(read(this));
    } else if (key.wire === WIRE_LEN) {
      const { start, end } = this.lengthDelimited();
      const packed = new ProtoReader(this.bytes, start, end);
      while (!packed.done()) into.push(read(packed));
    } else {
      throw new ProtobufError(key.at, `field ${key.field} has wire type ${wireTypeName(key.wire)}, expected varint or packed`);
    }
  }

  /** Skips the value of a field this reader does not know. */
  skip(key: FieldKey): void {
    switch (key.wire) {
      case WIRE_VARINT:
        this.varint64();
        return;
      case WIRE_FIXED64:
        this.advance(8, key);
        return;
      case WIRE_LEN:
        this.lengthDelimited();
        return;
      case WIRE_FIXED32:
        this.advance(4, key);
        return;
      default:
        throw new ProtobufError(key.at, `field ${key.field} has unsupported wire type ${wireTypeName(key.wire)}`);
    }
  }

  /** Throws unless `key` has the wire type `wire`; `what` names the field in the message. */
  expect(key: FieldKey, wire: number, what: string): void {
    if (key.wire !== wire) {
      throw new ProtobufError(key.at, `${what} (field ${key.field}) has wire type ${wireTypeName(key.wire)}, expected ${wireTypeName(wire)}`);
    }
  }

  private advance(n: number, key: FieldKey): void {
    if (this.end - this.pos < n) throw new ProtobufError(this.pos, `truncated ${n}-byte value of field ${key.field}`);
    this.pos += n;
  }
}

/** Bytes a varint of the unsigned safe integer v takes. */
export function varintSize(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Builds one message. Fields are written in call order. */
export class ProtoWriter {
  private buf: Uint8Array;
  private len = 0;

  constructor(initialCapacity = 256) {
    this.buf = new Uint8Array(Math.max(16, initialCapacity));
  }

  get length(): number {
    return this.len;
  }

  private reserve(n: number): void {
    if (this.len + n <= this.buf.byteLength) return;
    let cap = this.buf.byteLength * 2;
    while (cap < this.len + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  /** Raw unsigned varint (no key). v must be a non-negative safe integer. */
  uintRaw(v: number): this {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${v} is not a non-negative safe integer`);
    this.reserve(MAX_VARINT_BYTES);
    while (v >= 128) {
      this.buf[this.len++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.len++] = v;
    return this;
  }

  /** Raw int32 varint (no key): negative values take 10 bytes, sign-extended to 64 bits as protobuf requires. */
  int32Raw(v: number): this {
    if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) throw new RangeError(`${v} does not fit in int32`);
    if (v >= 0) return this.uintRaw(v);
    this.reserve(MAX_VARINT_BYTES);
    let lo = v >>> 0;
    // The high word is all ones: bits 32..63 of the sign-extended value.
    for (let i = 0; i < 4; i++) {
      this.buf[this.len++] = (lo & 0x7f) | 0x80;
      lo >>>= 7;
    }
    // Byte 5 holds the top 4 bits of lo and 3 bits of the high word (ones).
    this.buf[this.len++] = (lo & 0x0f) | 0x70 | 0x80;
    for (let i = 0; i < 4; i++) this.buf[this.len++] = 0xff;
    this.buf[this.len++] = 0x01;
    return this;
  }

  key(field: number, wire: number): this {
    if (!Number.isInteger(field) || field < 1 || field > 0x1fffffff) throw new RangeError(`invalid field number ${field}`);
    return this.uintRaw(field * 8 + wire);
  }

  uint(field: number, v: number): this {
    return this.key(field, WIRE_VARINT).uintRaw(v);
  }

  int32(field: number, v: number): this {
    return this.key(field, WIRE_VARINT).int32Raw(v);
  }

  bytes(field: number, data: Uint8Array): this {
    this.key(field, WIRE_LEN).uintRaw(data.byteLength);
    this.reserve(data.byteLength);
    this.buf.set(data, this.len);
    this.len += data.byteLength;
    return this;
  }

  string(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }

  /** A repeated int32 field, one key per value (proto2's default encoding). */
  repeatedInt32(field: number, values: ArrayLike<number>): this {
    for (let i = 0; i < values.length; i++) this.int32(field, values[i]!);
    return this;
  }

  /** A packed repeated int32 field (proto3's default encoding); nothing is written for an empty list. */
  packedInt32(field: number, values: ArrayLike<number>): this {
    if (values.length === 0) return this;
    const inner = new ProtoWriter(values.length * 2);
    for (let i = 0; i < values.length; i++) inner.int32Raw(values[i]!);
    return this.bytes(field, inner.finish());
  }

  /** The message bytes (a copy sized exactly; the writer can keep going). */
  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}
