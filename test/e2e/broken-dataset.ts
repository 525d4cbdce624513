// Writes test datasets under public/__fixtures__/ (git-ignored), before the dev
// server starts (playwright.config.ts) so the server knows the files: a damaged
// copy of the bundled dataset (one record cut short, one image with a corrupt
// scan, one record missing) and the bundled dataset in the PCR reference format.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const BROKEN_DIR = 'public/__fixtures__/broken';
const SOURCE = 'public/datasets/fashion-mnist-mini';

function writeBrokenDataset(): void {
  rmSync(BROKEN_DIR, { recursive: true, force: true });
  mkdirSync(BROKEN_DIR, { recursive: true });
  cpSync(SOURCE, BROKEN_DIR, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(SOURCE, 'manifest.json'), 'utf8'));
  const records = manifest.splits.train.records as { file: string; images: number; groupEnds: number[] }[];
  // Keep 6 records so the damaged ones come round quickly.
  manifest.splits.train.records = records.slice(0, 6);
  writeFileSync(join(BROKEN_DIR, 'manifest.json'), JSON.stringify(manifest));

  // train-00001: cut in the middle of scan group 3.
  const cut = records[1]!;
  const bytes1 = readFileSync(join(SOURCE, cut.file));
  writeFileSync(join(BROKEN_DIR, cut.file), bytes1.subarray(0, Math.floor((cut.groupEnds[2]! + cut.groupEnds[3]!) / 2)));

  // train-00002: image 5's group-2 chunk overwritten with 0xFF (invalid entropy data).
  const bad = records[2]!;
  const bytes2 = Buffer.from(readFileSync(join(SOURCE, bad.file)));
  const lengthsAt = 16 + 2 * bad.images;
  let at = bad.groupEnds[1]!;
  for (let i = 0; i < 5; i++) at += bytes2.readUInt32LE(lengthsAt + 4 * (bad.images + i));
  const len = bytes2.readUInt32LE(lengthsAt + 4 * (bad.images + 5));
  bytes2.fill(0xff, at + 4, at + len);
  writeFileSync(join(BROKEN_DIR, bad.file), bytes2);

  // train-00003: missing.
  rmSync(join(BROKEN_DIR, records[3]!.file));
}

/** The bundled dataset in the PCR reference implementation's format, for the lab to read directly. */
function writeReferenceExport(): void {
  rmSync('public/__fixtures__/reference', { recursive: true, force: true });
  execFileSync('node', ['bin/bytelab.mjs', 'pcr', 'export', SOURCE, '--format', 'reference', '--out', 'public/__fixtures__/reference'], { stdio: 'ignore' });
}

writeBrokenDataset();
writeReferenceExport();
