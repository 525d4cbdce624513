// Progressive JPEG encoder for Progressive Compressed Records.
//
// Every image is encoded with the same fixed scan script (libjpeg's
// jpeg_simple_progression), so "the first g scans" means the same fidelity
// level for every record in a dataset. Pure TypeScript: no DOM, no Node APIs.
//
// Module map: dct.ts (colour conversion, DCT, quantisation), huffman.ts
// (symbol stream, optimal tables, bit writer), encscan.ts (progressive scan
// models), encframe.ts (marker segments, per-scan chunking), layout.ts (block
// and MCU geometry), this file (API and scan script). transcode.ts writes
// existing JPEGs' coefficients with the same script (decode-coefficients.ts
// reads them).

import { encodeFrame, frameFromImage } from './encframe.js';
import type { ScanSpec } from './encframe.js';

/** Interleaved 8-bit samples, row-major; channels 3 = RGB. */
export interface RawImage {
  width: number;
  height: number;
  channels: 1 | 3;
  data: Uint8Array;
}

export interface EncodeOptions {
  /** 1..100, libjpeg-style scaling of the Annex K tables; default 90 */
  quality?: number;
}

const scan = (comps: number[], ss: number, se: number, ah: number, al: number): ScanSpec => ({ comps, ss, se, ah, al });

/**
 * libjpeg jcparam.c jpeg_simple_progression, single-component branch:
 *   1. DC            Al=1
 *   2. AC 1-5        Al=2
 *   3. AC 6-63       Al=2
 *   4. AC 1-63  Ah=2 Al=1
 *   5. DC       Ah=1 Al=0
 *   6. AC 1-63  Ah=1 Al=0
 */
const GRAY_SCRIPT: readonly ScanSpec[] = [
  scan([0], 0, 0, 0, 1),
  scan([0], 1, 5, 0, 2),
  scan([0], 6, 63, 0, 2),
  scan([0], 1, 63, 2, 1),
  scan([0], 0, 0, 1, 0),
  scan([0], 1, 63, 1, 0),
];

/**
 * libjpeg jcparam.c jpeg_simple_progression, YCbCr branch
 * (components: 0 = Y, 1 = Cb, 2 = Cr):
 *   1. DC Y,Cb,Cr (interleaved)  Al=1
 *   2. Y  AC 1-5                 Al=2   luma detail out early
 *   3. Cr AC 1-63                Al=1   chroma is small: few scans
 *   4. Cb AC 1-63                Al=1
 *   5. Y  AC 6-63                Al=2
 *   6. Y  AC 1-63           Ah=2 Al=1
 *   7. DC Y,Cb,Cr           Ah=1 Al=0
 *   8. Cr AC 1-63           Ah=1 Al=0
 *   9. Cb AC 1-63           Ah=1 Al=0
 *  10. Y  AC 1-63           Ah=1 Al=0   usually the largest scan, so last
 */
const COLOR_SCRIPT: readonly ScanSpec[] = [
  scan([0, 1, 2], 0, 0, 0, 1),
  scan([0], 1, 5, 0, 2),
  scan([2], 1, 63, 0, 1),
  scan([1], 1, 63, 0, 1),
  scan([0], 6, 63, 0, 2),
  scan([0], 1, 63, 2, 1),
  scan([0, 1, 2], 0, 0, 1, 0),
  scan([2], 1, 63, 1, 0),
  scan([1], 1, 63, 1, 0),
  scan([0], 1, 63, 1, 0),
];

/** The dataset's fixed scan script for 1 (gray) or 3 (YCbCr) components; transcode.ts reuses it. */
export function scanScript(channels: 1 | 3): readonly ScanSpec[] {
  return channels === 1 ? GRAY_SCRIPT : COLOR_SCRIPT;
}

/** Number of scans (= chunks) per image: 6 for grayscale, 10 for colour. */
export function scanCount(channels: 1 | 3): number {
  return scanScript(channels).length;
}

/**
 * Progressive JPEG, libjpeg simple progression; returns one chunk per scan, EOI not included.
 *  chunks[0] = SOI + APP0(JFIF) + DQT + SOF2 + DHT(for scan 1) + SOS + entropy-coded data of scan 1;
 *  chunks[k] = DHT(s needed by that scan) + SOS + entropy-coded data of scan k+1.
 *  concat(chunks[0..g)) + FF D9 is a valid JPEG for every g >= 1.
 * Colour images are stored as YCbCr 4:4:4 (no chroma subsampling).
 */
export function encodeProgressiveScans(img: RawImage, opts?: EncodeOptions): Uint8Array[] {
  const { width, height, channels, data } = img;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width > 65535 || height > 65535) {
    throw new RangeError(`invalid JPEG size ${width}x${height}`);
  }
  if (channels !== 1 && channels !== 3) throw new RangeError(`unsupported channel count ${String(channels)}`);
  if (data.length < width * height * channels) {
    throw new RangeError(`pixel data too short: ${data.length} < ${width * height * channels}`);
  }
  const quality = opts?.quality ?? 90;
  if (!(quality >= 1 && quality <= 100)) throw new RangeError(`quality must be in 1..100, got ${quality}`);

  return encodeFrame(frameFromImage(img, quality), scanScript(channels));
}
