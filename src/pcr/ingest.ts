// Turns one image file (JPEG or PNG bytes) into the dataset's progressive scans.
// Shared by the CLI's folder build and the lab's in-browser build, so both treat
// a mixed collection the same way: JPEGs are transcoded losslessly and keep their
// size, gray is widened into a colour dataset, what only a lossy re-encode can
// fit (CMYK, RGB-coded, colour into gray) is re-encoded and said so, and what
// cannot be read throws with the reason.
import { hash32 } from '../shared/random.js';
import { decode as decodePng } from 'fast-png';
import { encodeProgressiveScans, type RawImage } from '../jpeg/encoder.js';
import { jpegFrameInfo } from '../jpeg/markers.js';
import { transcodeToProgressive, TranscodeError } from '../jpeg/transcode.js';
import type { TurboJpeg } from '../jpeg/turbo.js';
import { toChannels } from './pixels.js';

export interface IngestOptions {
  channels: 1 | 3;
  /** JPEG quality for what must be encoded (PNG) or re-encoded. */
  quality: number;
  /** Decodes JPEGs that must be re-encoded. */
  turbo: TurboJpeg;
}

export interface Ingested {
  scans: Uint8Array[];
  /** What was changed on the way in, if anything. */
  converted?: string;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** PNG or not by its first 8 bytes, not its name: a JPEG saved as .png (or the other way) is read as what it is. */
const isPng = (bytes: Uint8Array) => PNG_SIGNATURE.every((b, i) => bytes[i] === b);
export const isImageFile = (name: string) => /\.(jpe?g|png)$/i.test(name);

/** Whether a file is colour, from its header alone (JPEG component count, PNG colour type). */
export function isColourFile(bytes: Uint8Array): boolean {
  if (isPng(bytes)) return bytes.length > 25 && (bytes[25]! & 2) !== 0;
  return (jpegFrameInfo(bytes)?.components ?? 1) >= 3;
}

export function ingestImage(bytes: Uint8Array, opts: IngestOptions): Ingested {
  const encode = (image: RawImage) => encodeProgressiveScans(toChannels(image, opts.channels), { quality: opts.quality });
  // Said as what it is: an empty .png was "not a JPEG: no SOI marker at byte 0".
  if (bytes.length === 0) throw new Error('the file is empty');
  if (isPng(bytes)) return { scans: encode(pngToRaw(bytes)) };
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) {
    const head = [...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    throw new Error(`neither a PNG nor a JPEG: it starts ${head}, not a PNG signature or a JPEG SOI marker`);
  }
  try {
    const t = transcodeToProgressive(bytes, { colour: opts.channels === 3 ? 'ycbcr' : 'gray' });
    return { scans: t.chunks, ...(t.converted ? { converted: t.converted } : {}) };
  } catch (err) {
    if (!(err instanceof TranscodeError) || !/lossy re-encode/.test(err.message)) throw err;
    return { scans: encode(opts.turbo.decode(bytes, 3)), converted: `re-encoded at quality ${opts.quality} (lossy): ${err.message}` };
  }
}

function pngToRaw(bytes: Uint8Array): RawImage {
  const png = decodePng(bytes);
  if (png.depth !== 8) throw new Error(`PNG bit depth ${png.depth} is not supported (8 only)`);
  if (png.palette) throw new Error('palette PNGs are not supported');
  const n = png.width * png.height;
  const src = png.data as Uint8Array;
  const ch = png.channels; // 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA: alpha is dropped
  const channels: 1 | 3 = ch <= 2 ? 1 : 3;
  const data = new Uint8Array(n * channels);
  for (let i = 0; i < n; i++) for (let k = 0; k < channels; k++) data[i * channels + k] = src[i * ch + k]!;
  return { width: png.width, height: png.height, channels, data };
}

/**
 * A file's place in [0, 1) for the split, from its name: FNV-1a and then murmur3's finaliser (hash32). FNV-1a alone gave names
 * that differ in a digit (circles-0.png .. circles-11.png) near-equal places, so a small folder's files fell in one split.
 */
export function splitPoint(name: string): number {
  return hash32(name) / 2 ** 32;
}

/** A class of this many files has one in the test split: one to train on and one to test (a class of one is trained on). */
export const CLASS_SIZE_FOR_TEST = 2;

/**
 * Which files go to the test split (true), a stable pseudo-random one: each whose splitPoint is below testFraction, and
 * in each class of CLASS_SIZE_FOR_TEST files or more at least one (the lowest point) and at most all but one (the highest
 * is trained on), so a small folder still shows accuracy on every class. A file's split depends on its name and the names
 * of its class, never on the order files come in. A testFraction of 0 puts none in the test split.
 */
export function testSplit(files: readonly { name: string; cls: string | number }[], testFraction: number): boolean[] {
  const points = files.map((f) => splitPoint(f.name));
  const test = points.map((p) => p < testFraction);
  if (testFraction <= 0) return test;
  const byClass = new Map<string | number, number[]>();
  for (const [i, f] of files.entries()) {
    const members = byClass.get(f.cls) ?? [];
    members.push(i);
    byClass.set(f.cls, members);
  }
  // Lowest point first; two names with the same point are ordered by name, not by where they came.
  const order = (a: number, b: number) => points[a]! - points[b]! || (files[a]!.name < files[b]!.name ? -1 : files[a]!.name > files[b]!.name ? 1 : 0);
  for (const members of byClass.values()) {
    members.sort(order);
    if (members.length >= CLASS_SIZE_FOR_TEST) test[members[0]!] = true;
    test[members.at(-1)!] = false;
  }
  return test;
}
