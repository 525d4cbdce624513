// Multi-scale structural similarity (MS-SSIM; Wang, Simoncelli and Bovik,
// "Multi-scale structural similarity for image quality assessment", 2003):
// how close a decoded scan group is to the full-fidelity image.
//
// Parameters are the paper's: an 11x11 Gaussian window with sigma 1.5 (applied
// separably, "valid" region only, as in Wang's MATLAB code), K1 = 0.01,
// K2 = 0.03, L = 255, exponents (0.0448, 0.2856, 0.3001, 0.2363, 0.1333) for
// scales 1..5, and 2x2 average downsampling between scales (an odd last row or
// column is dropped).
//
// Colour: MS-SSIM is computed on luma only, Y = 0.299 R + 0.587 G + 0.114 B
// (floating point, not rounded). Grayscale is used as is. Pixel values are on a
// 0..255 scale whatever the array type.
//
// Small images (the rule): a scale is used only if the image at that scale is at
// least 11x11, so the paper's window fits at least once. We use as many scales as
// fit (at most 5, starting from full resolution) and renormalise their exponents
// so that they keep the sum of the five standard exponents: w'_j = w_j * (sum of
// all five) / (sum of the used ones). With 5 scales this is exactly the standard
// MS-SSIM. The window is never shrunk, so every scale measures the same thing as
// in the paper. Examples: 28x28 -> 2 scales (28, 14); 32x32 -> 2; 64x64 -> 3;
// 176x176 or larger -> 5. Images smaller than 11x11 are refused (RangeError).
// msssimScales() tells how many scales an image size gets; msssimDetail()
// reports them with the exponents and per-scale terms.
//
// Like TensorFlow's ssim_multiscale, negative contrast-structure terms (possible
// for anti-correlated images) are clamped to 0 before the exponent, so the score
// is always a real number in [0, 1].

const SSIM_WINDOW = 11;
const SSIM_SIGMA = 1.5;
const SSIM_K1 = 0.01;
const SSIM_K2 = 0.03;
const SSIM_L = 255;
/** Exponents of scales 1 (full resolution) to 5. */
const MSSSIM_WEIGHTS: readonly number[] = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];

export type PixelArray = Uint8Array | Uint8ClampedArray | Float32Array | Float64Array;

const C1 = (SSIM_K1 * SSIM_L) ** 2;
const C2 = (SSIM_K2 * SSIM_L) ** 2;

/** The normalised 1-D Gaussian; the 2-D window is its outer product with itself. */
const KERNEL: Float64Array = (() => {
  const k = new Float64Array(SSIM_WINDOW);
  const r = (SSIM_WINDOW - 1) / 2;
  let sum = 0;
  for (let i = 0; i < SSIM_WINDOW; i++) sum += k[i] = Math.exp(-((i - r) ** 2) / (2 * SSIM_SIGMA * SSIM_SIGMA));
  for (let i = 0; i < SSIM_WINDOW; i++) k[i] /= sum;
  return k;
})();

/** How many scales MS-SSIM uses for an image of this size (0 if it is smaller than 11x11). */
export function msssimScales(width: number, height: number): number {
  let scales = 0;
  let w = width;
  let h = height;
  while (scales < MSSSIM_WEIGHTS.length && w >= SSIM_WINDOW && h >= SSIM_WINDOW) {
    scales++;
    w = Math.floor(w / 2);
    h = Math.floor(h / 2);
  }
  return scales;
}

/** The exponents used with `scales` scales: the standard ones, renormalised to the standard total. */
export function msssimWeights(scales: number): number[] {
  if (!Number.isInteger(scales) || scales < 1 || scales > MSSSIM_WEIGHTS.length)
    throw new RangeError(`MS-SSIM uses 1 to ${MSSSIM_WEIGHTS.length} scales, not ${scales}`);
  const used = MSSSIM_WEIGHTS.slice(0, scales);
  const total = MSSSIM_WEIGHTS.reduce((a, b) => a + b, 0);
  const usedTotal = used.reduce((a, b) => a + b, 0);
  const factor = total / usedTotal;
  return used.map((w) => w * factor);
}

export interface MsssimDetail {
  /** The MS-SSIM score. */
  value: number;
  /** Scales used (see the small-image rule above). */
  scales: number;
  /** Exponent of each used scale. */
  weights: number[];
  /** Mean contrast-structure term at each used scale (the last one is reported but enters only through `coarseSsim`). */
  cs: number[];
  /** Mean SSIM (luminance x contrast-structure) at the coarsest used scale. */
  coarseSsim: number;
}

/** Luma (or the single channel) as float64, 0..255. */
function toLuma(data: PixelArray, width: number, height: number, channels: 1 | 3): Float64Array {
  checkShape(data, width, height, channels);
  const n = width * height;
  const y = new Float64Array(n);
  if (channels === 1) {
    for (let i = 0; i < n; i++) y[i] = data[i]!;
  } else {
    for (let i = 0, j = 0; i < n; i++, j += 3) y[i] = 0.299 * data[j]! + 0.587 * data[j + 1]! + 0.114 * data[j + 2]!;
  }
  return y;
}

function checkShape(data: PixelArray, width: number, height: number, channels: number): void {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) throw new RangeError(`bad image size ${width}x${height}`);
  if (channels !== 1 && channels !== 3) throw new RangeError(`channels must be 1 or 3, not ${channels}`);
  if (data.length !== width * height * channels) {
    throw new RangeError(`${data.length} values for a ${width}x${height}x${channels} image (expected ${width * height * channels})`);
  }
}

/**
 * Mean SSIM and mean contrast-structure term of two single-channel images of
 * the same size (at least 11x11), over every position where the 11x11 window fits.
 */
function ssimTerms(x: Float64Array, y: Float64Array, w: number, h: number): { ssim: number; cs: number } {
  const ow = w - SSIM_WINDOW + 1;
  const oh = h - SSIM_WINDOW + 1;
  const k = KERNEL;
  const K = SSIM_WINDOW;
  // Horizontal pass: x, y, x^2, y^2, xy filtered along rows.
  const m = ow * h;
  const hx = new Float64Array(m);
  const hy = new Float64Array(m);
  const hxx = new Float64Array(m);
  const hyy = new Float64Array(m);
  const hxy = new Float64Array(m);
  for (let r = 0; r < h; r++) {
    const row = r * w;
    for (let c = 0; c < ow; c++) {
      let sx = 0;
      let sy = 0;
      let sxx = 0;
      let syy = 0;
      let sxy = 0;
      for (let t = 0; t < K; t++) {
        const g = k[t]!;
        const a = x[row + c + t]!;
        const b = y[row + c + t]!;
        sx += g * a;
        sy += g * b;
        sxx += g * (a * a);
        syy += g * (b * b);
        sxy += g * (a * b);
      }
      const o = r * ow + c;
      hx[o] = sx;
      hy[o] = sy;
      hxx[o] = sxx;
      hyy[o] = syy;
      hxy[o] = sxy;
    }
  }
  // Vertical pass, straight into the SSIM terms.
  let ssimSum = 0;
  let csSum = 0;
  for (let r = 0; r < oh; r++) {
    for (let c = 0; c < ow; c++) {
      let mx = 0;
      let my = 0;
      let exx = 0;
      let eyy = 0;
      let exy = 0;
      for (let t = 0; t < K; t++) {
        const g = k[t]!;
        const o = (r + t) * ow + c;
        mx += g * hx[o]!;
        my += g * hy[o]!;
        exx += g * hxx[o]!;
        eyy += g * hyy[o]!;
        exy += g * hxy[o]!;
      }
      const mxx = mx * mx;
      const myy = my * my;
      const mxy = mx * my;
      const vx = exx - mxx;
      const vy = eyy - myy;
      const cov = exy - mxy;
      const cs = (2 * cov + C2) / (vx + vy + C2);
      const l = (2 * mxy + C1) / (mxx + myy + C1);
      csSum += cs;
      ssimSum += l * cs;
    }
  }
  const count = ow * oh;
  return { ssim: ssimSum / count, cs: csSum / count };
}

/** 2x2 average, dropping an odd last row or column. */
function downsample(x: Float64Array, w: number, h: number): Float64Array {
  const w2 = Math.floor(w / 2);
  const h2 = Math.floor(h / 2);
  const out = new Float64Array(w2 * h2);
  for (let r = 0; r < h2; r++) {
    const top = 2 * r * w;
    const bottom = top + w;
    for (let c = 0; c < w2; c++) {
      const i = 2 * c;
      out[r * w2 + c] = (x[top + i]! + x[top + i + 1]! + x[bottom + i]! + x[bottom + i + 1]!) * 0.25;
    }
  }
  return out;
}

/**
 * Single-scale SSIM (the mean SSIM map of Wang et al. 2004) at full
 * resolution, on luma for colour images. Needs at least 11x11 pixels.
 */
export function ssim(a: PixelArray, b: PixelArray, width: number, height: number, channels: 1 | 3): number {
  if (width < SSIM_WINDOW || height < SSIM_WINDOW) throw new RangeError(`SSIM needs at least ${SSIM_WINDOW}x${SSIM_WINDOW} pixels, got ${width}x${height}`);
  return ssimTerms(toLuma(a, width, height, channels), toLuma(b, width, height, channels), width, height).ssim;
}

/** MS-SSIM with the per-scale terms and the number of scales used (see the rule at the top of this file). */
export function msssimDetail(a: PixelArray, b: PixelArray, width: number, height: number, channels: 1 | 3): MsssimDetail {
  const scales = msssimScales(width, height);
  if (scales === 0) {
    throw new RangeError(`MS-SSIM needs at least ${SSIM_WINDOW}x${SSIM_WINDOW} pixels (one scale with the 11x11 window), got ${width}x${height}`);
  }
  const weights = msssimWeights(scales);
  let x = toLuma(a, width, height, channels);
  let y = toLuma(b, width, height, channels);
  let w = width;
  let h = height;
  const cs: number[] = [];
  let coarseSsim = 0;
  let value = 1;
  for (let s = 0; s < scales; s++) {
    const terms = ssimTerms(x, y, w, h);
    cs.push(terms.cs);
    if (s < scales - 1) {
      value *= Math.max(terms.cs, 0) ** weights[s]!;
      x = downsample(x, w, h);
      y = downsample(y, w, h);
      w = Math.floor(w / 2);
      h = Math.floor(h / 2);
    } else {
      coarseSsim = terms.ssim;
      value *= Math.max(terms.ssim, 0) ** weights[s]!;
    }
  }
  return { value, scales, weights, cs, coarseSsim };
}

/**
 * MS-SSIM of two images of the same shape, interleaved 0..255 pixels (luma for
 * colour). 1 means identical; see the top of this file for the parameters and
 * the rule for images too small for five scales (msssimScales tells the count).
 */
export function msssim(a: PixelArray, b: PixelArray, width: number, height: number, channels: 1 | 3): number {
  return msssimDetail(a, b, width, height, channels).value;
}
