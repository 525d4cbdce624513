// Lossless transcoding of existing JPEG files to the dataset's fixed
// progressive scan script (encoder.ts), as `jpegtran -progressive` does: the
// quantised DCT coefficients, quantisation tables and sampling factors are
// kept, only the entropy coding changes, so a decoder produces the very same
// pixels. Metadata (APPn: EXIF, ICC, Adobe; COM) and restart markers are
// dropped. Pure TypeScript: no DOM, no Node APIs.

import { decodeCoefficients } from './decode-coefficients.js';
import type { CoefImage } from './decode-coefficients.js';
import { encodeFrame } from './encframe.js';
import type { Frame, FrameComponent } from './encframe.js';
import { scanScript } from './encoder.js';
import { componentGrid } from './layout.js';
import { TranscodeError } from './transcode-error.js';

export { TranscodeError };

export interface TranscodeOptions {
  /**
   * The dataset's colour model. 'ycbcr' widens a grayscale input with neutral
   * chroma (lossless); 'gray' refuses colour inputs (that would be lossy).
   * Default: keep the input's model.
   */
  colour?: 'gray' | 'ycbcr';
}

export interface TranscodeResult {
  /** one chunk per scan (6 gray, 10 YCbCr); chunks[0] carries SOI..SOF2; no EOI */
  chunks: Uint8Array[];
  width: number;
  height: number;
  colour: 'gray' | 'ycbcr';
  /** chroma subsampling of the output, e.g. '4:2:0'; '4:0:0' for grayscale */
  sampling: string;
  /** what was changed beyond the entropy coding, if anything */
  converted?: string;
}

/** Re-encodes a baseline or progressive Huffman JPEG as the dataset's fixed progressive script, without re-quantising. */
export function transcodeToProgressive(jpeg: Uint8Array, opts: TranscodeOptions = {}): TranscodeResult {
  const img = decodeCoefficients(jpeg);
  const colourInput = img.components.length === 3;
  if (colourInput && codedAsRgb(img)) throw new TranscodeError('RGB-coded JPEG (no YCbCr transform): needs a lossy re-encode');
  if (colourInput && opts.colour === 'gray') throw new TranscodeError('colour JPEG in a grayscale dataset: needs a lossy re-encode');

  const widen = !colourInput && opts.colour === 'ycbcr';
  const frame = widen ? widenedFrame(img) : frameOf(img);
  let chunks: Uint8Array[];
  try {
    chunks = encodeFrame(frame, scanScript(frame.components.length === 1 ? 1 : 3));
  } catch (err) {
    // The entropy coder refuses coefficients outside the 8-bit ranges (T.81 F.1.2): corrupt input.
    if (err instanceof RangeError) throw new TranscodeError(`corrupt JPEG: ${err.message}`);
    throw err;
  }
  const result: TranscodeResult = {
    chunks,
    width: img.width,
    height: img.height,
    colour: frame.components.length === 1 ? 'gray' : 'ycbcr',
    sampling: samplingName(frame.components),
  };
  if (widen) result.converted = 'grayscale widened to YCbCr losslessly (all-zero Cb and Cr, 4:2:0)';
  return result;
}

/**
 * How libjpeg interprets 3 components (jdapimin.c default_decompress_parms):
 * JFIF means YCbCr; else an Adobe APP14 transform flag of 0 means RGB; else
 * component ids 'R', 'G', 'B' mean RGB. Our output carries JFIF, so an RGB
 * input would change colour.
 */
function codedAsRgb(img: CoefImage): boolean {
  if (img.jfif) return false;
  if (img.adobeTransform >= 0) return img.adobeTransform === 0;
  const ids = img.components.map((c) => c.id);
  return ids[0] === 0x52 && ids[1] === 0x47 && ids[2] === 0x42;
}

/**
 * The input's components as they are, except that sampling factors are
 * divided by their common divisor (2x2,2x2,2x2 is 4:4:4; a grayscale
 * component is 1x1): the block grids stay the same (T.81 A.1.1 depends only
 * on Hi/Hmax), and the interleaved DC scans of the script get the smallest MCU.
 */
function frameOf(img: CoefImage): Frame {
  const quantTables: Uint16Array[] = [];
  const gh = img.components.reduce((g, c) => gcd(g, c.h), 0);
  const gv = img.components.reduce((g, c) => gcd(g, c.v), 0);
  const blocksPerMcu = img.components.reduce((n, c) => n + (c.h / gh) * (c.v / gv), 0);
  if (img.components.length > 1 && blocksPerMcu > 10) {
    // Possible in a file whose scans are all non-interleaved; our DC scans are interleaved (B.2.3: at most 10).
    throw new TranscodeError(
      `sampling factors ${img.components.map((c) => `${c.h}x${c.v}`).join(',')} need ${blocksPerMcu} blocks per MCU; an interleaved scan allows 10`,
    );
  }
  const components = img.components.map(
    (c, i): FrameComponent => ({
      id: c.id,
      h: c.h / gh,
      v: c.v / gv,
      quantTable: quantIndex(quantTables, c.quant),
      huffTable: i === 0 ? 0 : 1, // luma and chroma tables, as libjpeg assigns them
      coefs: c.coefs,
    }),
  );
  return { width: img.width, height: img.height, quantTables, components };
}

/**
 * Grayscale as YCbCr: Y keeps its coefficients; Cb and Cr are all zero, which
 * decodes to the neutral value 128 whatever their quantisation table (they
 * share Y's). Y is sampled 2x2 so the constant chroma costs a quarter of the
 * blocks; the Y block grid does not change (T.81 A.1.1 with Hmax = Hy).
 */
function widenedFrame(img: CoefImage): Frame {
  const y = img.components[0]!;
  const { bw, bh } = componentGrid(img.width, img.height, { h: 1, v: 1 }, 2, 2);
  const chroma = (id: number): FrameComponent => ({ id, h: 1, v: 1, quantTable: 0, huffTable: 1, coefs: new Int16Array(bw * bh * 64) });
  return {
    width: img.width,
    height: img.height,
    quantTables: [y.quant],
    components: [{ id: 1, h: 2, v: 2, quantTable: 0, huffTable: 0, coefs: y.coefs }, chroma(2), chroma(3)],
  };
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

function quantIndex(tables: Uint16Array[], q: Uint16Array): number {
  const i = tables.findIndex((t) => t.every((v, k) => v === q[k]));
  if (i >= 0) return i;
  tables.push(q);
  return tables.length - 1;
}

const SUBSAMPLING_NAMES: Record<string, string> = { '1x1': '4:4:4', '2x1': '4:2:2', '2x2': '4:2:0', '1x2': '4:4:0', '4x1': '4:1:1', '4x2': '4:1:0' };

/** J:a:b name of the luma/chroma sampling ratio, or the raw factors ('2x2,1x2,1x1') when it has none. */
function samplingName(comps: readonly FrameComponent[]): string {
  if (comps.length === 1) return '4:0:0';
  const [y, cb, cr] = comps.map((c) => ({ h: c.h ?? 1, v: c.v ?? 1 })) as [{ h: number; v: number }, { h: number; v: number }, { h: number; v: number }];
  if (cb.h === cr.h && cb.v === cr.v && y.h % cb.h === 0 && y.v % cb.v === 0) {
    const name = SUBSAMPLING_NAMES[`${y.h / cb.h}x${y.v / cb.v}`];
    if (name) return name;
  }
  return [y, cb, cr].map((c) => `${c.h}x${c.v}`).join(',');
}
