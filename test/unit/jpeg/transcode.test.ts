// Lossless transcoding tests. cjpeg makes the inputs; djpeg and jpegtran
// (Debian package libjpeg-turbo-progs) are the oracles: our output must decode
// to exactly the pixels of the input, every scan prefix must decode cleanly,
// and libjpeg's own progressive re-encoding of the input (jpegtran
// -progressive, same simple progression, optimal tables) must carry the same
// tables and entropy-coded bits as ours.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProgressiveScans, scanCount, scanScript } from '../../../src/jpeg/encoder.js';
import { TranscodeError, transcodeToProgressive } from '../../../src/jpeg/transcode.js';
import type { TranscodeResult } from '../../../src/jpeg/transcode.js';
import {
  canonicalSegments,
  cjpeg,
  closeTemp,
  concat,
  djpeg,
  exifBody,
  firstScans,
  jpegtran,
  openTemp,
  segments,
  sofInfo,
  sosParams,
  spliceAfterSoi,
  syntheticPixels,
  toolsPresent,
} from './jpeg-tools.js';

beforeAll(async () => {
  // The oracle may still be being installed by the environment; wait a little, never skip.
  for (let i = 0; i < 12 && !toolsPresent(); i++) await new Promise((r) => setTimeout(r, 5000));
  expect(toolsPresent(), 'cjpeg/djpeg/jpegtran missing: apt-get install libjpeg-turbo-progs').toBe(true);
  openTemp();
}, 70_000);

afterAll(closeTemp);

const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

/**
 * The checks every lossless transcode must pass:
 *  - all chunks + EOI decode to pixels identical to the original's decode;
 *  - every prefix of chunks + EOI decodes without warnings, at full size;
 *  - the scans follow the dataset's script, the SOF keeps the sampling;
 *  - jpegtran -progressive of the original has the same tables and bits.
 */
function expectLossless(original: Uint8Array, result: TranscodeResult, opts: { jpegtranEqual?: boolean } = {}): void {
  const ours = firstScans(result.chunks);
  const ref = djpeg(original);
  expect(ref.stderr, 'djpeg of the original').toBe('');
  const full = djpeg(ours);
  expect(full.stderr).toBe('');
  expect([full.width, full.height, full.channels]).toEqual([ref.width, ref.height, ref.channels]);
  expect(same(full.pixels, ref.pixels), 'pixels identical to the original').toBe(true);

  const ncomps = result.colour === 'gray' ? 1 : 3;
  expect(result.chunks.length).toBe(scanCount(ncomps));
  const ids = sofInfo(ours).comps.map((c) => Number(c.split(':')[0]));
  result.chunks.forEach((chunk, i) => {
    const { comps, ss, se, ah, al } = scanScript(ncomps)[i]!;
    expect(sosParams(chunk), `scan ${i + 1}`).toEqual([ss, se, ah, al, comps.map((c) => ids[c])]);
  });
  expect([result.width, result.height]).toEqual([ref.width, ref.height]);
  for (let g = 1; g < result.chunks.length; g++) {
    const d = djpeg(firstScans(result.chunks, g));
    expect(d.stderr, `warnings after ${g} scans`).toBe('');
    expect([d.width, d.height]).toEqual([ref.width, ref.height]);
  }
  if (opts.jpegtranEqual ?? true) {
    expect(canonicalSegments(ours)).toEqual(canonicalSegments(jpegtran(original, ['-progressive'])));
  }
}

// ---------------------------------------------------------------- good inputs

const SAMPLINGS = [
  ['4:4:4', '1x1'],
  ['4:2:2', '2x1'],
  ['4:2:0', '2x2'],
  ['4:4:0', '1x2'],
  ['4:1:1', '4x1'],
] as const;
const SIZES = [
  [37, 23],
  [1, 1],
  [17, 9],
  [64, 48],
] as const;
const MODES = [
  ['baseline', []],
  ['progressive', ['-progressive']],
] as const;

/** A cjpeg -scans script of non-interleaved scans only: the input may then use MCUs no interleaved scan could hold. */
const NON_INTERLEAVED = '0: 0-0, 0, 0;\n1: 0-0, 0, 0;\n2: 0-0, 0, 0;\n0: 1-63, 0, 0;\n1: 1-63, 0, 0;\n2: 1-63, 0, 0;\n';

describe('lossless transcoding of cjpeg output', () => {
  const colourCases = SAMPLINGS.flatMap(([name, factor]) =>
    MODES.flatMap(([mode, flags]) => SIZES.map(([w, h]) => [name, mode, w, h, [...flags, '-sample', `${factor},1x1,1x1`]] as const)),
  );
  it.each(colourCases)('%s %s %ix%i', (name, _mode, w, h, args) => {
    const original = cjpeg(syntheticPixels(w, h, 3, w * 7 + h), ['-quality', '85', ...args]);
    const result = transcodeToProgressive(original);
    expect(result.colour).toBe('ycbcr');
    expect(result.sampling).toBe(name);
    expect(result.converted).toBeUndefined();
    expect(sofInfo(firstScans(result.chunks))).toEqual({ marker: 0xc2, comps: sofInfo(original).comps });
    expectLossless(original, result);
  });

  const grayCases = MODES.flatMap(([mode, flags]) => SIZES.map(([w, h]) => [mode, w, h, [...flags]] as const));
  it.each(grayCases)('grayscale %s %ix%i', (_mode, w, h, args) => {
    const original = cjpeg(syntheticPixels(w, h, 1, w + h), ['-quality', '90', ...args]);
    const result = transcodeToProgressive(original);
    expect([result.colour, result.sampling]).toEqual(['gray', '4:0:0']);
    expectLossless(original, result);
  });

  it.each([
    ['4:2:0 baseline, 1 MCU row', ['-sample', '2x2,1x1,1x1', '-restart', '1'], 3],
    ['4:4:4 progressive, 1 MCU row', ['-progressive', '-restart', '1'], 3],
    ['4:2:2 progressive, 2 MCUs', ['-progressive', '-sample', '2x1,1x1,1x1', '-restart', '2B'], 3],
    ['4:1:1 baseline, 3 MCUs', ['-sample', '4x1,1x1,1x1', '-restart', '3B'], 3],
    ['grayscale baseline, 1 MCU row', ['-restart', '1'], 1],
    ['grayscale progressive, 1 block', ['-progressive', '-restart', '1B'], 1],
  ] as const)('restart intervals: %s', (_, args, channels) => {
    for (const [w, h] of [
      [37, 23],
      [64, 48],
    ] as const) {
      const original = cjpeg(syntheticPixels(w, h, channels, 5), [...args]);
      expect(
        segments(original).some((s) => s.marker === 0xdd),
        'input has DRI',
      ).toBe(true);
      const result = transcodeToProgressive(original);
      expect(segments(firstScans(result.chunks)).some((s) => s.marker === 0xdd || (s.marker >= 0xd0 && s.marker <= 0xd7))).toBe(false);
      expectLossless(original, result);
    }
  });

  it('skips APP1 EXIF, APP2 ICC and COM segments (with marker-like bytes inside)', () => {
    for (const [channels, args] of [
      [3, ['-sample', '2x2,1x1,1x1']],
      [1, ['-progressive']],
    ] as const) {
      let original = cjpeg(syntheticPixels(40, 30, channels, 9), [...args]);
      original = spliceAfterSoi(original, 0xfe, new TextEncoder().encode('a comment'));
      original = spliceAfterSoi(original, 0xe2, concat([new TextEncoder().encode('ICC_PROFILE\0'), new Uint8Array([1, 1, 0xff, 0xd9, 0xff, 0xda])]));
      original = spliceAfterSoi(original, 0xe1, exifBody());
      expect(segments(original)[1]!.marker).toBe(0xe1);
      const result = transcodeToProgressive(original);
      const markers = segments(firstScans(result.chunks)).map((s) => s.marker);
      expect(markers.filter((m) => m >= 0xe1 && m <= 0xef)).toEqual([]);
      expect(markers).not.toContain(0xfe);
      expectLossless(original, result);
    }
  });

  it('SOF1 with 16-bit quantisation tables (quality 1) keeps the tables', () => {
    for (const channels of [3, 1] as const) {
      const original = cjpeg(syntheticPixels(48, 40, channels, 13), ['-quality', '1']);
      expect(sofInfo(original).marker).toBe(0xc1);
      const dqt = segments(original).find((s) => s.marker === 0xdb)!;
      expect(dqt.body[0]! >> 4, '16-bit DQT').toBe(1);
      const result = transcodeToProgressive(original);
      expectLossless(original, result);
    }
  });

  it('multi-scan sequential input (one non-interleaved scan per component)', () => {
    for (const sample of ['1x1', '2x2']) {
      const original = cjpeg(syntheticPixels(37, 23, 3, 17), ['-sample', `${sample},1x1,1x1`, '-scans', 'SCRIPT'], { SCRIPT: '0;\n1;\n2;\n' });
      expect(segments(original).filter((s) => s.marker === 0xda).length).toBe(3);
      expect(sofInfo(original).marker).toBe(0xc0);
      expectLossless(original, transcodeToProgressive(original));
    }
  });

  it('progressive input with its own scan script (non-interleaved DC, other bands and Al)', () => {
    const script = [
      '0: 0-0, 0, 2;',
      '1: 0-0, 0, 2;',
      '2: 0-0, 0, 2;',
      '0: 1-9, 0, 3;',
      '0: 10-63, 0, 3;',
      '1: 1-63, 0, 2;',
      '2: 1-63, 0, 0;',
      '0: 1-63, 3, 2;',
      '0,1,2: 0-0, 2, 1;',
      '0,1,2: 0-0, 1, 0;',
      '0: 1-63, 2, 1;',
      '1: 1-63, 2, 1;',
      '0: 1-63, 1, 0;',
      '1: 1-63, 1, 0;',
    ].join('\n');
    for (const restart of [[], ['-restart', '1B']]) {
      const original = cjpeg(syntheticPixels(45, 31, 3, 19), ['-sample', '2x2,1x1,1x1', '-quality', '95', ...restart, '-scans', 'SCRIPT'], { SCRIPT: script });
      expect(sofInfo(original).marker).toBe(0xc2);
      expectLossless(original, transcodeToProgressive(original));
    }
  });

  it.each([
    ['2x2,2x1,1x1', '2x2,2x1,1x1'],
    ['3x1,1x1,1x1', '3x1,1x1,1x1'],
    ['4x2,1x1,1x1', '4:1:0'],
    ['2x1,2x1,2x1', '4:4:4'], // reduced to 1x1: jpegtran keeps 2x1, so its DC scans differ
  ])('unusual sampling factors %s', (factors, name) => {
    const original = cjpeg(syntheticPixels(53, 29, 3, 23), ['-sample', factors]);
    const result = transcodeToProgressive(original);
    expect(result.sampling).toBe(name);
    expectLossless(original, result, { jpegtranEqual: factors !== '2x1,2x1,2x1' });
  });

  it('divides sampling factors by their common divisor (2x2,2x2,2x2 -> 1x1)', () => {
    const original = cjpeg(syntheticPixels(37, 23, 3, 24), ['-sample', '2x2,2x2,2x2', '-scans', 'SCRIPT'], { SCRIPT: NON_INTERLEAVED });
    expect(sofInfo(original).comps).toEqual(['1:2x2:0', '2:2x2:1', '3:2x2:1']);
    const result = transcodeToProgressive(original);
    expect(result.sampling).toBe('4:4:4');
    expect(sofInfo(firstScans(result.chunks)).comps).toEqual(['1:1x1:0', '2:1x1:1', '3:1x1:1']);
    // jpegtran -progressive itself refuses this input (12 blocks per interleaved MCU).
    expectLossless(original, result, { jpegtranEqual: false });
  });

  it('jpegtran -optimize (sequential) of the original and of ours carry the same coefficients', () => {
    for (const args of [
      ['-sample', '2x2,1x1,1x1'],
      ['-progressive', '-sample', '2x1,1x1,1x1', '-restart', '1'],
    ]) {
      const original = cjpeg(syntheticPixels(37, 23, 3, 29), args);
      const ours = firstScans(transcodeToProgressive(original).chunks);
      expect(canonicalSegments(jpegtran(ours, ['-optimize']))).toEqual(canonicalSegments(jpegtran(original, ['-optimize'])));
    }
  });

  it('is idempotent on our own encoder output and on its own output', () => {
    for (const img of [syntheticPixels(28, 28, 1, 31), syntheticPixels(37, 21, 3, 32)]) {
      const chunks = encodeProgressiveScans({ ...img }, { quality: 90 });
      const once = transcodeToProgressive(firstScans(chunks));
      expect(once.chunks).toEqual(chunks);
      expect(transcodeToProgressive(firstScans(once.chunks)).chunks).toEqual(chunks);
    }
  });
});

// ---------------------------------------------------------------- colour option

describe('colour option', () => {
  it.each(MODES.flatMap(([mode, flags]) => SIZES.map(([w, h]) => [mode, w, h, [...flags]] as const)))(
    'grayscale %s %ix%i widened to YCbCr decodes to the same gray levels',
    (_mode, w, h, args) => {
      const original = cjpeg(syntheticPixels(w, h, 1, w * 3 + h), [...args]);
      const result = transcodeToProgressive(original, { colour: 'ycbcr' });
      expect([result.colour, result.sampling, result.chunks.length]).toEqual(['ycbcr', '4:2:0', 10]);
      expect(result.converted).toMatch(/grayscale widened to YCbCr losslessly/);
      const gray = djpeg(original);
      const ours = firstScans(result.chunks);
      const rgb = djpeg(ours);
      expect(rgb.stderr).toBe('');
      expect(rgb.channels).toBe(3);
      const expected = new Uint8Array(gray.pixels.length * 3);
      gray.pixels.forEach((v, i) => expected.fill(v, 3 * i, 3 * i + 3));
      expect(same(rgb.pixels, expected), 'R = G = B = original gray').toBe(true);
      expect(same(djpeg(ours, ['-grayscale']).pixels, gray.pixels)).toBe(true);
      for (let g = 1; g < result.chunks.length; g++) expect(djpeg(firstScans(result.chunks, g)).stderr).toBe('');
    },
  );

  it("keeps the input's model when it already matches", () => {
    const colour = cjpeg(syntheticPixels(20, 20, 3, 41), []);
    expect(transcodeToProgressive(colour, { colour: 'ycbcr' }).converted).toBeUndefined();
    const gray = cjpeg(syntheticPixels(20, 20, 1, 42), []);
    const r = transcodeToProgressive(gray, { colour: 'gray' });
    expect([r.colour, r.converted]).toEqual(['gray', undefined]);
  });

  it('refuses a colour JPEG for a grayscale dataset', () => {
    const colour = cjpeg(syntheticPixels(20, 20, 3, 43), []);
    expect(() => transcodeToProgressive(colour, { colour: 'gray' })).toThrow(new TranscodeError('colour JPEG in a grayscale dataset: needs a lossy re-encode'));
  });
});

// ---------------------------------------------------------------- bad inputs

function rejection(jpeg: Uint8Array, opts?: { colour?: 'gray' | 'ycbcr' }): string {
  try {
    transcodeToProgressive(jpeg, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(TranscodeError);
    return (err as Error).message;
  }
  throw new Error('expected a TranscodeError');
}

/** Copy of `jpeg` with the byte at `at` replaced. */
function patched(jpeg: Uint8Array, at: number, value: number): Uint8Array {
  const out = jpeg.slice();
  out[at] = value;
  return out;
}

function sofAt(jpeg: Uint8Array): number {
  return segments(jpeg).find((s) => s.marker === 0xc0 || s.marker === 0xc2)!.at;
}

describe('rejections', () => {
  const base = (): Uint8Array => cjpeg(syntheticPixels(24, 16, 3, 51), []);

  it('garbage and non-JPEG input: no SOI', () => {
    for (const bytes of [
      new Uint8Array(0),
      new Uint8Array([0xff]),
      new TextEncoder().encode('hello world'),
      new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10]),
    ]) {
      expect(rejection(bytes)).toBe('not a JPEG: no SOI marker at byte 0');
    }
  });

  it('arithmetic coding (cjpeg -arithmetic)', () => {
    const img = syntheticPixels(24, 16, 3, 52);
    expect(rejection(cjpeg(img, ['-arithmetic']))).toBe('arithmetic-coded JPEG (SOF9) unsupported');
    expect(rejection(cjpeg(img, ['-arithmetic', '-progressive']))).toBe('arithmetic-coded JPEG (SOF10) unsupported');
  });

  it('12-bit precision (patched SOF precision byte)', () => {
    const jpeg = base();
    expect(rejection(patched(jpeg, sofAt(jpeg) + 4, 12))).toBe('12-bit precision JPEG unsupported (only 8-bit samples)');
  });

  it('lossless and hierarchical frames (patched SOF marker)', () => {
    const jpeg = base();
    const at = sofAt(jpeg);
    expect(rejection(patched(jpeg, at + 1, 0xc3))).toBe('lossless JPEG (SOF3) unsupported');
    expect(rejection(patched(jpeg, at + 1, 0xc5))).toBe('hierarchical JPEG (SOF5) unsupported');
    expect(rejection(patched(jpeg, at + 1, 0xc7))).toBe('hierarchical JPEG (SOF7) unsupported');
    expect(rejection(patched(jpeg, at + 1, 0xcb))).toBe('arithmetic-coded JPEG (SOF11) unsupported');
  });

  it('CMYK (4 components, Adobe APP14)', () => {
    // SOI, APP14 Adobe (transform 0), SOF0 8-bit 8x8 with 4 components, EOI.
    const adobe = [0xff, 0xee, 0x00, 0x0e, ...new TextEncoder().encode('Adobe'), 0, 100, 0, 0, 0, 0, 0];
    const sof = [0xff, 0xc0, 0x00, 20, 8, 0, 8, 0, 8, 4, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0, 4, 0x11, 0];
    expect(rejection(new Uint8Array([0xff, 0xd8, ...adobe, ...sof, 0xff, 0xd9]))).toBe('CMYK JPEG: needs a lossy re-encode');
  });

  it('RGB-coded JPEG (cjpeg -rgb)', () => {
    expect(rejection(cjpeg(syntheticPixels(24, 16, 3, 53), ['-rgb']))).toBe('RGB-coded JPEG (no YCbCr transform): needs a lossy re-encode');
  });

  it.each([
    ['baseline 4:2:0 with restarts', ['-sample', '2x2,1x1,1x1', '-restart', '1']],
    ['progressive', ['-progressive']],
  ])('truncated %s file: every cut names the byte where the data ends', (_, args) => {
    const jpeg = cjpeg(syntheticPixels(24, 16, 3, 54), args);
    for (let n = 2; n < jpeg.length; n++) {
      const message = rejection(jpeg.subarray(0, n));
      expect(message).toMatch(/^truncated JPEG: /);
      expect(message).toContain(`byte ${n}`);
    }
  });

  it('sampling that no interleaved scan can hold (4x4,1x1,1x1)', () => {
    const original = cjpeg(syntheticPixels(40, 40, 3, 59), ['-sample', '4x4,1x1,1x1', '-scans', 'SCRIPT'], { SCRIPT: NON_INTERLEAVED });
    expect(rejection(original)).toBe('sampling factors 4x4,1x1,1x1 need 18 blocks per MCU; an interleaved scan allows 10');
  });

  it('DNL (height 0 in SOF)', () => {
    const jpeg = base();
    const at = sofAt(jpeg);
    expect(rejection(patched(patched(jpeg, at + 5, 0), at + 6, 0))).toMatch(/height 0/);
  });

  it('corrupt data: every mutation either transcodes or throws TranscodeError, quickly', () => {
    let seed = 7;
    const rnd = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const inputs = [
      cjpeg(syntheticPixels(40, 24, 3, 55), ['-sample', '2x2,1x1,1x1', '-restart', '1B']),
      cjpeg(syntheticPixels(40, 24, 3, 56), ['-progressive', '-sample', '2x1,1x1,1x1']),
      cjpeg(syntheticPixels(33, 17, 1, 57), ['-progressive', '-restart', '1']),
    ];
    const outcomes = { ok: 0, rejected: 0 };
    const start = performance.now();
    for (const jpeg of inputs) {
      for (let i = 0; i < 400; i++) {
        const bad = jpeg.slice();
        const flips = 1 + Math.floor(rnd() * 4);
        for (let f = 0; f < flips; f++) bad[Math.floor(rnd() * bad.length)] = Math.floor(rnd() * 256);
        try {
          transcodeToProgressive(bad);
          outcomes.ok++;
        } catch (err) {
          if (!(err instanceof TranscodeError)) throw err;
          outcomes.rejected++;
        }
      }
    }
    expect(outcomes.ok + outcomes.rejected).toBe(1200);
    expect(outcomes.rejected).toBeGreaterThan(0);
    expect(performance.now() - start).toBeLessThan(20_000);
  });

  it('a bad Huffman code, a wrong RST marker and an undefined table', () => {
    const jpeg = cjpeg(syntheticPixels(24, 16, 1, 58), ['-restart', '1B']);
    const segs = segments(jpeg);
    const rst = segs.find((s) => s.marker >= 0xd0 && s.marker <= 0xd7)!;
    expect(rejection(patched(jpeg, rst.at + 1, rst.marker === 0xd7 ? 0xd0 : rst.marker + 1))).toMatch(/^corrupt JPEG: expected RST0 at byte \d+/);
    const dht = segs.find((s) => s.marker === 0xc4)!;
    expect(rejection(patched(jpeg, dht.at + 4, 0x03))).toMatch(/Huffman table (DC|AC)0 used by scan 1 .* is not defined/);
    // All-ones bytes in the entropy data: no valid code (libjpeg tables never use the all-1 code).
    const ecs = segs.find((s) => s.marker === 0)!;
    const bad = jpeg.slice();
    for (let i = 0; i < 6; i += 2) {
      bad[ecs.at + i] = 0xff;
      bad[ecs.at + i + 1] = 0x00;
    }
    expect(rejection(bad)).toMatch(/^corrupt JPEG: /);
  });
});
