// Reads a folder with one subfolder of JPEG or PNG files per class.
import { readdir, readFile } from 'node:fs/promises';
import { join, extname } from 'node:path';
import { decode as decodePng } from 'fast-png';
import type { RawImage } from '../../jpeg/encoder.js';
import { loadTurboJpegNode } from '../../jpeg/turbo-node.js';
import type { LabeledImage } from '../../pcr/build.js';
import { resize, toChannels } from '../../pcr/pixels.js';

export interface FolderDataset {
  classes: string[];
  train: LabeledImage[];
  test: LabeledImage[];
  /** Files that could not be read, with the reason. */
  skipped: { file: string; reason: string }[];
}

const IMAGE_EXTENSIONS = new Set(['.jpg', '.jpeg', '.png']);

/** A stable pseudo-random split: the same file always lands in the same split. */
function isTestFile(name: string, testFraction: number): boolean {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  return (h >>> 0) / 2 ** 32 < testFraction;
}

export async function readFolder(root: string, opts: { width: number; height: number; channels: 1 | 3; testFraction: number; limit?: number }): Promise<FolderDataset> {
  const turbo = await loadTurboJpegNode();
  const classes = (await readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  if (classes.length === 0) throw new Error(`${root}: no class subfolders found`);
  const out: FolderDataset = { classes, train: [], test: [], skipped: [] };
  for (const [label, cls] of classes.entries()) {
    const files = (await readdir(join(root, cls))).filter((f) => IMAGE_EXTENSIONS.has(extname(f).toLowerCase())).sort();
    for (const file of files.slice(0, opts.limit ?? Infinity)) {
      const path = join(root, cls, file);
      let image: RawImage;
      try {
        const bytes = new Uint8Array(await readFile(path));
        image = extname(file).toLowerCase() === '.png' ? pngToRaw(bytes) : turbo.decode(bytes, 3);
      } catch (err) {
        out.skipped.push({ file: path, reason: (err as Error).message });
        continue;
      }
      const fitted = resize(toChannels(image, opts.channels), opts.width, opts.height);
      (isTestFile(`${cls}/${file}`, opts.testFraction) ? out.test : out.train).push({ image: fitted, label });
    }
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
