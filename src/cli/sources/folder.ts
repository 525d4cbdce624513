// Reads a folder with one subfolder of JPEG or PNG files per class and turns
// every file into the dataset's progressive scans (rules in src/pcr/ingest.ts).
import { readdir, readFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { loadTurboJpegNode } from '../../jpeg/turbo-node.js';
import type { LabeledScans } from '../../pcr/build.js';
import { ingestImage, isColourFile, isImageFile, testSplit } from '../../pcr/ingest.js';

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
  /** JPEG quality for inputs that must be encoded (PNG) or re-encoded. */
  quality: number;
  testFraction: number;
  /** At most this many files per class. */
  limit?: number;
}

export async function readFolder(root: string, opts: FolderOptions): Promise<FolderDataset> {
  const classes = (await readdir(root, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  if (classes.length === 0) throw new Error(`${root}: no class subfolders found`);
  const files: { path: string; name: string; label: number; bytes: Uint8Array }[] = [];
  for (const [label, cls] of classes.entries()) {
    // Images at any depth under the class folder are the class's (as torchvision's ImageFolder reads them, and the lab's build).
    const names = (await readdir(join(root, cls), { recursive: true }))
      .filter(isImageFile)
      .sort()
      .slice(0, opts.limit ?? Infinity);
    // Named with "/" whatever the system's separator, as the browser's build names it: the same folder splits alike in both.
    for (const f of names) {
      const bytes = new Uint8Array(await readFile(join(root, cls, f)));
      files.push({ path: join(root, cls, f), name: `${cls}/${f.split(sep).join('/')}`, label, bytes });
    }
  }
  const channels = opts.channels === 'auto' ? (files.some((f) => isColourFile(f.bytes)) ? 3 : 1) : opts.channels;
  const turbo = await loadTurboJpegNode();
  const out: FolderDataset = { classes, channels, train: [], test: [], converted: [], skipped: [] };
  const read: { name: string; cls: number; image: LabeledScans }[] = [];
  for (const file of files) {
    try {
      const { scans, converted } = ingestImage(file.bytes, { channels, quality: opts.quality, turbo });
      if (converted) out.converted.push({ file: file.path, what: converted });
      read.push({ name: file.name, cls: file.label, image: { scans, label: file.label } });
    } catch (err) {
      out.skipped.push({ file: file.path, reason: (err as Error).message });
    }
  }
  // Split once all are read: a class's share of the test split counts only the files that could be read.
  const test = testSplit(read, opts.testFraction);
  for (const [i, r] of read.entries()) (test[i] ? out.test : out.train).push(r.image);
  return out;
}
