// Pixel side of the JPEG encoder: colour conversion, forward DCT, quantisation
// and zigzag reordering. Pure TypeScript, no DOM or Node APIs.

/** ZIGZAG[k] = row-major (natural) index of the k-th coefficient in zigzag order (T.81 Figure A.6). */
export const ZIGZAG: Uint8Array = (() => {
  const order = new Uint8Array(64);
  let k = 0;
  // Walk the 15 anti-diagonals, alternating direction.
  for (let d = 0; d < 15; d++) {
    const lo = Math.max(0, d - 7);
    const hi = Math.min(7, d);
    for (let i = lo; i <= hi; i++) {
      // Even diagonals run bottom-left -> top-right (row decreasing).
      const row = d % 2 === 0 ? d - i : i;
      order[k++] = row * 8 + (d - row);
    }
  }
  return order;
})();

/** T.81 Annex K.1 luminance quantisation table, natural order. */
export const LUMA_QUANT: readonly number[] = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103,
  77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];

/** T.81 Annex K.1 chrominance quantisation table, natural order. */
export const CHROMA_QUANT: readonly number[] = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
];

/**
 * Scales an Annex K table the way libjpeg's jpeg_quality_scaling +
 * jpeg_add_quant_table(force_baseline) do, so "quality 90" means what users
 * expect from cjpeg. Returns natural order; entries are clamped to 1..255 so
 * 8-bit DQT precision always suffices.
 */
export function scaleQuantTable(base: readonly number[], quality: number): Uint16Array {
  const q = Math.min(100, Math.max(1, Math.round(quality)));
  const scale = q < 50 ? Math.floor(5000 / q) : 200 - q * 2;
  const out = new Uint16Array(64);
  for (let i = 0; i < 64; i++) {
    const v = Math.floor((base[i]! * scale + 50) / 100);
    out[i] = v < 1 ? 1 : Math.min(v, 255);
  }
  return out;
}

/** Grayscale bytes -> level-shifted (-128) float plane. */
export function grayPlane(data: Uint8Array, npix: number): Float32Array {
  const out = new Float32Array(npix);
  for (let i = 0; i < npix; i++) out[i] = data[i]! - 128;
  return out;
}

/**
 * Interleaved RGB -> three level-shifted Y, Cb, Cr float planes using the JFIF
 * equations. Kept in float (no rounding to 8 bits) since the DCT follows anyway.
 */
export function ycbcrPlanes(data: Uint8Array, npix: number): [Float32Array, Float32Array, Float32Array] {
  const y = new Float32Array(npix);
  const cb = new Float32Array(npix);
  const cr = new Float32Array(npix);
  for (let i = 0, j = 0; i < npix; i++, j += 3) {
    const r = data[j]!;
    const g = data[j + 1]!;
    const b = data[j + 2]!;
    y[i] = 0.299 * r + 0.587 * g + 0.114 * b - 128;
    cb[i] = -0.168736 * r - 0.331264 * g + 0.5 * b; // +128 offset and -128 shift cancel
    cr[i] = 0.5 * r - 0.418688 * g - 0.081312 * b;
  }
  return [y, cb, cr];
}

// DCT_MATRIX[u*8+x] = C(u)/2 * cos((2x+1)u*pi/16); applying it along rows and
// then columns gives exactly the T.81 A.3.3 FDCT scaling (C(u)C(v)/4).
const DCT_MATRIX = (() => {
  const m = new Float64Array(64);
  for (let u = 0; u < 8; u++) {
    const c = u === 0 ? Math.SQRT1_2 : 1;
    for (let x = 0; x < 8; x++) m[u * 8 + x] = (c / 2) * Math.cos(((2 * x + 1) * u * Math.PI) / 16);
  }
  return m;
})();

/**
 * 8-point DCT of src[srcOff + x*srcStride], x = 0..7, into dst[dstOff + u*dstStride].
 * Uses the symmetry cos((2(7-x)+1)u*pi/16) = (-1)^u cos((2x+1)u*pi/16): even
 * outputs only need the sums x[i] + x[7-i], odd ones the differences, which
 * halves the multiplications of the plain matrix product.
 */
function dct8(src: Float64Array, srcOff: number, srcStride: number, dst: Float64Array, dstOff: number, dstStride: number): void {
  const m = DCT_MATRIX;
  const st = srcStride;
  const x0 = src[srcOff]!,
    x1 = src[srcOff + st]!,
    x2 = src[srcOff + 2 * st]!,
    x3 = src[srcOff + 3 * st]!;
  const x4 = src[srcOff + 4 * st]!,
    x5 = src[srcOff + 5 * st]!,
    x6 = src[srcOff + 6 * st]!,
    x7 = src[srcOff + 7 * st]!;
  const s0 = x0 + x7,
    s1 = x1 + x6,
    s2 = x2 + x5,
    s3 = x3 + x4;
  const d0 = x0 - x7,
    d1 = x1 - x6,
    d2 = x2 - x5,
    d3 = x3 - x4;
  for (let u = 0; u < 8; u += 2) {
    const e = u * 8;
    const o = e + 8;
    dst[dstOff + u * dstStride] = m[e]! * s0 + m[e + 1]! * s1 + m[e + 2]! * s2 + m[e + 3]! * s3;
    dst[dstOff + (u + 1) * dstStride] = m[o]! * d0 + m[o + 1]! * d1 + m[o + 2]! * d2 + m[o + 3]! * d3;
  }
}

// Scratch buffers shared by all calls (single-threaded; nothing escapes).
const blockBuf = new Float64Array(64);
const rowBuf = new Float64Array(64);

/**
 * Forward DCT + quantisation of a whole level-shifted plane.
 * Blocks are in raster order, coefficients within a block in zigzag order, so
 * a spectral band Ss..Se is the contiguous slice [64*b+Ss, 64*b+Se].
 * Partial edge blocks are padded by replicating the last column/row, which
 * keeps padding from adding high-frequency energy (libjpeg does the same).
 * @param quant quantisation table, natural order
 */
export function forwardDctQuantize(plane: Float32Array, width: number, height: number, quant: Uint16Array): Int16Array {
  const bw = Math.ceil(width / 8);
  const bh = Math.ceil(height / 8);
  const out = new Int16Array(bw * bh * 64);
  const blk = blockBuf;
  const tmp = rowBuf;
  // Quantiser divisors in zigzag order so the output loop is sequential.
  const qz = new Float64Array(64);
  for (let k = 0; k < 64; k++) qz[k] = quant[ZIGZAG[k]!]!;

  let base = 0;
  for (let by = 0; by < bh; by++) {
    for (let bx = 0; bx < bw; bx++, base += 64) {
      // Gather the 8x8 block, clamping coordinates for edge replication.
      for (let y = 0; y < 8; y++) {
        const sy = Math.min(by * 8 + y, height - 1);
        const rowStart = sy * width;
        const x0 = bx * 8;
        for (let x = 0; x < 8; x++) {
          const sx = x0 + x < width ? x0 + x : width - 1;
          blk[y * 8 + x] = plane[rowStart + sx]!;
        }
      }
      for (let y = 0; y < 8; y++) dct8(blk, y * 8, 1, tmp, y * 8, 1); // rows
      for (let u = 0; u < 8; u++) dct8(tmp, u, 8, blk, u, 8); // columns
      // Quantise with round-half-up (as libjpeg's float path) and zigzag.
      for (let k = 0; k < 64; k++) out[base + k] = Math.floor(blk[ZIGZAG[k]!]! / qz[k]! + 0.5);
    }
  }
  return out;
}
