// The PCR benchmark: bytes a reader fetches per scan group, and how fast the
// images assembled at each group decode with our wasm libjpeg-turbo, with native
// libjpeg-turbo in-process (bench/native/decode.c) and with djpeg run once per image.
// Usage: npx tsx bench/pcr.ts [DATASET_DIR] [--images N] [--djpeg-images N] [--runs N] [--djpeg-runs N]
// Writes bench/results/pcr.md (overwritten) and prints the same text.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { TurboJpeg } from '../src/jpeg/turbo.js';
import { loadTurboJpegNode } from '../src/jpeg/turbo-node.js';
import { validateManifest, type PcrManifest, type RecordEntry } from '../src/pcr/manifest.js';
import { RecordPrefix } from '../src/pcr/record.js';
import { positiveIntFlag } from '../src/cli/flags.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results', 'pcr.md');
const C_SOURCE = join(ROOT, 'bench', 'native', 'decode.c');
const DJPEG = '/usr/bin/djpeg';
/** djpeg processes started, untimed, per group before the timed rounds. */
const DJPEG_WARMUP = 20;

// ---------------------------------------------------------------- options

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    images: { type: 'string' },
    'djpeg-images': { type: 'string' },
    runs: { type: 'string' },
    'djpeg-runs': { type: 'string' },
  },
});

const DATASET_DIR = resolve(positionals[0] ?? join(ROOT, 'public', 'datasets', 'fashion-mnist-mini'));
const WANT_IMAGES = positiveIntFlag(values.images, 'images', Number.MAX_SAFE_INTEGER);
const WANT_DJPEG_IMAGES = positiveIntFlag(values['djpeg-images'], 'djpeg-images', 300);
const RUNS = positiveIntFlag(values.runs, 'runs', 7);
const DJPEG_RUNS = positiveIntFlag(values['djpeg-runs'], 'djpeg-runs', 5);

// ---------------------------------------------------------------- helpers

const T0 = performance.now();
const log = (line: string): void => void process.stderr.write(`bench [${((performance.now() - T0) / 1000).toFixed(1)} s]: ${line}\n`);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const sig3 = (n: number): string => n.toLocaleString('en-US', { maximumSignificantDigits: 3 });
const times = (x: number | undefined): string => (x === undefined ? '—' : `${x.toFixed(x < 10 ? 2 : 1)}×`);
/** A per-round ratio as its median with the range over the rounds: 0.36× (0.33–0.40). */
const timesSpread = (x: Spread | undefined): string => (x === undefined ? '—' : `${times(x.median)} (${x.min.toFixed(2)}–${x.max.toFixed(2)})`);
const rate = (r: number | undefined): string => (r === undefined ? '—' : sig3(r));

function run(cmd: string, args: string[], env?: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { encoding: 'utf8', env: env ?? process.env, maxBuffer: 64 << 20 });
}

function firstLine(r: SpawnSyncReturns<string>): string {
  if (r.error) return r.error.message;
  return (r.stderr || r.stdout || `exit status ${r.status}`).trim().split('\n')[0]!;
}

const isRoot = (): boolean => process.getuid?.() === 0;
const hasCommand = (name: string): boolean => run('sh', ['-c', `command -v ${name}`]).status === 0;

/** Installs a Debian package when we are root with apt-get; returns why not otherwise. */
function aptInstall(pkg: string): string | undefined {
  if (!isRoot()) return `not root, cannot install ${pkg} (as root: apt-get install -y ${pkg})`;
  if (!hasCommand('apt-get')) return `no apt-get to install ${pkg} with`;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  log(`installing ${pkg} (apt-get install -y ${pkg})`);
  let r = run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], env);
  if (r.status !== 0) {
    log('apt-get install failed; trying again after apt-get update');
    run('apt-get', ['update', '-qq'], env);
    r = run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], env);
  }
  return r.status === 0 ? undefined : `apt-get install ${pkg} failed: ${firstLine(r)}`;
}

/** "BLJ1", u32 count, u32 channels, then u32 length + bytes per image (the format decode.c reads). */
function packJpegs(jpegs: Uint8Array[], channels: number): Uint8Array {
  const size = 12 + jpegs.reduce((s, j) => s + 4 + j.byteLength, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set([0x42, 0x4c, 0x4a, 0x31]);
  view.setUint32(4, jpegs.length, true);
  view.setUint32(8, channels, true);
  let at = 12;
  for (const j of jpegs) {
    view.setUint32(at, j.byteLength, true);
    out.set(j, at + 4);
    at += 4 + j.byteLength;
  }
  return out;
}

/** Parses decode.c's report: "images K N", "warnings K W" and "ns K T" lines, K = the batch index. */
function parseNative(stdout: string, batches: number, runs: number): { images: number; warnings: number; ns: number[] }[] {
  const out = Array.from({ length: batches }, () => ({ images: 0, warnings: 0, ns: [] as number[] }));
  for (const line of stdout.trim().split('\n')) {
    const [key, k, value] = line.split(' ');
    const batch = out[Number(k)];
    if (!batch) throw new Error(`unexpected line from bench/native/decode.c: "${line}"`);
    if (key === 'images') batch.images = Number(value);
    else if (key === 'warnings') batch.warnings = Number(value);
    else if (key === 'ns') batch.ns.push(Number(value));
  }
  if (out.some((b) => b.ns.length !== runs)) throw new Error(`bench/native/decode.c did not report ${runs} runs per batch:\n${stdout}`);
  return out;
}

// ---------------------------------------------------------------- native tools

interface NativeTools {
  /** The compiled decode.c, or undefined with the reason in inProcessSkip. */
  binary?: string;
  inProcess: boolean;
  inProcessSkip?: string;
  djpeg: boolean;
  djpegSkip?: string;
  nativeVersion?: string;
  djpegVersion?: string;
}

function prepareNative(tmp: string): NativeTools {
  const tools: NativeTools = { inProcess: false, djpeg: false };
  if (!hasCommand('cc')) {
    tools.inProcessSkip = tools.djpegSkip = 'no C compiler (cc) to build bench/native/decode.c';
    return tools;
  }
  const binary = join(tmp, 'decode');
  let headerProblem: string | undefined;
  if (!existsSync('/usr/include/turbojpeg.h')) headerProblem = aptInstall('libturbojpeg0-dev');
  const full = run('cc', ['-O2', C_SOURCE, '-lturbojpeg', '-o', binary]);
  if (full.status === 0) {
    tools.binary = binary;
    tools.inProcess = true;
  } else {
    tools.inProcessSkip = `cannot build bench/native/decode.c against libturbojpeg (${headerProblem ?? firstLine(full)})`;
    const spawnOnly = run('cc', ['-O2', '-DNO_TURBOJPEG', C_SOURCE, '-o', binary]);
    if (spawnOnly.status === 0) tools.binary = binary;
  }

  if (!existsSync(DJPEG)) {
    const why = aptInstall('libjpeg-turbo-progs');
    if (why || !existsSync(DJPEG)) tools.djpegSkip = `${DJPEG} missing${why ? `: ${why}` : ' (libjpeg-turbo-progs installed no djpeg there)'}`;
  }
  if (!tools.djpegSkip) {
    if (tools.binary) tools.djpeg = true;
    else tools.djpegSkip = 'bench/native/decode.c, which starts the djpeg processes, did not build';
    const v = run(DJPEG, ['-version']);
    tools.djpegVersion = (v.stderr + v.stdout).trim().split('\n')[0];
  }

  if (tools.inProcess) {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format syntax
    const pkg = run('dpkg-query', ['-W', '-f', '${Version}', 'libturbojpeg0']);
    if (pkg.status === 0 && pkg.stdout) tools.nativeVersion = `libturbojpeg0 ${pkg.stdout.trim()}`;
    else {
      const header = ['/usr/include/x86_64-linux-gnu/jconfig.h', '/usr/include/aarch64-linux-gnu/jconfig.h', '/usr/include/jconfig.h'].find(existsSync);
      const m = header && /LIBJPEG_TURBO_VERSION\s+(\S+)/.exec(readFileSync(header, 'utf8'));
      tools.nativeVersion = m ? `libjpeg-turbo ${m[1]} (headers)` : 'libturbojpeg (version unknown)';
    }
  }
  return tools;
}

/** What we can say about the wasm build: the npm package version and the copyright line inside the binary. */
function wasmVersion(): string {
  const require = createRequire(import.meta.url);
  const pkg = JSON.parse(readFileSync(require.resolve('@cwasm/jpeg-turbo/package.json'), 'utf8')) as { version: string };
  const wasm = readFileSync(require.resolve('@cwasm/jpeg-turbo/jpeg-turbo.wasm')).toString('latin1');
  const year = /Copyright \(C\) 1991-(\d{4}) The libjpeg-turbo Project/.exec(wasm)?.[1];
  return `@cwasm/jpeg-turbo ${pkg.version}: libjpeg-turbo 2.0.x built to wasm32 with WITH_SIMD=0${year ? ` (its copyright line reads 1991-${year})` : ''}`;
}

// ---------------------------------------------------------------- dataset

interface Loaded {
  entry: RecordEntry;
  bytes: Uint8Array;
  /** How many of the record's images (from the first) are in the subset. */
  take: number;
}

function allRecords(m: PcrManifest): { split: string; entry: RecordEntry }[] {
  return Object.entries(m.splits).flatMap(([split, s]) => s.records.map((entry) => ({ split, entry })));
}

/** The first `want` images of the dataset, in manifest order, with their record files read. */
function loadSubset(m: PcrManifest, want: number): Loaded[] {
  const out: Loaded[] = [];
  let have = 0;
  for (const { entry } of allRecords(m)) {
    if (have >= want) break;
    const take = Math.min(entry.images, want - have);
    out.push({ entry, bytes: new Uint8Array(readFileSync(join(DATASET_DIR, entry.file))), take });
    have += take;
  }
  return out;
}

/** Parses every record prefix at group g and assembles its images: the work a reader does before decoding. */
function assemble(subset: Loaded[], g: number): Uint8Array[] {
  const jpegs: Uint8Array[] = [];
  for (const r of subset) {
    const prefix = new RecordPrefix(r.bytes.subarray(0, r.entry.groupEnds[g]!), r.entry.file);
    for (let i = 0; i < r.take; i++) jpegs.push(prefix.image(i, g));
  }
  return jpegs;
}

/** Milliseconds for `reps` back-to-back calls of work. */
function timeIt(work: () => void, reps = 1): number {
  const t0 = performance.now();
  for (let k = 0; k < reps; k++) work();
  return performance.now() - t0;
}

/** Timings shorter than this are repeated inside one measurement, so that garbage collections spread evenly. */
const MIN_TIMING_MS = 40;

// ---------------------------------------------------------------- per-group measurements

interface Spread {
  min: number;
  median: number;
  max: number;
}

interface GroupResult {
  group: number;
  /** Images/s, median over the rounds. */
  assemblyRate: number;
  wasmRate: number;
  nativeRate?: number;
  djpegRate?: number;
  /** Over the rounds, each round's wasm rate / native rate (and / djpeg rate). */
  wasmOverNative?: Spread;
  wasmOverDjpeg?: Spread;
  /** Images whose wasm pixels equal native tjDecompress2's byte for byte. */
  identical?: number;
  maxDiff?: number;
  /** Mean absolute pixel difference, wasm vs native. */
  mae?: number;
  /** djpeg -pnm vs native tjDecompress2 on the djpeg sample: images identical. */
  djpegVsNative?: number;
  nativeWarnings?: number;
}

function decodeAllWasm(turbo: TurboJpeg, jpegs: Uint8Array[], channels: 1 | 3): Uint8Array {
  const first = turbo.decode(jpegs[0]!, channels);
  const size = first.data.byteLength;
  const out = new Uint8Array(size * jpegs.length);
  jpegs.forEach((j, i) => {
    const img = turbo.decode(j, channels);
    if (img.data.byteLength !== size) throw new Error(`image ${i} decoded to ${img.width}x${img.height}, image 0 to ${first.width}x${first.height}`);
    out.set(img.data, i * size);
  });
  return out;
}

/** Compares the first `images` images of two back-to-back pixel buffers. */
function compare(ours: Uint8Array, theirs: Uint8Array, images: number): { identical: number; maxDiff: number; mae: number } {
  if (ours.byteLength !== theirs.byteLength) throw new Error(`decoders disagree on the pixel count: ${ours.byteLength} vs ${theirs.byteLength} bytes`);
  const size = ours.byteLength / images;
  let identical = 0;
  let maxDiff = 0;
  let sum = 0;
  for (let i = 0; i < images; i++) {
    let same = true;
    for (let k = i * size; k < (i + 1) * size; k++) {
      const d = Math.abs(ours[k]! - theirs[k]!);
      if (d) {
        same = false;
        sum += d;
        if (d > maxDiff) maxDiff = d;
      }
    }
    if (same) identical++;
  }
  return { identical, maxDiff, mae: sum / ours.byteLength };
}

/** The pixels of the PNM files djpeg -pnm wrote next to each JPEG (FILE.pnm), back to back: the last bytes of each file, after its header. */
function pnmPixels(files: string[], imageBytes: number, channels: 1 | 3): Uint8Array {
  const out = new Uint8Array(files.length * imageBytes);
  files.forEach((file, i) => {
    const pnm = readFileSync(`${file}.pnm`);
    const magic = pnm.toString('latin1', 0, 2);
    if (magic !== (channels === 1 ? 'P5' : 'P6') || pnm.byteLength < imageBytes)
      throw new Error(`${file}.pnm: not the ${channels === 1 ? 'PGM' : 'PPM'} file we expected`);
    out.set(pnm.subarray(pnm.byteLength - imageBytes), i * imageBytes);
  });
  return out;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const started = performance.now();
  const manifestPath = join(DATASET_DIR, 'manifest.json');
  if (!existsSync(manifestPath)) throw new Error(`${manifestPath} not found (run npm run data:mini, or pass a PCR dataset folder)`);
  const manifest = validateManifest(JSON.parse(readFileSync(manifestPath, 'utf8')), manifestPath);
  const G = manifest.scanGroups;
  const { width, height, channels } = manifest.image;
  const records = allRecords(manifest);
  const totalImages = records.reduce((s, r) => s + r.entry.images, 0);

  // 1. Bytes per group, over every record of every split.
  const fetched = Array.from({ length: G + 1 }, (_, g) => records.reduce((s, r) => s + r.entry.groupEnds[g]!, 0));

  const tmp = mkdtempSync(join(os.tmpdir(), 'bytelab-bench-'));
  try {
    log(`dataset ${relative(process.cwd(), DATASET_DIR) || '.'}: ${totalImages} images in ${records.length} records`);
    const native = prepareNative(tmp);
    if (native.inProcessSkip) log(`skipping native in-process column: ${native.inProcessSkip}`);
    if (native.djpegSkip) log(`skipping djpeg column: ${native.djpegSkip}`);

    const subset = loadSubset(manifest, WANT_IMAGES);
    const n = subset.reduce((s, r) => s + r.take, 0);
    const nDjpeg = Math.min(WANT_DJPEG_IMAGES, n);
    const turbo = await loadTurboJpegNode();
    const imageBytes = width * height * channels;

    const groups = Array.from({ length: G }, (_, k) => k + 1);
    const jpegs = groups.map((g) => assemble(subset, g)); // jpegs[g - 1]: every subset image at group g
    const ours = jpegs.map((js) => decodeAllWasm(turbo, js, channels));
    const results: GroupResult[] = groups.map((g) => ({ group: g, assemblyRate: 0, wasmRate: 0 }));
    const fullAgree: { agree: number; of: number; how: string }[] = [];

    // Inputs of the native decoder (packed JPEGs) and of djpeg (one file per image).
    const packed = groups.map((g) => join(tmp, `g${g}.blj`));
    if (native.inProcess) groups.forEach((g) => writeFileSync(packed[g - 1]!, packJpegs(jpegs[g - 1]!, channels)));
    const files = groups.map((g) => {
      if (!native.djpeg) return [];
      const dir = join(tmp, `g${g}`);
      mkdirSync(dir);
      return jpegs[g - 1]!.slice(0, nDjpeg).map((j, i) => {
        const file = join(dir, `${String(i).padStart(5, '0')}.jpg`);
        writeFileSync(file, j);
        return file;
      });
    });
    const lists = groups.map((g) => join(tmp, `g${g}.txt`));
    if (native.djpeg) groups.forEach((g) => writeFileSync(lists[g - 1]!, `${files[g - 1]!.join('\n')}\n`));

    // Rounds: each times every group with every decoder, so the decoders are compared
    // on the same state of a possibly shared machine. Round 0 is the warm-up; its
    // figures are dropped (djpeg warms up with its own untimed processes instead).
    const perImageMs = (ms: number): number => ms / n;
    const asmMs = groups.map(() => [] as number[]);
    const wasmMs = groups.map(() => [] as number[]);
    const nativeMs = groups.map(() => [] as number[]);
    const djpegMs = groups.map(() => [] as number[]);
    const asmReps = groups.map(() => 1);
    for (let round = 0; round <= RUNS; round++) {
      log(round === 0 ? `warm-up round: ${int(n)} images x ${G} groups` : `round ${round}/${RUNS}`);
      for (const g of groups) {
        // Assembly: RecordPrefix parse + image assembly, no decode.
        const reps = asmReps[g - 1]!;
        const ms = timeIt(() => void assemble(subset, g), reps) / reps;
        if (round === 0) asmReps[g - 1] = Math.max(1, Math.ceil(MIN_TIMING_MS / ms));
        else asmMs[g - 1]!.push(perImageMs(ms));
        // (a) wasm: the TurboJpeg wrapper the pipeline worker uses, one decode() per image.
        const wasm = timeIt(() => {
          for (const j of jpegs[g - 1]!) turbo.decode(j, channels);
        });
        if (round > 0) wasmMs[g - 1]!.push(perImageMs(wasm));
      }
      // (b) native libjpeg-turbo in-process: one process, all groups, after its own untimed pass.
      if (native.inProcess && round > 0) {
        const r = run(native.binary!, ['bench', ...(round === 1 ? ['-raw'] : []), '1', ...packed]);
        if (r.status !== 0) throw new Error(`native decode failed: ${firstLine(r)}`);
        parseNative(r.stdout, G, 1).forEach((rep, k) => {
          if (rep.images !== n) throw new Error(`native decode read ${rep.images} images at group ${k + 1}, we packed ${n}`);
          results[k]!.nativeWarnings = rep.warnings;
          nativeMs[k]!.push(rep.ns[0]! / 1e6 / n);
        });
      }
      // (c) djpeg, one process per image, on the first nDjpeg images of each group.
      if (native.djpeg && round > 0 && round <= DJPEG_RUNS) {
        const r = run(native.binary!, ['spawn', DJPEG, '1', String(DJPEG_WARMUP), ...lists]);
        if (r.status !== 0) throw new Error(`djpeg run failed: ${firstLine(r)}`);
        parseNative(r.stdout, G, 1).forEach((rep, k) => {
          if (rep.images !== nDjpeg) throw new Error(`djpeg list at group ${k + 1} has ${rep.images} files, we wrote ${nDjpeg}`);
          djpegMs[k]!.push(rep.ns[0]! / 1e6 / nDjpeg);
        });
      }
    }

    const rateOf = (ms: number[]): number => 1000 / median(ms);
    const ratioOf = (mine: number[], theirs: number[]): Spread => {
      const rs = theirs.map((t, r) => t / mine[r]!);
      return { min: Math.min(...rs), median: median(rs), max: Math.max(...rs) };
    };
    for (const res of results) {
      const k = res.group - 1;
      res.assemblyRate = rateOf(asmMs[k]!);
      res.wasmRate = rateOf(wasmMs[k]!);
      if (nativeMs[k]!.length) {
        res.nativeRate = rateOf(nativeMs[k]!);
        res.wasmOverNative = ratioOf(wasmMs[k]!, nativeMs[k]!);
      }
      if (djpegMs[k]!.length) {
        res.djpegRate = rateOf(djpegMs[k]!);
        res.wasmOverDjpeg = ratioOf(wasmMs[k]!, djpegMs[k]!);
      }
    }

    // Checks: wasm against native tjDecompress2 (pixels from round 1's untimed pass) at
    // every group; djpeg -pnm against native at every group and against wasm at the full group.
    log('checking that the decoders agree');
    const nativePixels = native.inProcess ? packed.map((file) => new Uint8Array(readFileSync(`${file}.raw`))) : undefined;
    if (nativePixels) {
      for (const res of results) Object.assign(res, compare(ours[res.group - 1]!, nativePixels[res.group - 1]!, n));
      fullAgree.push({ agree: results[G - 1]!.identical!, of: n, how: 'wasm vs native tjDecompress2, byte for byte' });
    }
    if (native.djpeg) {
      const r = run(native.binary!, ['pnm', DJPEG, ...lists]);
      if (r.status !== 0) throw new Error(`djpeg -pnm failed: ${firstLine(r)}`);
      for (const res of results) {
        const viaDjpeg = pnmPixels(files[res.group - 1]!, imageBytes, channels);
        if (nativePixels) res.djpegVsNative = compare(viaDjpeg, nativePixels[res.group - 1]!.subarray(0, nDjpeg * imageBytes), nDjpeg).identical;
        if (res.group === G)
          fullAgree.push({
            agree: compare(ours[G - 1]!.subarray(0, nDjpeg * imageBytes), viaDjpeg, nDjpeg).identical,
            of: nDjpeg,
            how: 'wasm vs djpeg -pnm, byte for byte',
          });
      }
    }

    // ------------------------------------------------------------ report
    const cpus = os.cpus();
    const full = fetched[G]!;
    const firstFile = subset[0]!.entry.file;
    const lastFile = subset[subset.length - 1]!.entry.file;
    const seconds = (performance.now() - started) / 1000;
    const lines: string[] = [];
    const row = (cells: (string | number)[]): void => void lines.push(`| ${cells.join(' | ')} |`);

    lines.push('# PCR benchmark', '');
    lines.push(`- date: ${new Date().toISOString()}`);
    lines.push(`- machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${os.type()} ${os.release()}`);
    lines.push(`- node: ${process.version}`);
    lines.push(`- wasm decoder: ${wasmVersion()}`);
    lines.push(
      native.inProcess
        ? `- native in-process: ${native.nativeVersion} (TurboJPEG API, the library's own SIMD code), bench/native/decode.c built with cc -O2`
        : `- native in-process: skipped: ${native.inProcessSkip}`,
    );
    lines.push(`- djpeg: ${native.djpeg ? `${DJPEG}, ${native.djpegVersion}` : `skipped: ${native.djpegSkip}`}`);
    lines.push(
      `- dataset: ${manifest.name} (${relative(ROOT, DATASET_DIR) || DATASET_DIR}): ${int(totalImages)} images in ${records.length} records, ` +
        `${width}x${height}x${channels}, JPEG quality ${manifest.quality}, ${G} scan groups`,
    );
    lines.push(`- whole bench: ${seconds.toFixed(1)} s`, '');

    lines.push(`## Bytes a reader fetches, per scan group (all ${records.length} records, ${int(totalImages)} images)`, '');
    row(['group', 'bytes fetched', 'bytes / image', 'fraction of full record']);
    row(['---:', '---:', '---:', '---:']);
    for (let g = 1; g <= G; g++) row([g, int(fetched[g]!), (fetched[g]! / totalImages).toFixed(1), `${((100 * fetched[g]!) / full).toFixed(1)}%`]);
    lines.push('');
    lines.push(
      `Bytes fetched for group g = sum of groupEnds[g] over the records (the record's metadata block, ${int(fetched[0]!)} bytes in all, is included in ` +
        `every row).`,
      '',
    );

    lines.push(`## Decode throughput per scan group, images/s (median of ${RUNS} rounds after a warm-up round)`, '');
    lines.push(
      `Images: the first ${int(n)} of the dataset (${firstFile} .. ${lastFile}), assembled at each group with RecordPrefix.image(i, g); ` +
        `the same JPEG bytes go to every decoder. Each round times every group with every decoder in turn, so all columns see the same state of the ` +
        `machine; assembly passes shorter than ${MIN_TIMING_MS} ms are repeated within one timing. djpeg runs on the first ${int(nDjpeg)} images, in ` +
        `${Math.min(DJPEG_RUNS, RUNS) === 1 ? 'round 1' : `rounds 1-${Math.min(DJPEG_RUNS, RUNS)}`}, after ${DJPEG_WARMUP} untimed processes per group.`,
      '',
    );
    row([
      'group',
      'assembly only',
      'wasm (TurboJpeg, Node)',
      'native tjDecompress2',
      'djpeg, process per image ¹',
      'wasm / native',
      'wasm / djpeg',
      'assembly share ²',
      'wasm = native, pixels ³',
    ]);
    row(['---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']);
    for (const r of results) {
      const share = 1 / r.assemblyRate / (1 / r.assemblyRate + 1 / r.wasmRate);
      const same =
        r.identical === undefined ? '—' : `${int(r.identical)}/${int(n)}${r.identical < n ? ` (mean diff ${r.mae!.toFixed(2)}, max ${r.maxDiff})` : ''}`;
      row([
        r.group,
        rate(r.assemblyRate),
        rate(r.wasmRate),
        rate(r.nativeRate),
        rate(r.djpegRate),
        timesSpread(r.wasmOverNative),
        timesSpread(r.wasmOverDjpeg),
        `${(100 * share).toFixed(1)}%`,
        same,
      ]);
    }
    lines.push('');
    lines.push(
      fullAgree.length
        ? fullAgree.map((a) => `- outputs agree: ${a.agree}/${a.of} (group ${G}, ${a.how})`).join('\n')
        : '- outputs agree: not checked (neither the native in-process decoder nor djpeg is available)',
    );
    const checked = results.filter((r) => r.djpegVsNative !== undefined);
    if (checked.length) {
      const agree = checked.reduce((s, r) => s + r.djpegVsNative!, 0);
      lines.push(
        `- native tjDecompress2 vs djpeg -pnm (both ${native.djpegVersion?.replace(/^libjpeg-turbo version /, 'libjpeg-turbo ') ?? 'native'}): ` +
          `${agree}/${checked.length * nDjpeg} identical (${int(nDjpeg)} images × ${checked.length} groups)`,
      );
    }
    lines.push('');
    const warned = results.filter((r) => r.nativeWarnings);
    if (warned.length) lines.push(`Native libjpeg-turbo warned on ${warned.map((r) => `${r.nativeWarnings} images at group ${r.group}`).join(', ')}.`, '');
    lines.push(
      '¹ djpeg: `djpeg -outfile /dev/null FILE` started with posix_spawn and waited for, one process per image, by bench/native/decode.c; ' +
        'the rate includes process start-up, dynamic linking and reading the file, which dwarf the decode of a small image. ' +
        "Node's child_process overhead is not counted.",
      '',
    );
    lines.push(
      '² Assembly share: time to parse the record prefixes (RecordPrefix) and assemble the images, as a share of assembly + wasm decode. ' +
        'Assembly timings include the allocation of each assembled JPEG.',
      '',
    );
    lines.push(
      '³ Images whose wasm decode equals native tjDecompress2 byte for byte. ' +
        'At partial groups libjpeg fills in the missing coefficients by block smoothing, ' +
        'which libjpeg-turbo 2.1 changed (2.1 beta1 ChangeLog item 6: smoothing per iMCU row by the scan that produced it, and a 5x5 Gaussian-like kernel ' +
        'for DC-only output); ' +
        'the wasm build is 2.0, so the differences at partial groups come from the library versions, not from our wrapper. Mean diff is over all pixels, in ' +
        '8-bit levels.',
      '',
    );
    lines.push(
      'wasm / native and wasm / djpeg: the median over the rounds of the ratio of images/s within a round, with its range (min–max) over the rounds; ' +
        'below 1 the wasm path is slower. The wasm ' +
        'timings call TurboJpeg.decode(jpeg, channels) per image, ' +
        'as the pipeline worker does (copy in, header, decode, copy out to a new array); native decodes into one reused buffer. Single-threaded throughout.',
    );

    const text = `${lines.join('\n')}\n`;
    mkdirSync(dirname(RESULTS), { recursive: true });
    writeFileSync(RESULTS, text);
    process.stdout.write(text);
    log(`wrote ${relative(process.cwd(), RESULTS)}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
