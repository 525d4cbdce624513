// The JSON manifest of a PCR dataset: which records exist and where each
// scan group ends inside them. Spec: docs/pcr.md.
import { ManifestError } from '../shared/errors.js';

/** The sides a model input may have: the lab's size= parameter, its build field and the dataset build check the same. */
export const MODEL_INPUT_SIDE = { min: 8, max: 1024 } as const;

export const MANIFEST_FORMAT = 'bytelab-pcr';
export const MANIFEST_VERSION = 1;

export interface ImageShape {
  width: number;
  height: number;
  /** 1 = grayscale, 3 = YCbCr colour (decoded to RGB). */
  channels: 1 | 3;
}

export interface RecordEntry {
  /** File name, relative to the manifest. */
  file: string;
  images: number;
  /**
   * groupEnds[0] is the end of the metadata block; groupEnds[g] is the byte
   * offset at which scan group g ends. Reading groupEnds[g] bytes from the start
   * of the file gives every image of the record at fidelity g.
   */
  groupEnds: number[];
}

export interface SplitEntry {
  records: RecordEntry[];
}

export interface PcrManifest {
  format: typeof MANIFEST_FORMAT;
  version: typeof MANIFEST_VERSION;
  name: string;
  description?: string;
  attribution?: string;
  classes: string[];
  /** The size examples have when they reach a model. */
  image: ImageShape;
  /**
   * True when records keep each image at its own size (lossless transcoding of a
   * JPEG collection): readers scale every decoded image to `image`.
   */
  variableSize?: boolean;
  scanGroups: number;
  /** JPEG quality the images were encoded at. */
  quality: number;
  splits: Record<string, SplitEntry>;
  /** Mean MS-SSIM of each scan group against the full decode (index 0 = group 1), measured at build time. */
  msssim?: number[];
}

/** Checks the shape of a parsed manifest; throws a ManifestError naming the first bad field. */
export function validateManifest(json: unknown, where = 'manifest'): PcrManifest {
  const fail = (what: string): never => {
    throw new ManifestError(`${where}: ${what}`);
  };
  if (typeof json !== 'object' || json === null) fail('not a JSON object');
  const m = json as Partial<PcrManifest>;
  if (m.format !== MANIFEST_FORMAT) fail(`format is ${JSON.stringify(m.format)}, expected "${MANIFEST_FORMAT}"`);
  if (m.version !== MANIFEST_VERSION) fail(`unsupported version ${String(m.version)}`);
  if (!Array.isArray(m.classes) || m.classes.length === 0) fail('classes must be a non-empty array');
  const img = m.image;
  if (!img || !(img.width > 0) || !(img.height > 0) || (img.channels !== 1 && img.channels !== 3)) {
    fail('image must give width, height and channels (1 or 3)');
  }
  if (!Number.isInteger(m.scanGroups) || m.scanGroups! < 1) fail('scanGroups must be a positive integer');
  if (m.msssim !== undefined && (!Array.isArray(m.msssim) || m.msssim.length !== m.scanGroups || !m.msssim.every((x) => typeof x === 'number'))) {
    fail('msssim must list one number per scan group');
  }
  if (m.variableSize !== undefined && typeof m.variableSize !== 'boolean') fail('variableSize must be true or false');
  if (!m.splits || typeof m.splits !== 'object') fail('splits missing');
  for (const [split, entry] of Object.entries(m.splits!)) {
    if (!Array.isArray(entry.records)) fail(`split ${split}: records must be an array`);
    entry.records.forEach((r, i) => {
      const at = `split ${split}, record ${i} (${r.file})`;
      if (typeof r.file !== 'string' || r.file.includes('..')) fail(`${at}: bad file name`);
      if (!Number.isInteger(r.images) || r.images < 1) fail(`${at}: images must be a positive integer`);
      if (!Array.isArray(r.groupEnds) || r.groupEnds.length !== m.scanGroups! + 1) {
        fail(`${at}: groupEnds must have scanGroups + 1 = ${m.scanGroups! + 1} entries`);
      }
      for (let g = 1; g < r.groupEnds.length; g++) {
        if (!(r.groupEnds[g]! >= r.groupEnds[g - 1]!)) fail(`${at}: groupEnds must not decrease (group ${g})`);
      }
    });
  }
  return m as PcrManifest;
}

/** Total bytes a reader fetches for one split at scan group g. */
export function bytesForGroup(m: PcrManifest, split: string, group: number): number {
  return (m.splits[split]?.records ?? []).reduce((sum, r) => sum + r.groupEnds[group]!, 0);
}

export function imageCount(m: PcrManifest, split: string): number {
  return (m.splits[split]?.records ?? []).reduce((sum, r) => sum + r.images, 0);
}
