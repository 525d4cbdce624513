// Reads a folder with one subfolder of JPEG or PNG files per class and turns
// every file into the dataset's progressive scans. JPEGs are transcoded
// losslessly (no re-quantising) and keep their size; what cannot be transcoded
// is re-encoded, and what cannot be read is left out, each with its reason.
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { decode as decodePng } from 'fast-png';
import { encodeProgressiveScans, type RawImage } from '../../jpeg/encoder.js';
import { jpegFrameInfo } from '../../jpeg/markers.js';
import { transcodeToProgressive, TranscodeError } from '../../jpeg/transcode.js';
import { loadTurboJpegNode } from '../../jpeg/turbo-node.js';
import type { LabeledScans } from '../../pcr/build.js';
import { toChannels } from '../../pcr/pixels.js';

export interface FolderDataset {
  classes: string[];
  /** The colour mode chosen for the whole dataset. */
  channels: 1 | 3;
  train: LabeledScans[];
  test: LabeledScans[];
  /** Files changed on the way in (widened, re-encoded), with what was done. */
  converted: { file: string; what: string }[];
  /** Files left out, with the reason. */
  skipped: { file: string; reason: string }[];
}

export interface FolderOptions {
  /** 1, 3, or 'auto': colour if any input is colour. */
  channels: 1 | 3 | 'auto';
  /** JPEG quality for inputs that must be encoded (PNG) or re-encoded (CMYK, RGB-coded JPEG). */
  quality: number;
  testFraction: number;
  /** At most this many files per class. */
  limit?: number;
}

const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png']);
const isJpeg = (file: string) => extname(file).toLowerCase() !== '.png';

/** A stable pseudo-random split: the same file always lands in the same split. */
function isTestFile(name: string, testFraction: number): boolean {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return (h >>> 0) / 2 ** 32 < testFraction;
}

async function listFiles(root: string, limit: number): Promise<{ classes: string[]; files: { path: string; name: string; label: number }[] }> {
  const classes = (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  if (classes.length === 0) throw new Error(`${root}: no class subfolders found`);
  const files = [];
  for (const [label, cls] of classes.entries()) {
    const names = (await readdir(join(root, cls))).filter((f) => IMAGE_EXTENSIONS.has(extname(f).toLowerCase())).sort();
    for (const f of names.slice(0, limit)) files.push({ path: join(root, cls, f), name: `${cls}/${f}`, label });
  }
  return { classes, files };
}

/** Colour if any readable input is colour (PNG colour types and JPEG component counts are read from headers). */
async function chooseChannels(paths: string[]): Promise<1 | 3> {
  for (const path of paths) {
    const bytes = new Uint8Array(await readFile(path));
    if (isJpeg(path)) {
      const frame = jpegFrameInfo(bytes);
      if (frame && frame.components >= 3) return 3;
    } else if (bytes.length > 25 && (bytes[25]! & 2) !== 0) {
      return 3; // PNG IHDR colour type with the colour bit
    }
  }
  return 1;
}

export async function readFolder(root: string, opts: FolderOptions): Promise<FolderDataset> {
  const turbo = await loadTurboJpegNode();
  const { classes, files } = await listFiles(root, opts.limit ?? Infinity);
  const channels = opts.channels === 'auto' ? await chooseChannels(files.map((f) => f.path)) : opts.channels;
  const colour = channels === 3 ? 'ycbcr' : 'gray';
  const out: FolderDataset = { classes, channels, train: [], test: [], converted: [], skipped: [] };
  const encode = (image: RawImage) => encodeProgressiveScans(toChannels(image, channels), { quality: opts.quality });

  for (const file of files) {
    const bytes = new Uint8Array(await readFile(file.path));
    let scans: Uint8Array[];
    try {
      if (!isJpeg(file.path)) {
        scans = encode(pngToRaw(bytes));
      } else {
        try {
          const t = transcodeToProgressive(bytes, { colour });
          scans = t.chunks;
          if (t.converted) out.converted.push({ file: file.path, what: t.converted });
        } catch (err) {
          // CMYK, RGB-coded or colour-in-a-gray-dataset JPEGs can still be decoded and re-encoded.
          if (!(err instanceof TranscodeError) || !/lossy re-encode/.test(err.message)) throw err;
          scans = encode(turbo.decode(bytes, 3));
          out.converted.push({ file: file.path, what: `re-encoded at quality ${opts.quality} (lossy): ${err.message}` });
        }
      }
    } catch (err) {
      out.skipped.push({ file: file.path, reason: (err as Error).message });
      continue;
    }
    (isTestFile(file.name, opts.testFraction) ? out.test : out.train).push({ scans, label: file.label });
  }
  return out;
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
