// `bytelab pcr build | inspect | extract`.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { assertModelInputSize, buildSplit, DEFAULT_BUILD, encodeImages, makeManifest, type LabeledScans } from '../pcr/build.js';
import { bytesForGroup, imageCount, validateManifest, type ImageShape, type PcrManifest } from '../pcr/manifest.js';
import { RecordPrefix } from '../pcr/record.js';
import { fidelityOnDisk } from './fidelity.js';
import { generate } from './pcr-generate.js';
import { exportCommand, importCommand } from './pcr-reference.js';
import { readFolder } from './sources/folder.js';
import { readIdxPair } from './sources/idx.js';
import { positiveIntFlag } from './flags.js';

const FASHION_MNIST_CLASSES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];

export async function pcrCommand(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  switch (verb) {
    case 'build':
      return build(rest);
    case 'inspect':
      return inspect(rest);
    case 'extract':
      return extract(rest);
    case 'export':
      return exportCommand(rest);
    case 'import':
      return importCommand(rest);
    case 'generate':
      return generate(rest);
    default:
      throw new Error(`unknown verb "${verb ?? ''}" (build, generate, inspect, extract, export, import)`);
  }
}

async function build(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      idx: { type: 'string' },
      labels: { type: 'string' },
      'test-idx': { type: 'string' },
      'test-labels': { type: 'string' },
      folder: { type: 'string' },
      size: { type: 'string' },
      channels: { type: 'string' },
      'test-fraction': { type: 'string' },
      limit: { type: 'string' },
      'test-limit': { type: 'string' },
      'record-size': { type: 'string' },
      quality: { type: 'string' },
      name: { type: 'string' },
      out: { type: 'string' },
    },
  });
  if (!values.out) throw new Error('--out DIR is required');
  const opts = {
    recordSize: positiveIntFlag(values['record-size'], 'record-size', DEFAULT_BUILD.recordSize),
    quality: positiveIntFlag(values.quality, 'quality', DEFAULT_BUILD.quality),
  };
  if (opts.quality > 100) throw new Error('--quality must be 1..100');
  const limit = values.limit === undefined ? Infinity : positiveIntFlag(values.limit, 'limit', 0);

  let splits: Record<string, Iterable<LabeledScans>>;
  let shape: ImageShape;
  let classes: string[];
  let attribution: string | undefined;
  let variableSize = false;
  if (values.idx) {
    if (!values.labels) throw new Error('--idx needs --labels');
    const train = await readIdxPair(values.idx, values.labels, limit);
    shape = { width: train.width, height: train.height, channels: 1 };
    splits = { train: encodeImages(train.items, opts.quality) };
    if (values['test-idx']) {
      if (!values['test-labels']) throw new Error('--test-idx needs --test-labels');
      const testLimit = values['test-limit'] === undefined ? Infinity : positiveIntFlag(values['test-limit'], 'test-limit', 0);
      splits.test = encodeImages((await readIdxPair(values['test-idx'], values['test-labels'], testLimit)).items, opts.quality);
    }
    const labelMax = train.items.reduce((m, it) => Math.max(m, it.label), 0);
    classes = labelMax < 10 && /fashion/i.test(values.idx) ? FASHION_MNIST_CLASSES : Array.from({ length: labelMax + 1 }, (_, i) => String(i));
    if (/fashion/i.test(values.idx)) attribution = 'Fashion-MNIST, Zalando Research (Xiao, Rasul, Vollgraf 2017), MIT licence';
  } else if (values.folder) {
    const [w, h] = (values.size ?? '64x64').split('x').map(Number) as [number, number];
    if (!(w > 0 && h > 0)) throw new Error(`--size must look like 64x64, got "${values.size}"`);
    assertModelInputSize(w, h); // before reading the folder: makeManifest refuses it only after the records are written
    const channels =
      values.channels === '1' ? 1 : values.channels === '3' ? 3 : values.channels === undefined || values.channels === 'auto' ? 'auto' : undefined;
    if (!channels) throw new Error(`--channels must be 1, 3 or auto, got "${values.channels}"`);
    const folder = await readFolder(values.folder, { channels, quality: opts.quality, testFraction: Number(values['test-fraction'] ?? 0.1), limit });
    for (const c of folder.converted) console.error(`converted ${c.file}: ${c.what}`);
    for (const s of folder.skipped) console.error(`skipped ${s.file}: ${s.reason}`);
    console.error(
      `colour mode: ${folder.channels === 3 ? 'YCbCr (10 scan groups)' : 'grayscale (6 scan groups)'}; ${folder.converted.length} file(s) converted, ` +
        `${folder.skipped.length} file(s) left out`,
    );
    shape = { width: w, height: h, channels: folder.channels };
    classes = folder.classes;
    variableSize = true;
    splits = { train: folder.train, ...(folder.test.length ? { test: folder.test } : {}) };
  } else {
    throw new Error('give --idx IMAGES --labels LABELS, or --folder DIR');
  }

  await mkdir(values.out, { recursive: true });
  const write = (name: string, bytes: Uint8Array) => writeFile(join(values.out!, name), bytes);
  const manifestSplits: PcrManifest['splits'] = {};
  for (const [split, items] of Object.entries(splits)) {
    manifestSplits[split] = { records: await buildSplit(split, items, shape.channels, opts.recordSize, write) };
  }
  const manifest = makeManifest({
    name: values.name ?? 'dataset',
    classes,
    image: shape,
    quality: opts.quality,
    splits: manifestSplits,
    ...(attribution ? { attribution } : {}),
    ...(variableSize ? { variableSize } : {}),
  });
  // The lab shows what each step of the fidelity slider gives, so measure it once here.
  manifest.msssim = (await fidelityOnDisk(values.out, manifest, 256)).map((f) => Number(f.msssim.toFixed(4)));
  await writeFile(join(values.out, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
  const counts = Object.keys(splits).map((s) => `${s}: ${imageCount(manifest, s)} images in ${manifest.splits[s]!.records.length} records`);
  console.log(`wrote ${values.out}: ${counts.join(', ')}`);
  return 0;
}

async function loadManifest(dir: string): Promise<PcrManifest> {
  const path = join(dir, 'manifest.json');
  return validateManifest(JSON.parse(await readFile(path, 'utf8')), path);
}

/** Per-dataset summary: how many bytes a reader fetches for each scan group. */
export function summarise(m: PcrManifest) {
  const splits = Object.keys(m.splits);
  const images = splits.reduce((n, s) => n + imageCount(m, s), 0);
  const full = splits.reduce((n, s) => n + bytesForGroup(m, s, m.scanGroups), 0);
  const groups = Array.from({ length: m.scanGroups }, (_, i) => {
    const bytes = splits.reduce((n, s) => n + bytesForGroup(m, s, i + 1), 0);
    return { group: i + 1, bytes, bytesPerImage: bytes / images, fractionOfFull: bytes / full };
  });
  return {
    name: m.name,
    images,
    scanGroups: m.scanGroups,
    image: m.image,
    classes: m.classes.length,
    splits: Object.fromEntries(splits.map((s) => [s, { images: imageCount(m, s), records: m.splits[s]!.records.length }])),
    groups,
  };
}

async function inspect(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, mssim: { type: 'boolean' }, sample: { type: 'string' } },
  });
  const dir = positionals[0];
  if (!dir) throw new Error('usage: bytelab pcr inspect DIR [--json] [--mssim [--sample N]]');
  const manifest = await loadManifest(dir);
  const summary = summarise(manifest);
  const fidelity = values.mssim ? await fidelityOnDisk(dir, manifest, positiveIntFlag(values.sample, 'sample', 256)) : undefined;
  const groups = summary.groups.map((g, i) => ({ ...g, ...(fidelity ? { msssim: fidelity[i]!.msssim } : {}) }));
  if (values.json) {
    console.log(
      JSON.stringify({ ...summary, groups, ...(fidelity ? { msssimSample: fidelity[0]?.sample ?? 0, msssimScales: fidelity[0]?.scales ?? 0 } : {}) }, null, 2),
    );
    return 0;
  }
  console.log(
    `${summary.name}: ${summary.images} images ${summary.image.width}x${summary.image.height}x${summary.image.channels}, ${summary.scanGroups} scan groups`,
  );
  console.log(`group  bytes        per image  of full${fidelity ? '   MS-SSIM' : ''}`);
  for (const g of groups) {
    const ms = g.msssim === undefined ? '' : `  ${g.msssim.toFixed(4).padStart(8)}`;
    console.log(
      `${String(g.group).padStart(5)}  ${String(g.bytes).padStart(11)}  ${g.bytesPerImage.toFixed(1).padStart(9)}  ` +
        `${(100 * g.fractionOfFull).toFixed(1).padStart(6)}%${ms}`,
    );
  }
  if (fidelity) console.log(`MS-SSIM against the full decode, mean over ${fidelity[0]?.sample} images, ${fidelity[0]?.scales} scales`);
  return 0;
}

async function extract(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { group: { type: 'string' }, split: { type: 'string' }, out: { type: 'string' } },
  });
  const dir = positionals[0];
  if (!dir || !values.out || !values.group) throw new Error('usage: bytelab pcr extract DIR --group G [--split NAME] --out DIR');
  const m = await loadManifest(dir);
  const group = positiveIntFlag(values.group, 'group', 1);
  if (group > m.scanGroups) throw new Error(`--group ${group}: the dataset has ${m.scanGroups} scan groups`);
  const split = values.split ?? Object.keys(m.splits)[0]!;
  const entry = m.splits[split];
  if (!entry) throw new Error(`no split "${split}" (have ${Object.keys(m.splits).join(', ')})`);
  await mkdir(values.out, { recursive: true });
  let index = 0;
  for (const r of entry.records) {
    const bytes = new Uint8Array(await readFile(join(dir, r.file)));
    const prefix = new RecordPrefix(bytes.subarray(0, r.groupEnds[group]), r.file);
    for (let i = 0; i < prefix.header.images; i++, index++) {
      await writeFile(join(values.out, `${index}_${prefix.header.labels[i]}.jpg`), prefix.image(i, group));
    }
  }
  console.log(`wrote ${index} images at scan group ${group} to ${values.out}`);
  return 0;
}
