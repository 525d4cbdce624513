// MS-SSIM (src/pcr/mssim.ts). The oracles here are written independently of the
// module: a direct 2-D windowed SSIM, closed forms for flat images, and JPEGs
// made by Debian's cjpeg and decoded by djpeg.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { msssim, msssimDetail, msssimScales, msssimWeights, ssim } from '../../../src/pcr/mssim.js';
import { seededRandom } from '../../../src/shared/random.js';

const STANDARD = [0.0448, 0.2856, 0.3001, 0.2363, 0.1333];

/** A deterministic image with edges, gradients and texture, 0..255 (interleaved RGB when channels = 3). */
function scene(width: number, height: number, channels: 1 | 3, seed = 1): Uint8Array {
  const random = seededRandom(seed);
  const out = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const u = x / width;
      const v = y / height;
      const disk = (u - 0.4) ** 2 + (v - 0.55) ** 2 < 0.06 ? 90 : 0;
      const stripes = 30 * Math.sin(x * 0.9 + y * 0.35);
      for (let c = 0; c < channels; c++) {
        const base = 40 + 120 * u + (50 * v * (c + 1)) / channels + disk + stripes + 12 * random();
        out[(y * width + x) * channels + c] = Math.max(0, Math.min(255, Math.round(base)));
      }
    }
  }
  return out;
}

/** Standard normal samples (Box-Muller) from a seeded generator. */
function gaussian(n: number, seed: number): Float64Array {
  const random = seededRandom(seed);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - random()));
    const t = 2 * Math.PI * random();
    out[i] = r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = r * Math.sin(t);
  }
  return out;
}

// --- An independent, deliberately plain SSIM: a full 2-D Gaussian window,
// weighted means, variances as weighted squared deviations. No shared code.
function naiveWindow(): number[][] {
  const win: number[][] = [];
  let total = 0;
  for (let i = 0; i < 11; i++) {
    win.push([]);
    for (let j = 0; j < 11; j++) {
      const value = Math.exp(-((i - 5) ** 2 + (j - 5) ** 2) / (2 * 1.5 * 1.5));
      win[i]!.push(value);
      total += value;
    }
  }
  return win.map((row) => row.map((value) => value / total));
}

function naiveTerms(a: number[][], b: number[][]): { ssim: number; cs: number } {
  const win = naiveWindow();
  const c1 = (0.01 * 255) ** 2;
  const c2 = (0.03 * 255) ** 2;
  const h = a.length;
  const w = a[0]!.length;
  let ssimTotal = 0;
  let csTotal = 0;
  let count = 0;
  for (let top = 0; top + 11 <= h; top++) {
    for (let left = 0; left + 11 <= w; left++) {
      let muA = 0;
      let muB = 0;
      for (let i = 0; i < 11; i++) {
        for (let j = 0; j < 11; j++) {
          muA += win[i]![j]! * a[top + i]![left + j]!;
          muB += win[i]![j]! * b[top + i]![left + j]!;
        }
      }
      let varA = 0;
      let varB = 0;
      let cov = 0;
      for (let i = 0; i < 11; i++) {
        for (let j = 0; j < 11; j++) {
          const da = a[top + i]![left + j]! - muA;
          const db = b[top + i]![left + j]! - muB;
          varA += win[i]![j]! * da * da;
          varB += win[i]![j]! * db * db;
          cov += win[i]![j]! * da * db;
        }
      }
      const luminance = (2 * muA * muB + c1) / (muA * muA + muB * muB + c1);
      const contrastStructure = (2 * cov + c2) / (varA + varB + c2);
      ssimTotal += luminance * contrastStructure;
      csTotal += contrastStructure;
      count++;
    }
  }
  return { ssim: ssimTotal / count, cs: csTotal / count };
}

function toRows(data: ArrayLike<number>, width: number, height: number): number[][] {
  const rows: number[][] = [];
  for (let y = 0; y < height; y++) rows.push(Array.from({ length: width }, (_, x) => data[y * width + x]!));
  return rows;
}

function halve(img: number[][]): number[][] {
  const out: number[][] = [];
  for (let y = 0; y + 1 < img.length; y += 2) {
    const row: number[] = [];
    for (let x = 0; x + 1 < img[0]!.length; x += 2) row.push((img[y]![x]! + img[y]![x + 1]! + img[y + 1]![x]! + img[y + 1]![x + 1]!) / 4);
    out.push(row);
  }
  return out;
}

function naiveMsssim(a: number[][], b: number[][]): number {
  // Five scales with the standard exponents (the image is large enough for all of them).
  let result = 1;
  for (let s = 0; s < 5; s++) {
    const terms = naiveTerms(a, b);
    result *= (s < 4 ? terms.cs : terms.ssim) ** STANDARD[s]!;
    a = halve(a);
    b = halve(b);
  }
  return result;
}

// --- JPEG round trips through Debian's libjpeg-turbo tools.
const dir = mkdtempSync(join(tmpdir(), 'bytelab-mssim-'));

function jpegRoundTrip(pixels: Uint8Array, width: number, height: number, channels: 1 | 3, quality: number): Uint8Array {
  const src = join(dir, `src-${quality}.${channels === 1 ? 'pgm' : 'ppm'}`);
  writeFileSync(src, Buffer.concat([Buffer.from(`${channels === 1 ? 'P5' : 'P6'}\n${width} ${height}\n255\n`), pixels]));
  const jpeg = execFileSync('cjpeg', ['-baseline', '-quality', String(quality), src]);
  const jpegFile = join(dir, `q${quality}.jpg`);
  writeFileSync(jpegFile, jpeg);
  const pnm = new Uint8Array(execFileSync('djpeg', ['-pnm', jpegFile]));
  const size = width * height * channels;
  return pnm.subarray(pnm.length - size);
}

describe('SSIM against an independent implementation', () => {
  it('two flat images: the closed form of the luminance term, contrast-structure exactly 1', () => {
    const a = new Uint8Array(16 * 16).fill(100);
    const b = new Uint8Array(16 * 16).fill(110);
    const c1 = (0.01 * 255) ** 2; // 6.5025
    const expected = (2 * 100 * 110 + c1) / (100 * 100 + 110 * 110 + c1); // 22006.5025 / 22106.5025
    expect(expected).toBeCloseTo(0.995476444, 9);
    expect(ssim(a, b, 16, 16, 1)).toBeCloseTo(expected, 10);
    // MS-SSIM of flat 28x28 images: 2 scales, cs = 1 at scale 1, so the score is l^(w2'),
    // with w2' the renormalised second exponent.
    const a28 = new Uint8Array(28 * 28).fill(100);
    const b28 = new Uint8Array(28 * 28).fill(110);
    const w2 = (0.2856 * (0.0448 + 0.2856 + 0.3001 + 0.2363 + 0.1333)) / (0.0448 + 0.2856);
    expect(msssim(a28, b28, 28, 28, 1)).toBeCloseTo(expected ** w2, 10);
  });

  it('matches a direct 2-D windowed SSIM on a small textured pair', () => {
    const width = 17;
    const height = 14;
    const a = scene(width, height, 1, 3);
    const noise = gaussian(width * height, 4);
    const b = new Float32Array(a.length);
    for (let i = 0; i < a.length; i++) b[i] = a[i]! + 15 * noise[i]!;
    const expected = naiveTerms(toRows(a, width, height), toRows(b, width, height)).ssim;
    expect(expected).toBeGreaterThan(0.2);
    expect(expected).toBeLessThan(0.99);
    expect(ssim(a, b, width, height, 1)).toBeCloseTo(expected, 10);
  });

  it('matches a direct five-scale MS-SSIM on a 180x180 pair', () => {
    const size = 180;
    const a = scene(size, size, 1, 5);
    const noise = gaussian(size * size, 6);
    const b = new Float32Array(a.length);
    for (let i = 0; i < a.length; i++) b[i] = a[i]! + 20 * noise[i]!;
    const detail = msssimDetail(a, b, size, size, 1);
    expect(detail.scales).toBe(5);
    expect(detail.weights).toEqual(STANDARD);
    expect(detail.value).toBeCloseTo(naiveMsssim(toRows(a, size, size), toRows(b, size, size)), 10);
  });

  it('uses luma for colour: Y = 0.299 R + 0.587 G + 0.114 B', () => {
    const width = 30;
    const height = 30;
    const a = scene(width, height, 3, 8);
    const b = scene(width, height, 3, 9);
    const luma = (rgb: Uint8Array) => {
      const y = new Float64Array(width * height);
      for (let i = 0; i < y.length; i++) y[i] = 0.299 * rgb[3 * i]! + 0.587 * rgb[3 * i + 1]! + 0.114 * rgb[3 * i + 2]!;
      return y;
    };
    expect(msssim(a, b, width, height, 3)).toBe(msssim(luma(a), luma(b), width, height, 1));
    expect(ssim(a, b, width, height, 3)).toBeCloseTo(naiveTerms(toRows(luma(a), width, height), toRows(luma(b), width, height)).ssim, 10);
  });
});

describe('MS-SSIM properties', () => {
  it('is exactly 1 for identical images', () => {
    const g = scene(28, 28, 1);
    expect(msssim(g, g.slice(), 28, 28, 1)).toBe(1);
    expect(msssim(Float32Array.from(g), Float32Array.from(g), 28, 28, 1)).toBe(1);
    const c = scene(64, 48, 3);
    expect(msssim(c, c.slice(), 64, 48, 3)).toBe(1);
    const big = scene(200, 190, 1);
    expect(msssim(big, big.slice(), 200, 190, 1)).toBe(1);
  });

  it('is symmetric', () => {
    for (const [w, h, ch] of [
      [28, 28, 1],
      [64, 64, 3],
      [181, 177, 1],
    ] as const) {
      const a = scene(w, h, ch, 11);
      const b = scene(w, h, ch, 12);
      const ab = msssim(a, b, w, h, ch);
      expect(ab).toBeLessThan(1);
      expect(msssim(b, a, w, h, ch)).toBe(ab);
    }
  });

  it('decreases monotonically as Gaussian noise grows', () => {
    for (const [w, h, ch] of [
      [28, 28, 1],
      [96, 96, 1],
      [64, 64, 3],
      [200, 200, 1],
    ] as const) {
      const clean = scene(w, h, ch, 21);
      const noise = gaussian(clean.length, 22);
      let previous = 1;
      for (const sigma of [1, 2, 5, 10, 20, 40, 80]) {
        const noisy = new Float32Array(clean.length);
        for (let i = 0; i < clean.length; i++) noisy[i] = clean[i]! + sigma * noise[i]!;
        const score = msssim(clean, noisy, w, h, ch);
        expect(score, `${w}x${h}x${ch}, sigma ${sigma}`).toBeLessThan(previous);
        expect(score).toBeGreaterThanOrEqual(0);
        previous = score;
      }
    }
  });

  it('scores a JPEG at quality 95 above the same image at quality 20 (cjpeg/djpeg)', () => {
    for (const [w, h, ch] of [
      [28, 28, 1],
      [64, 64, 3],
      [180, 180, 1],
    ] as const) {
      const original = scene(w, h, ch, 31);
      const q95 = msssim(original, jpegRoundTrip(original, w, h, ch, 95), w, h, ch);
      const q20 = msssim(original, jpegRoundTrip(original, w, h, ch, 20), w, h, ch);
      expect(q95, `${w}x${h}x${ch}`).toBeGreaterThan(q20);
      expect(q95).toBeGreaterThan(0.95);
      expect(q95).toBeLessThan(1);
    }
  });
});

describe('small images', () => {
  it('uses as many scales as hold the 11x11 window, and says how many', () => {
    expect(msssimScales(28, 28)).toBe(2); // 28, 14 (7 is too small)
    expect(msssimScales(32, 32)).toBe(2);
    expect(msssimScales(64, 64)).toBe(3);
    expect(msssimScales(175, 175)).toBe(4); // 175, 87, 43, 21 (10 is too small)
    expect(msssimScales(176, 176)).toBe(5);
    expect(msssimScales(1000, 12)).toBe(1);
    expect(msssimScales(10, 100)).toBe(0);
    const a = scene(28, 28, 1, 41);
    const b = scene(28, 28, 1, 42);
    const detail = msssimDetail(a, b, 28, 28, 1);
    expect(detail.scales).toBe(2);
    expect(detail.cs).toHaveLength(2);
    expect(detail.value).toBeCloseTo(detail.cs[0]! ** detail.weights[0]! * detail.coarseSsim ** detail.weights[1]!, 14);
  });

  it('renormalises the exponents of the scales it uses to the standard total', () => {
    const total = STANDARD.reduce((s, v) => s + v, 0);
    expect(msssimWeights(5)).toEqual(STANDARD);
    for (let s = 1; s <= 5; s++) {
      const w = msssimWeights(s);
      expect(w).toHaveLength(s);
      expect(w.reduce((x, y) => x + y, 0)).toBeCloseTo(total, 12);
      // Same proportions as the standard exponents.
      for (let j = 1; j < s; j++) expect(w[j]! / w[0]!).toBeCloseTo(STANDARD[j]! / STANDARD[0]!, 12);
    }
  });

  it('refuses images smaller than the window and mismatched inputs', () => {
    expect(() => msssim(new Uint8Array(100), new Uint8Array(100), 10, 10, 1)).toThrow(/at least 11x11/);
    expect(() => msssim(new Uint8Array(28 * 28), new Uint8Array(28 * 27), 28, 28, 1)).toThrow(RangeError);
    expect(() => msssim(new Uint8Array(28 * 28), new Uint8Array(28 * 28), 28, 28, 3)).toThrow(/expected 2352/);
  });
});

describe('speed', () => {
  it('scores 1,000 pairs of 28x28 images well under a second', () => {
    const pairs = Array.from({ length: 50 }, (_, k) => [scene(28, 28, 1, 100 + k), scene(28, 28, 1, 200 + k)] as const);
    msssim(pairs[0]![0], pairs[0]![1], 28, 28, 1); // warm up
    const start = performance.now();
    let sum = 0;
    for (let n = 0; n < 1000; n++) {
      const [a, b] = pairs[n % pairs.length]!;
      sum += msssim(a, b, 28, 28, 1);
    }
    const ms = performance.now() - start;
    expect(Number.isFinite(sum)).toBe(true);
    // About 80 ms on a quiet 2-core machine; the bound leaves room for a busy CI runner.
    expect(ms).toBeLessThan(1000);
  });
});
