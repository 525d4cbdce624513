// A thin wrapper over libjpeg-turbo's TurboJPEG API compiled to WebAssembly
// (the wasm file of @cwasm/jpeg-turbo; its own JS glue is Node-only, so we load
// the module ourselves and it runs in workers and in Node alike).

export interface DecodedImage {
  width: number;
  height: number;
  channels: 1 | 3;
  /** Interleaved 8-bit pixels, row-major. */
  data: Uint8Array;
}

/** A JPEG that libjpeg-turbo refused or could only partly decode. */
export class JpegDecodeError extends Error {
  override name = 'JpegDecodeError';
}

interface TurboExports {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  free(ptr: number): void;
  tjInitDecompress(): number;
  tjDestroy(handle: number): number;
  tjDecompressHeader3(handle: number, src: number, size: number, w: number, h: number, subsamp: number, colorspace: number): number;
  tjDecompress2(handle: number, src: number, size: number, dst: number, w: number, pitch: number, h: number, pixelFormat: number, flags: number): number;
}

const TJPF_RGB = 0;
const TJPF_GRAY = 6;

/** The output size of the smallest scaling factor M/8 (M = 1..8) that still covers `target`. */
export function scaledSize(size: { width: number; height: number }, target: { width: number; height: number }): { width: number; height: number } {
  for (let m = 1; m < 8; m++) {
    const width = Math.ceil((size.width * m) / 8);
    const height = Math.ceil((size.height * m) / 8);
    if (width >= target.width && height >= target.height) return { width, height };
  }
  return size;
}

/** The C library reports fatal errors through longjmp, which this build turns into a JS exception. */
class FatalLibjpegError extends Error {}

function instantiate(module: WebAssembly.Module): TurboExports {
  const unsupported = (name: string) => () => {
    throw new FatalLibjpegError(`libjpeg-turbo called ${name}`);
  };
  const imports = {
    env: {
      setjmp: () => 0,
      longjmp: () => {
        throw new FatalLibjpegError('fatal libjpeg error');
      },
    },
    wasi_snapshot_preview1: {
      environ_sizes_get: () => 0,
      environ_get: unsupported('environ_get'),
      proc_exit: unsupported('proc_exit'),
      fd_close: unsupported('fd_close'),
      fd_seek: unsupported('fd_seek'),
      fd_write: unsupported('fd_write'),
    },
  };
  return new WebAssembly.Instance(module, imports).exports as unknown as TurboExports;
}

/**
 * Decodes JPEGs, including progressive streams cut after any scan and closed
 * with EOI. One instance serves many images: the input/output buffers and the
 * decompressor handle are reused. A fatal libjpeg error unwinds through JS and
 * leaves the C stack in an unknown state, so after one we start a fresh instance.
 */
export class TurboJpeg {
  private exports: TurboExports;
  private handle = 0;
  private inPtr = 0;
  private inCap = 0;
  private outPtr = 0;
  private outCap = 0;
  private infoPtr = 0;

  constructor(private readonly module: WebAssembly.Module) {
    this.exports = this.reset();
  }

  private reset(): TurboExports {
    this.exports = instantiate(this.module);
    this.handle = this.exports.tjInitDecompress();
    this.infoPtr = this.exports.malloc(16);
    this.inPtr = this.inCap = this.outPtr = this.outCap = 0;
    return this.exports;
  }

  private reserve(which: 'in' | 'out', size: number): number {
    const e = this.exports;
    if (which === 'in') {
      if (size > this.inCap) {
        if (this.inPtr) e.free(this.inPtr);
        this.inCap = Math.max(size, this.inCap * 2, 4096);
        this.inPtr = e.malloc(this.inCap);
      }
      return this.inPtr;
    }
    if (size > this.outCap) {
      if (this.outPtr) e.free(this.outPtr);
      this.outCap = Math.max(size, this.outCap * 2, 4096);
      this.outPtr = e.malloc(this.outCap);
    }
    return this.outPtr;
  }

  /** Reads width and height without decoding. */
  header(jpeg: Uint8Array): { width: number; height: number } {
    return this.guard(() => this.readHeader(jpeg));
  }

  /**
   * Decodes to `channels` (1 = gray, 3 = RGB). With `atLeast`, decodes at the
   * smallest DCT scaling factor M/8 whose output still covers that size (libjpeg
   * skips the work of the finer coefficients), so a model input smaller than the
   * stored image costs less to decode. If `out` is given the pixels are written
   * there (it must be large enough) and returned.
   */
  decode(jpeg: Uint8Array, channels: 1 | 3, out?: Uint8Array, atLeast?: { width: number; height: number }): DecodedImage {
    return this.guard(() => {
      const header = this.readHeader(jpeg);
      const { width, height } = atLeast ? scaledSize(header, atLeast) : header;
      const size = width * height * channels;
      const dst = this.reserve('out', size);
      const status = this.exports.tjDecompress2(
        this.handle,
        this.inPtr,
        jpeg.byteLength,
        dst,
        width,
        width * channels,
        height,
        channels === 1 ? TJPF_GRAY : TJPF_RGB,
        0,
      );
      // Fatal errors throw; a -1 here means libjpeg only warned (corrupt or
      // premature entropy data). The pixels are then partly garbage: refuse them.
      if (status !== 0) throw new JpegDecodeError('corrupt JPEG data (libjpeg-turbo warned while decoding the scans)');
      const pixels = new Uint8Array(this.exports.memory.buffer, dst, size);
      const data = out ? out.subarray(0, size) : new Uint8Array(size);
      data.set(pixels);
      return { width, height, channels, data };
    });
  }

  private readHeader(jpeg: Uint8Array): { width: number; height: number } {
    const e = this.exports;
    const src = this.reserve('in', jpeg.byteLength);
    new Uint8Array(e.memory.buffer, src, jpeg.byteLength).set(jpeg);
    const info = this.infoPtr;
    if (e.tjDecompressHeader3(this.handle, src, jpeg.byteLength, info, info + 4, info + 8, info + 12) !== 0) {
      throw new JpegDecodeError('unreadable JPEG header');
    }
    const [width, height] = new Int32Array(e.memory.buffer, info, 2) as unknown as [number, number];
    if (!(width > 0 && height > 0 && width * height <= 1 << 26)) throw new JpegDecodeError(`implausible size ${width}x${height}`);
    return { width, height };
  }

  private guard<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      if (err instanceof JpegDecodeError) throw err;
      // Includes FatalLibjpegError and wasm traps (e.g. out-of-bounds after corrupt data).
      this.reset();
      throw new JpegDecodeError(`libjpeg-turbo could not decode the image: ${(err as Error).message}`);
    }
  }
}
