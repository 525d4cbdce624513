// Progressive JPEG encoder tests. libjpeg-turbo's djpeg/jpegtran
// (Debian package libjpeg-turbo-progs) serve as the independent decoder.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZIGZAG } from '../../../src/jpeg/dct.js';
import { encodeFrame, frameFromImage } from '../../../src/jpeg/encframe.js';
import type { Frame, ScanSpec } from '../../../src/jpeg/encframe.js';
import { encodeProgressiveScans, scanCount } from '../../../src/jpeg/encoder.js';
import type { RawImage } from '../../../src/jpeg/encoder.js';
import { seededRandom } from '../../../src/shared/random.js';
import { canonicalSegments, closeTemp, concat, djpeg, jpegtran, openTemp, toolsPresent } from './jpeg-tools.js';

/** Full-decode fidelity required for the grayscale test image at quality 90. */
const MIN_PSNR_GRAY_Q90 = 35;
/** Same for colour (RGB PSNR; the chroma tables are coarser than luma). */
const MIN_PSNR_COLOR_Q90 = 30;

// The scan scripts as (Ss, Se, Ah, Al, component ids), written out
// independently of the encoder from libjpeg jcparam.c jpeg_simple_progression.
const GRAY_SCRIPT = [
  [0, 0, 0, 1, [1]],
  [1, 5, 0, 2, [1]],
  [6, 63, 0, 2, [1]],
  [1, 63, 2, 1, [1]],
  [0, 0, 1, 0, [1]],
  [1, 63, 1, 0, [1]],
] as const;
const COLOR_SCRIPT = [
  [0, 0, 0, 1, [1, 2, 3]],
  [1, 5, 0, 2, [1]],
  [1, 63, 0, 1, [3]],
  [1, 63, 0, 1, [2]],
  [6, 63, 0, 2, [1]],
  [1, 63, 2, 1, [1]],
  [0, 0, 1, 0, [1, 2, 3]],
  [1, 63, 1, 0, [3]],
  [1, 63, 1, 0, [2]],
  [1, 63, 1, 0, [1]],
] as const;

/** Converts the literal script above to encframe's form (component id i+1 -> index i). */
function toSpecs(script: typeof GRAY_SCRIPT | typeof COLOR_SCRIPT): ScanSpec[] {
  return script.map(([ss, se, ah, al, ids]) => ({ comps: ids.map((id) => id - 1), ss, se, ah, al }));
}

/** Spectral selection only, full precision: shares none of the successive-approximation code paths. */
function noSaScript(ncomps: number): ScanSpec[] {
  const comps = Array.from({ length: ncomps }, (_, i) => i);
  return [{ comps, ss: 0, se: 0, ah: 0, al: 0 }, ...comps.map((c) => ({ comps: [c], ss: 1, se: 63, ah: 0, al: 0 }))];
}

// ---------------------------------------------------------------- helpers

const clamp8 = (v: number): number => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v));

/** Gradients + a hard-edged rectangle and disc + seeded noise. */
function syntheticImage(width: number, height: number, channels: 1 | 3, seed: number): RawImage {
  const rnd = seededRandom(seed);
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const inRect = x > width * 0.2 && x < width * 0.55 && y > height * 0.3 && y < height * 0.8;
      const dx = x - width * 0.7;
      const dy = y - height * 0.35;
      const inDisc = dx * dx + dy * dy < (Math.min(width, height) * 0.22) ** 2;
      for (let c = 0; c < channels; c++) {
        let v = ((x + 1) / width) * 120 + ((y + 1) / height) * 60 + c * 25;
        if (inRect) v = 210 - c * 70;
        if (inDisc) v = 30 + c * 90;
        v += (rnd() - 0.5) * 16;
        data[(y * width + x) * channels + c] = clamp8(v);
      }
    }
  }
  return { width, height, channels, data };
}

/** A Fashion-MNIST-like 28x28 image: textured garment silhouette on black. */
function garmentImage(seed: number): RawImage {
  const rnd = seededRandom(seed);
  const data = new Uint8Array(28 * 28);
  for (let y = 0; y < 28; y++) {
    for (let x = 0; x < 28; x++) {
      const body = x >= 8 && x <= 19 && y >= 3 && y <= 25;
      const sleeve = y >= 4 && y <= 13 && x >= 3 && x <= 24 && Math.abs(x - 13.5) <= 6 + (y - 3);
      if (body || sleeve) data[y * 28 + x] = clamp8(150 + 40 * Math.sin(x * 0.9) * Math.cos(y * 0.4) + (rnd() - 0.5) * 50);
    }
  }
  return { width: 28, height: 28, channels: 1, data };
}

const EOI = new Uint8Array([0xff, 0xd9]);
const jpegOfFirst = (chunks: readonly Uint8Array[], g: number): Uint8Array => concat([...chunks.slice(0, g), EOI]);

function mse(a: Uint8Array, b: Uint8Array): number {
  expect(a.length).toBe(b.length);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i]! - b[i]!) ** 2;
  return s / a.length;
}

const psnr = (m: number): number => 10 * Math.log10((255 * 255) / m);

interface Segment {
  marker: number;
  body: Uint8Array;
}

/** Marker segments of a chunk up to and including its SOS header (entropy data skipped). */
function headerSegments(chunk: Uint8Array): Segment[] {
  const segs: Segment[] = [];
  let pos = 0;
  for (;;) {
    expect(chunk[pos], `marker prefix at ${pos}`).toBe(0xff);
    const marker = chunk[pos + 1]!;
    if (marker === 0xd8) {
      segs.push({ marker, body: new Uint8Array(0) });
      pos += 2;
      continue;
    }
    const len = (chunk[pos + 2]! << 8) | chunk[pos + 3]!;
    segs.push({ marker, body: chunk.subarray(pos + 4, pos + 2 + len) });
    pos += 2 + len;
    if (marker === 0xda) return segs;
  }
}

function sosParams(chunk: Uint8Array): [number, number, number, number, number[]] {
  const sos = headerSegments(chunk).find((s) => s.marker === 0xda)!.body;
  const ns = sos[0]!;
  const ids = Array.from({ length: ns }, (_, i) => sos[1 + 2 * i]!);
  const p = 1 + 2 * ns;
  return [sos[p]!, sos[p + 1]!, sos[p + 2]! >> 4, sos[p + 2]! & 15, ids];
}

/**
 * Pixels expected from exact (float) dequantisation + IDCT of a frame's
 * coefficients: an oracle that shares no code with the entropy coder.
 * Colour frames come back as YCbCr->RGB with the JFIF equations.
 */
function referenceDecode(frame: Frame): Float64Array {
  const { width, height } = frame;
  const bw = Math.ceil(width / 8);
  const planes = frame.components.map((comp) => {
    const q = frame.quantTables[comp.quantTable]!;
    const plane = new Float64Array(width * height);
    const blk = new Float64Array(64);
    for (let b = 0; b < comp.coefs.length / 64; b++) {
      for (let k = 0; k < 64; k++) blk[ZIGZAG[k]!] = comp.coefs[b * 64 + k]! * q[ZIGZAG[k]!]!;
      const bx = (b % bw) * 8;
      const by = Math.floor(b / bw) * 8;
      for (let y = 0; y < 8 && by + y < height; y++) {
        for (let x = 0; x < 8 && bx + x < width; x++) {
          let s = 0;
          for (let v = 0; v < 8; v++) {
            for (let u = 0; u < 8; u++) {
              const cu = u === 0 ? Math.SQRT1_2 : 1;
              const cv = v === 0 ? Math.SQRT1_2 : 1;
              s += cu * cv * blk[v * 8 + u]! * Math.cos(((2 * x + 1) * u * Math.PI) / 16) * Math.cos(((2 * y + 1) * v * Math.PI) / 16);
            }
          }
          plane[(by + y) * width + bx + x] = s / 4 + 128;
        }
      }
    }
    return plane;
  });
  if (planes.length === 1) return planes[0]!.map((v) => clamp8(v));
  const [yp, cb, cr] = planes as [Float64Array, Float64Array, Float64Array];
  const rgb = new Float64Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    const Y = clamp8(yp[i]!);
    const B = clamp8(cb[i]!) - 128;
    const R = clamp8(cr[i]!) - 128;
    rgb[3 * i] = clamp8(Y + 1.402 * R);
    rgb[3 * i + 1] = clamp8(Y - 0.344136 * B - 0.714136 * R);
    rgb[3 * i + 2] = clamp8(Y + 1.772 * B);
  }
  return rgb;
}

function maxAbsDiff(a: Uint8Array, b: Float64Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** Random sparse coefficients, with long zero runs and every magnitude class the refinement passes distinguish. */
function randomCoefFrame(width: number, height: number, ncomps: number, seed: number, quant: number): Frame {
  const rnd = seededRandom(seed);
  const nBlocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const components = Array.from({ length: ncomps }, (_, c) => {
    const coefs = new Int16Array(nBlocks * 64);
    for (let b = 0; b < nBlocks; b++) {
      coefs[b * 64] = Math.round((rnd() - 0.5) * 60);
      const density = rnd() < 0.2 ? 0 : rnd() * 0.5; // some blocks all-zero (EOB runs)
      for (let k = 1; k < 64; k++) {
        if (rnd() >= density) continue;
        const r = rnd();
        const mag = r < 0.3 ? 1 : r < 0.5 ? 2 : r < 0.65 ? 3 : r < 0.8 ? 4 + Math.floor(rnd() * 4) : 8 + Math.floor(rnd() * 24);
        coefs[b * 64 + k] = rnd() < 0.5 ? -mag : mag;
      }
    }
    return { id: c + 1, quantTable: 0, huffTable: Math.min(c, 1), coefs };
  });
  return { width, height, quantTables: [new Uint16Array(64).fill(quant)], components };
}

// ---------------------------------------------------------------- tests

beforeAll(() => {
  expect(toolsPresent(), 'djpeg/jpegtran missing: apt-get install libjpeg-turbo-progs').toBe(true);
  openTemp();
});

afterAll(closeTemp);

describe('scan script', () => {
  it('has 6 scans for grayscale and 10 for colour', () => {
    expect(scanCount(1)).toBe(6);
    expect(scanCount(3)).toBe(10);
  });

  it.each([
    ['grayscale', syntheticImage(28, 28, 1, 1), GRAY_SCRIPT],
    ['colour', syntheticImage(37, 21, 3, 2), COLOR_SCRIPT],
  ] as const)('%s chunks carry SOS headers and DHTs that follow jpeg_simple_progression', (_, img, script) => {
    const chunks = encodeProgressiveScans(img);
    expect(chunks.length).toBe(script.length);
    expect(chunks.length).toBe(scanCount(img.channels));
    chunks.forEach((chunk, i) => {
      const [ss, se, ah, al, ids] = sosParams(chunk);
      const [ess, ese, eah, eal, eids] = script[i]!;
      expect([ss, se, ah, al, ids], `scan ${i + 1}`).toEqual([ess, ese, eah, eal, [...eids]]);

      const segs = headerSegments(chunk);
      const markers = segs.map((s) => s.marker);
      const isDcRefine = ss === 0 && ah > 0;
      if (i === 0) {
        expect(markers.slice(0, 4)).toEqual([0xd8, 0xe0, 0xdb, 0xc2]); // SOI APP0 DQT SOF2
        const sof = segs[3]!.body;
        expect([(sof[1]! << 8) | sof[2]!, (sof[3]! << 8) | sof[4]!, sof[5]]).toEqual([img.height, img.width, img.channels]);
      } else {
        expect(markers[0]).not.toBe(0xd8);
      }
      // Every Huffman-coded scan defines its own tables right before SOS, of the right class.
      const dhts = segs.filter((s) => s.marker === 0xc4);
      expect(dhts.length, `scan ${i + 1} DHT count`).toBe(isDcRefine ? 0 : 1);
      if (!isDcRefine) expect(dhts[0]!.body[0]! >> 4).toBe(ss === 0 ? 0 : 1);
      expect(markers[markers.length - 1]).toBe(0xda);
    });
    // No chunk may carry EOI.
    const all = concat(chunks);
    expect(all[all.length - 2] === 0xff && all[all.length - 1] === 0xd9).toBe(false);
  });

  it('encodeProgressiveScans equals encodeFrame with the documented script', () => {
    for (const [img, script] of [
      [syntheticImage(28, 28, 1, 3), GRAY_SCRIPT],
      [syntheticImage(37, 21, 3, 4), COLOR_SCRIPT],
    ] as const) {
      const direct = encodeFrame(frameFromImage(img, 90), toSpecs(script));
      expect(encodeProgressiveScans(img)).toEqual(direct);
    }
  });
});

describe('decoding with djpeg', () => {
  it.each([
    ['grayscale 28x28', syntheticImage(28, 28, 1, 11), MIN_PSNR_GRAY_Q90],
    ['colour 37x21', syntheticImage(37, 21, 3, 12), MIN_PSNR_COLOR_Q90],
  ] as const)('%s: every scan prefix decodes cleanly and error does not grow (beyond rounding)', (_, img, minPsnr) => {
    const chunks = encodeProgressiveScans(img, { quality: 90 });
    const errors: number[] = [];
    for (let g = 1; g <= chunks.length; g++) {
      const d = djpeg(jpegOfFirst(chunks, g));
      expect(d.stderr, `warnings after ${g} scans`).toBe('');
      expect([d.width, d.height, d.channels]).toEqual([img.width, img.height, img.channels]);
      errors.push(mse(d.pixels, img.data));
    }
    // A refinement scan adds a bit to coefficients already sent; after the IDCT's rounding and clamping the pixel MSE
    // can tick up a little (50.02 -> 50.21 seen on a random image), so "never increases" holds to within 2%.
    for (let g = 1; g < errors.length; g++) {
      expect(errors[g], `MSE after ${g + 1} scans vs ${g}: ${errors.join(', ')}`).toBeLessThanOrEqual(errors[g - 1]! * 1.02);
    }
    expect(errors[errors.length - 1]).toBeLessThan(errors[0]!);
    expect(psnr(errors[errors.length - 1]!)).toBeGreaterThan(minPsnr);
  });

  it.each([
    [1, 1, 1],
    [1, 9, 3],
    [8, 8, 1],
    [9, 17, 3],
    [17, 1, 1],
    [64, 40, 3],
  ] as const)('%ix%i (%i channels) decodes to the right size and close to the source', (width, height, channels) => {
    const img = syntheticImage(width, height, channels, width * 100 + height);
    const chunks = encodeProgressiveScans(img, { quality: 95 });
    for (let g = 1; g <= chunks.length; g++) {
      const d = djpeg(jpegOfFirst(chunks, g));
      expect(d.stderr).toBe('');
      expect([d.width, d.height, d.channels]).toEqual([width, height, channels]);
      if (g === chunks.length) expect(psnr(mse(d.pixels, img.data))).toBeGreaterThan(30);
    }
  });

  it('jpegtran -optimize (baseline re-encoding of our coefficients) decodes to identical pixels', () => {
    for (const img of [syntheticImage(28, 28, 1, 21), syntheticImage(37, 21, 3, 22), syntheticImage(64, 48, 3, 23)]) {
      const ours = jpegOfFirst(encodeProgressiveScans(img), scanCount(img.channels));
      const baseline = jpegtran(ours, ['-optimize']);
      expect(headerSegments(baseline).some((s) => s.marker === 0xc0)).toBe(true); // SOF0, not progressive
      const a = djpeg(ours);
      const b = djpeg(baseline);
      expect(b.stderr).toBe('');
      expect(Buffer.from(a.pixels).equals(Buffer.from(b.pixels))).toBe(true);
    }
  });
});

describe('exact coefficients through successive approximation', () => {
  // The refinement scans (DC refine, AC refine with correction bits and EOB
  // runs) must reproduce the coefficients bit-exactly; a full-precision
  // spectral-selection-only encoding of the same coefficients must decode to
  // the very same pixels, and both must match a float IDCT of our coefficients.
  const cases: [string, () => Frame, ScanSpec[]][] = [
    ['grayscale image', () => frameFromImage(syntheticImage(28, 28, 1, 31), 90), toSpecs(GRAY_SCRIPT)],
    ['colour image', () => frameFromImage(syntheticImage(37, 21, 3, 32), 75), toSpecs(COLOR_SCRIPT)],
    ['random coefficients, 1 comp', () => randomCoefFrame(120, 72, 1, 33, 4), toSpecs(GRAY_SCRIPT)],
    ['random coefficients, 3 comps', () => randomCoefFrame(77, 45, 3, 34, 3), toSpecs(COLOR_SCRIPT)],
  ];

  it.each(cases)('%s', (_, makeFrame, script) => {
    const frame = makeFrame();
    const ncomps = frame.components.length;
    const sa = djpeg(jpegOfFirst(encodeFrame(frame, script), script.length));
    const plain = djpeg(jpegOfFirst(encodeFrame(frame, noSaScript(ncomps)), ncomps + 1));
    expect(sa.stderr).toBe('');
    expect(plain.stderr).toBe('');
    expect(Buffer.from(sa.pixels).equals(Buffer.from(plain.pixels))).toBe(true);
    if (ncomps === 1) {
      // libjpeg's integer IDCT is within 1 level of the exact one (IEEE 1180).
      expect(maxAbsDiff(sa.pixels, referenceDecode(frame))).toBeLessThanOrEqual(1);
    } else {
      // Colour adds libjpeg's fixed-point YCbCr->RGB rounding on top.
      expect(maxAbsDiff(sa.pixels, referenceDecode(frame))).toBeLessThanOrEqual(3);
    }
  });

  it.each(cases)('%s: same tables and scan bits as libjpeg (jpegtran -progressive)', (_, makeFrame, script) => {
    // jpegtran re-encodes the coefficients with libjpeg's jcphuff.c and the
    // same simple progression, so every Huffman table and every entropy-coded
    // bit (EOB runs, correction-bit placement, 1-bit padding) must agree.
    const ours = jpegOfFirst(encodeFrame(makeFrame(), script), script.length);
    expect(canonicalSegments(jpegtran(ours, ['-progressive']))).toEqual(canonicalSegments(ours));
  });

  it('flushes buffered correction bits when an EOB run holds too many (> 937)', () => {
    // Every block: 30 AC coefficients of magnitude 2..3 and nothing else, so
    // the last refinement scan has no newly non-zero coefficients at all: all
    // blocks join one EOB run and only correction bits accumulate.
    const rnd = seededRandom(41);
    const frame = randomCoefFrame(64, 64, 1, 42, 8);
    const coefs = frame.components[0]!.coefs;
    coefs.fill(0);
    for (let b = 0; b < coefs.length / 64; b++) {
      for (let k = 1; k <= 60; k += 2) coefs[b * 64 + k] = (rnd() < 0.5 ? -1 : 1) * (2 + (rnd() < 0.5 ? 1 : 0));
    }
    const ours = jpegOfFirst(encodeFrame(frame, toSpecs(GRAY_SCRIPT)), 6);
    const sa = djpeg(ours);
    expect(sa.stderr).toBe('');
    expect(maxAbsDiff(sa.pixels, referenceDecode(frame))).toBeLessThanOrEqual(1);
    expect(canonicalSegments(jpegtran(ours, ['-progressive']))).toEqual(canonicalSegments(ours));
  });

  it('splits EOB runs at 32767 blocks', () => {
    // 183x183 = 33489 blocks, flat except the first and last few blocks, so
    // every AC scan needs an EOB run longer than the maximum.
    const width = 183 * 8;
    const height = 183 * 8;
    const data = new Uint8Array(width * height).fill(100);
    const rnd = seededRandom(51);
    for (let y = 0; y < 8; y++) for (let x = 0; x < 16; x++) data[y * width + x] = Math.floor(rnd() * 256);
    for (let y = height - 8; y < height; y++) for (let x = width - 24; x < width; x++) data[y * width + x] = Math.floor(rnd() * 256);
    const frame = frameFromImage({ width, height, channels: 1, data }, 90);
    const ours = jpegOfFirst(encodeFrame(frame, toSpecs(GRAY_SCRIPT)), 6);
    const sa = djpeg(ours);
    expect(sa.stderr).toBe('');
    expect(maxAbsDiff(sa.pixels, referenceDecode(frame))).toBeLessThanOrEqual(1);
    expect(canonicalSegments(jpegtran(ours, ['-progressive']))).toEqual(canonicalSegments(ours));
  });
});

describe('options and sizes', () => {
  it('quality 50 gives fewer bytes than quality 95', () => {
    for (const img of [syntheticImage(28, 28, 1, 61), syntheticImage(37, 21, 3, 62)]) {
      const size = (q: number): number => concat(encodeProgressiveScans(img, { quality: q })).length;
      expect(size(50)).toBeLessThan(size(95));
    }
  });

  it('rejects invalid input', () => {
    const ok = syntheticImage(8, 8, 1, 71);
    expect(() => encodeProgressiveScans({ ...ok, width: 0 })).toThrow(RangeError);
    expect(() => encodeProgressiveScans({ ...ok, data: new Uint8Array(10) })).toThrow(RangeError);
    expect(() => encodeProgressiveScans(ok, { quality: 0 })).toThrow(RangeError);
    expect(() => encodeProgressiveScans(ok, { quality: 101 })).toThrow(RangeError);
    const frame = frameFromImage(syntheticImage(8, 8, 3, 72), 90);
    expect(() => encodeFrame(frame, [{ comps: [0, 1], ss: 1, se: 63, ah: 0, al: 0 }])).toThrow(); // AC scans are single-component
    expect(() => encodeFrame(frame, [{ comps: [0], ss: 0, se: 0, ah: 2, al: 0 }])).toThrow(); // Ah must be Al + 1
  });

  it('uses the T.81 zigzag order', () => {
    expect(Array.from(ZIGZAG.subarray(0, 16))).toEqual([0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5]);
    expect(Array.from(ZIGZAG.subarray(56))).toEqual([53, 60, 61, 54, 47, 55, 62, 63]);
    expect([...ZIGZAG].sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i));
  });

  it('reports bytes per scan for 28x28 grayscale at quality 90', () => {
    const rows = [
      ['synthetic', syntheticImage(28, 28, 1, 81)],
      ['garment-like', garmentImage(82)],
    ] as const;
    for (const [name, img] of rows) {
      const sizes = encodeProgressiveScans(img, { quality: 90 }).map((c) => c.length);
      const total = sizes.reduce((a, b) => a + b, 0) + 2;
      console.log(`28x28 ${name} q90 bytes per scan: ${sizes.join(' ')} (file incl. EOI: ${total})`);
      expect(sizes.length).toBe(6);
    }
  });
});
