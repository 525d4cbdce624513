// `bytelab pcr export DIR --format reference --out DIR2` and
// `bytelab pcr import DIR2 --format reference ... --out DIR`: conversion between
// bytelab's PCR format and the PCR reference implementation's (docs/pcr.md,
// "The reference format"). Export is exact: our chunks are the reference's
// chunks. Import transcodes every image losslessly to our fixed scan script.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { jpegFrameInfo } from '../jpeg/markers.js';
import { transcodeToProgressive } from '../jpeg/transcode.js';
import { assertModelInputSize, buildSplit, DEFAULT_BUILD, makeManifest, type LabeledScans } from '../pcr/build.js';
import { imageCount, validateManifest, type PcrManifest } from '../pcr/manifest.js';
import { RecordError, RecordPrefix } from '../pcr/record.js';
import {
  parseReferenceIndex,
  readReferenceRecordPrefix,
  REFERENCE_INDEX_FILE,
  referencePrefixLength,
  writeReferenceIndex,
  writeReferenceRecord,
  type ReferenceIndexEntry,
} from '../pcr/reference.js';
import { fidelityOnDisk } from './fidelity.js';
import { positiveIntFlag } from './flags.js';

const FORMATS = ['reference'];

function checkFormat(format: string | undefined, verb: string): void {
  if (format === undefined) throw new Error(`${verb} needs --format reference (the PCR reference implementation's PCR_<k>.pcr + PCR_index.pb)`);
  if (!FORMATS.includes(format)) throw new Error(`--format ${format}: unknown format (${FORMATS.join(', ')})`);
}

/** Splits in the order a reader expects: train, test, then the rest by name. */
function splitOrder(names: string[]): string[] {
  const rank = (s: string) => (s === 'train' ? 0 : s === 'test' ? 1 : 2);
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

// ---------------------------------------------------------------------------
// Export

/** Reference file name of the k-th record, as the reference converter names them. */
const referenceRecordName = (k: number) => `PCR_${k}.pcr`;

/**
 * One of our records as a reference record: the same labels and the very same
 * chunks (ours are cut where the reference cuts: chunk 1 = SOI..scan 1, then
 * DHT + SOS + data per scan, no EOI). Throws a RecordError for a bad or truncated record.
 */
function recordToReference(bytes: Uint8Array, file: string): { bytes: Uint8Array; offsets: number[] } {
  const prefix = new RecordPrefix(bytes, file);
  const { images, groups, labels } = prefix.header;
  if (prefix.completeGroups < groups) {
    throw new RecordError(
      file,
      bytes.byteLength,
      `truncated: scan group ${prefix.completeGroups + 1} ends at byte ${prefix.header.groupEnds[prefix.completeGroups + 1]}`,
    );
  }
  const scans = Array.from({ length: images }, (_, i) => Array.from({ length: groups }, (_, g) => prefix.chunk(i, g + 1)));
  return writeReferenceRecord(labels, scans);
}

/** A split's records as reference files: PCR_0.pcr, PCR_1.pcr, ... (one per record, in order) and PCR_index.pb. */
export function splitToReference(records: { file: string; bytes: Uint8Array }[]): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const entries: ReferenceIndexEntry[] = [];
  records.forEach((r, k) => {
    const name = referenceRecordName(k);
    const { bytes, offsets } = recordToReference(r.bytes, r.file);
    files.set(name, bytes);
    entries.push({ name, offsets });
  });
  files.set(REFERENCE_INDEX_FILE, writeReferenceIndex(entries));
  return files;
}

/** The query string that tells the lab what the reference format leaves out (docs/pcr.md). */
function labQuery(m: Pick<PcrManifest, 'image' | 'classes'>): string {
  const q = new URLSearchParams({ size: `${m.image.width}x${m.image.height}`, channels: String(m.image.channels) });
  const numbered = m.classes.every((c, i) => c === String(i));
  q.set('classes', numbered || m.classes.some((c) => c.includes(',')) ? String(m.classes.length) : m.classes.join(','));
  return q.toString();
}

export async function exportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { format: { type: 'string' }, out: { type: 'string' } } });
  const dir = positionals[0];
  if (!dir || !values.out) throw new Error('usage: bytelab pcr export DIR --format reference --out DIR2');
  checkFormat(values.format, 'export');
  const path = join(dir, 'manifest.json');
  const m = validateManifest(JSON.parse(await readFile(path, 'utf8')), path);
  const counts: string[] = [];
  for (const split of splitOrder(Object.keys(m.splits))) {
    const records = m.splits[split]!.records;
    const entries: ReferenceIndexEntry[] = [];
    const out = join(values.out, split);
    await mkdir(out, { recursive: true });
    // One record at a time, so a large dataset is never in memory at once.
    for (const [k, r] of records.entries()) {
      const ref = recordToReference(new Uint8Array(await readFile(join(dir, r.file))), r.file);
      const name = referenceRecordName(k);
      await writeFile(join(out, name), ref.bytes);
      entries.push({ name, offsets: ref.offsets });
    }
    await writeFile(join(out, REFERENCE_INDEX_FILE), writeReferenceIndex(entries));
    counts.push(`${split}: ${imageCount(m, split)} images in ${records.length} records`);
  }
  console.log(`wrote ${values.out} (PCR reference format): ${counts.join(', ')}`);
  console.log(
    `the format keeps no class names, image size or colour: serve ${values.out} over HTTP and give the lab the URL of ` +
      `${splitOrder(Object.keys(m.splits))[0]!}/${REFERENCE_INDEX_FILE}?${labQuery(m)}`,
  );
  return 0;
}

// ---------------------------------------------------------------------------
// Import

interface ReferenceSplit {
  name: string;
  dir: string;
  entries: ReferenceIndexEntry[];
}

/** The splits of a reference dataset: subfolders with a PCR_index.pb (named after the folder), else DIR itself as "train". */
async function findSplits(root: string): Promise<ReferenceSplit[]> {
  if (!existsSync(root)) throw new Error(`${root}: no such folder`);
  const dirs: { name: string; dir: string }[] = [];
  for (const d of await readdir(root, { withFileTypes: true })) {
    if (d.isDirectory() && existsSync(join(root, d.name, REFERENCE_INDEX_FILE))) dirs.push({ name: d.name, dir: join(root, d.name) });
  }
  if (dirs.length === 0 && existsSync(join(root, REFERENCE_INDEX_FILE))) dirs.push({ name: 'train', dir: root });
  if (dirs.length === 0) throw new Error(`${root}: no ${REFERENCE_INDEX_FILE}, neither in the folder nor in a subfolder per split`);
  const byName = new Map(dirs.map((d) => [d.name, d]));
  return Promise.all(
    splitOrder([...byName.keys()]).map(async (name) => {
      const { dir } = byName.get(name)!;
      const path = join(dir, REFERENCE_INDEX_FILE);
      return { name, dir, entries: parseReferenceIndex(new Uint8Array(await readFile(path)), path) };
    }),
  );
}

/** The first `length` bytes of a file (fewer if it is shorter). */
async function readHead(path: string, length: number): Promise<Uint8Array> {
  const fh = await open(path, 'r');
  try {
    const buf = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await fh.read(buf, got, length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}

export interface ImportProblem {
  /** split/record file name. */
  record: string;
  /** Image index inside the record; absent when the whole record failed. */
  image?: number;
  reason: string;
}

const reasonOf = (err: unknown) => (err instanceof RecordError ? err.message.replace(/^record [^,]*, /, '') : (err as Error).message);

export async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      format: { type: 'string' },
      size: { type: 'string' },
      channels: { type: 'string' },
      classes: { type: 'string' },
      'record-size': { type: 'string' },
      name: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const root = positionals[0];
  if (!root || !values.out)
    throw new Error(
      'usage: bytelab pcr import DIR2 --format reference [--size WxH] [--channels 1|3|auto] [--classes a,b,c] [--record-size N] [--name NAME] --out DIR',
    );
  checkFormat(values.format, 'import');
  const sizeMatch = /^(\d+)x(\d+)$/.exec(values.size ?? '64x64');
  const [width, height] = sizeMatch ? [Number(sizeMatch[1]), Number(sizeMatch[2])] : [0, 0];
  if (!(width > 0 && height > 0)) throw new Error(`--size must look like 64x64, got "${values.size}"`);
  assertModelInputSize(width, height); // before transcoding: makeManifest refuses it only after the records are written
  const channelsArg = values.channels ?? 'auto';
  if (!['1', '3', 'auto'].includes(channelsArg)) throw new Error(`--channels must be 1, 3 or auto, got "${values.channels}"`);
  const classNames = values.classes?.split(',').map((s) => s.trim());
  if (classNames?.some((c) => c === '')) throw new Error(`--classes has an empty name: "${values.classes}"`);
  const recordSize = positiveIntFlag(values['record-size'], 'record-size', DEFAULT_BUILD.recordSize);

  const splits = await findSplits(root);
  const problems: ImportProblem[] = [];
  const report = (p: ImportProblem) => {
    problems.push(p);
    console.error(`skipped ${p.record}${p.image === undefined ? '' : ` image ${p.image}`}: ${p.reason}`);
  };

  // Pass 1: metadata and the first chunk of every image (labels; colour for --channels auto).
  const readable = new Set<string>();
  let maxLabel = -1;
  let colour = false;
  for (const s of splits) {
    for (const e of s.entries) {
      const where = `${s.name}/${e.name}`;
      try {
        const head = await readHead(join(s.dir, e.name), referencePrefixLength(e.offsets, 1));
        const rec = readReferenceRecordPrefix(head, e.offsets, e.name);
        if (rec.completeGroups < 1) throw new RecordError(e.name, head.byteLength, `truncated: scan group 1 ends at byte ${rec.groupEnds[1]}`);
        for (let i = 0; i < rec.imageCount; i++) {
          if (rec.labels[i]! >= 0 && rec.labels[i]! <= 0xffff) maxLabel = Math.max(maxLabel, rec.labels[i]!);
          if ((jpegFrameInfo(rec.chunk(i, 1))?.components ?? 1) >= 3) colour = true;
        }
        readable.add(where);
      } catch (err) {
        if (!(err instanceof RecordError) && (err as NodeJS.ErrnoException).code === undefined) throw err;
        report({ record: where, reason: reasonOf(err) });
      }
    }
  }
  const channels: 1 | 3 = channelsArg === '1' ? 1 : channelsArg === '3' ? 3 : colour ? 3 : 1;
  const classes = classNames ?? Array.from({ length: maxLabel + 1 }, (_, i) => String(i));
  if (classes.length === 0) throw new Error(`${root}: no record could be read (see above)`);

  // Pass 2: every image whole (all its chunks + EOI), transcoded to our scan script.
  function* items(s: ReferenceSplit): Generator<LabeledScans> {
    for (const e of s.entries) {
      const where = `${s.name}/${e.name}`;
      if (!readable.has(where)) continue;
      let rec: ReturnType<typeof readReferenceRecordPrefix>;
      try {
        rec = readReferenceRecordPrefix(new Uint8Array(readFileSync(join(s.dir, e.name))), e.offsets, e.name);
        const levels = e.offsets.length - 1;
        if (rec.completeGroups < levels)
          throw new RecordError(
            e.name,
            rec.bytes.byteLength,
            `truncated: scan group ${rec.completeGroups + 1} of ${levels} ends at byte ${rec.groupEnds[rec.completeGroups + 1]}`,
          );
      } catch (err) {
        if (!(err instanceof RecordError) && (err as NodeJS.ErrnoException).code === undefined) throw err;
        report({ record: where, reason: reasonOf(err) });
        continue;
      }
      for (let i = 0; i < rec.imageCount; i++) {
        const label = rec.labels[i]!;
        if (!(label >= 0 && label < classes.length)) {
          report({ record: where, image: i, reason: `label ${label} is not one of the ${classes.length} classes${classNames ? ' given by --classes' : ''}` });
          continue;
        }
        try {
          const jpeg = rec.image(i, rec.progressiveLevels);
          yield { scans: transcodeToProgressive(jpeg, { colour: channels === 3 ? 'ycbcr' : 'gray' }).chunks, label };
        } catch (err) {
          report({ record: where, image: i, reason: `${(err as Error).message} (chunk 1 at byte ${rec.chunkOffset(i, 1)})` });
        }
      }
    }
  }

  await mkdir(values.out, { recursive: true });
  const write = (name: string, bytes: Uint8Array) => writeFile(join(values.out!, name), bytes);
  const manifestSplits: PcrManifest['splits'] = {};
  for (const s of splits) {
    const records = await buildSplit(s.name, items(s), channels, recordSize, write);
    if (records.length) manifestSplits[s.name] = { records };
  }
  if (Object.keys(manifestSplits).length === 0) throw new Error(`${root}: no image could be imported (see above)`);
  const manifest = makeManifest({
    name: values.name ?? basename(root),
    classes,
    image: { width, height, channels },
    quality: DEFAULT_BUILD.quality,
    variableSize: true,
    splits: manifestSplits,
    description: `imported from the PCR reference format (${root}); images transcoded losslessly, each at its own size`,
  });
  manifest.msssim = (await fidelityOnDisk(values.out, manifest, 256)).map((f) => Number(f.msssim.toFixed(4)));
  await writeFile(join(values.out, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
  const counts = Object.keys(manifestSplits).map((s) => `${s}: ${imageCount(manifest, s)} images in ${manifestSplits[s]!.records.length} records`);
  const images = problems.filter((p) => p.image !== undefined).length;
  const records = problems.length - images;
  console.log(
    `wrote ${values.out}: ${counts.join(', ')}; ${channels === 3 ? 'YCbCr (10 scan groups)' : 'grayscale (6 scan groups)'}, ${classes.length} classes; ` +
      `${images} image(s) and ${records} record(s) left out`,
  );
  return 0;
}
