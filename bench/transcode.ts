// Lossless transcoding benchmark: our TypeScript transcoder (src/jpeg/transcode.ts)
// against libjpeg-turbo's jpegtran -progressive on the same ~200 cjpeg files.
// jpegtran is timed spawned once per file from Node, in a shell loop timed as one
// process, and (when a C compiler and libjpeg headers are present) in-process
// through the same library calls jpegtran makes, so the spawn overhead shows.
// Usage: npx tsx bench/transcode.ts [--images N] [--runs R] [--seed S]
// Writes bench/results/transcode.md (overwritten) and prints the same text.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { transcodeToProgressive } from '../src/jpeg/transcode.js';
import { seededRandom } from '../src/shared/random.js';
import { positiveIntFlag } from '../src/cli/flags.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results', 'transcode.md');
const CJPEG = '/usr/bin/cjpeg';
const DJPEG = '/usr/bin/djpeg';
const JPEGTRAN = '/usr/bin/jpegtran';

const { values } = parseArgs({
  options: {
    images: { type: 'string' },
    runs: { type: 'string' },
    seed: { type: 'string' },
  },
});

const IMAGES = positiveIntFlag(values.images, 'images', 200);
const RUNS = positiveIntFlag(values.runs, 'runs', 5);
const SEED = positiveIntFlag(values.seed, 'seed', 1);
/** Files whose transcoded pixels are compared with the original's through djpeg. */
const VERIFY = Math.min(IMAGES, 40);

const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
const sig3 = (n: number): string => n.toLocaleString('en-US', { maximumSignificantDigits: 3 });
const int = (n: number): string => Math.round(n).toLocaleString('en-US');

function run(cmd: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
}

function check(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`${what} failed: ${r.error?.message ?? r.stderr}`);
  return r.stdout;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

// ---------------------------------------------------------------- inputs

interface Input {
  path: string;
  bytes: Uint8Array;
  label: string;
  progressive: boolean;
}

/**
 * A photo-like test image: smooth low-frequency shading, soft-edged blobs in
 * random colours, a patch of fine texture and sensor-like noise, so that the
 * coefficient statistics are neither flat nor white noise.
 */
function photoLike(width: number, height: number, channels: 1 | 3, rnd: () => number): Uint8Array {
  const waves = Array.from({ length: 3 * channels }, () => ({ fx: rnd() * 0.05, fy: rnd() * 0.05, ph: rnd() * 6.3, amp: 20 + rnd() * 40 }));
  const blobs = Array.from({ length: 3 + Math.floor(rnd() * 6) }, () => ({
    x: rnd() * width,
    y: rnd() * height,
    rx: 8 + rnd() * width * 0.3,
    ry: 8 + rnd() * height * 0.3,
    colour: [rnd() * 255, rnd() * 255, rnd() * 255],
  }));
  const tex = { x0: rnd() * width * 0.6, y0: rnd() * height * 0.6, w: width * (0.2 + rnd() * 0.3), h: height * (0.2 + rnd() * 0.3), f: 0.5 + rnd() * 1.5 };
  const noise = 2 + rnd() * 14;
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let cover = 0;
      let blob = blobs[0]!;
      for (const b of blobs) {
        const d = ((x - b.x) / b.rx) ** 2 + ((y - b.y) / b.ry) ** 2;
        const c = Math.min(1, Math.max(0, (1.1 - d) * 4)); // soft edge
        if (c > cover) {
          cover = c;
          blob = b;
        }
      }
      const inTex = x >= tex.x0 && x < tex.x0 + tex.w && y >= tex.y0 && y < tex.y0 + tex.h;
      for (let c = 0; c < channels; c++) {
        let v = 128;
        for (let k = c * 3; k < c * 3 + 3; k++) {
          const w = waves[k]!;
          v += w.amp * Math.sin(x * w.fx + y * w.fy + w.ph) * 0.5;
        }
        v = v * (1 - cover) + blob.colour[c]! * cover;
        if (inTex) v += 30 * Math.sin(x * tex.f) * Math.sin(y * tex.f * 0.7);
        v += (rnd() + rnd() + rnd() - 1.5) * noise;
        data[(y * width + x) * channels + c] = v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
      }
    }
  }
  return data;
}

const SUBSAMPLINGS = [
  ['4:4:4', ['-sample', '1x1,1x1,1x1']],
  ['4:2:2', ['-sample', '2x1,1x1,1x1']],
  ['4:2:0', ['-sample', '2x2,1x1,1x1']],
  ['gray', ['-grayscale']],
] as const;
const QUALITIES = [50, 75, 85, 90, 95];

function makeInputs(dir: string): Input[] {
  const rnd = seededRandom(SEED);
  const inputs: Input[] = [];
  for (let i = 0; i < IMAGES; i++) {
    const width = 64 + Math.floor(rnd() * 449);
    const height = 64 + Math.floor(rnd() * 449);
    const [sampling, sampleArgs] = SUBSAMPLINGS[i % SUBSAMPLINGS.length]!;
    const channels = sampling === 'gray' ? 1 : 3;
    const quality = QUALITIES[Math.floor(rnd() * QUALITIES.length)]!;
    const progressive = Math.floor(i / SUBSAMPLINGS.length) % 2 === 1;
    const pnm = join(dir, `src${i}.${channels === 1 ? 'pgm' : 'ppm'}`);
    const header = `${channels === 1 ? 'P5' : 'P6'}\n${width} ${height}\n255\n`;
    writeFileSync(pnm, Buffer.concat([Buffer.from(header), photoLike(width, height, channels, rnd)]));
    const path = join(dir, `in${String(i).padStart(4, '0')}.jpg`);
    const args = [
      '-quality',
      String(quality),
      ...(channels === 3 ? sampleArgs : ['-grayscale']),
      ...(progressive ? ['-progressive'] : []),
      '-outfile',
      path,
      pnm,
    ];
    check(run(CJPEG, args), `cjpeg ${args.join(' ')}`);
    rmSync(pnm);
    inputs.push({ path, bytes: new Uint8Array(readFileSync(path)), label: `${width}x${height} ${sampling} q${quality}`, progressive });
  }
  return inputs;
}

// ---------------------------------------------------------------- timing

/** Wall-clock and CPU milliseconds of one timed piece of work. */
interface Timing {
  ms: number;
  cpuMs: number;
}

const CLK_TCK = Number(run('getconf', ['CLK_TCK']).stdout.trim()) || 100;

/**
 * CPU time of this process plus all children it has waited for (Linux
 * /proc/self/stat cutime + cstime, which include grandchildren reaped by them).
 * The machine is shared, so wall time alone is noisy: CPU time is the steadier
 * measure of the work each contestant does.
 */
function cpuNowMs(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK; // fields 16 and 17 of stat(5)
  } catch {
    children = NaN;
  }
  return (own.user + own.system) / 1000 + children;
}

function timed(work: () => void): Timing {
  const c0 = cpuNowMs();
  const t0 = performance.now();
  work();
  return { ms: performance.now() - t0, cpuMs: cpuNowMs() - c0 };
}

// ---------------------------------------------------------------- contestants

const EOI = new Uint8Array([0xff, 0xd9]);

/** Transcodes every input once; returns the total output bytes (chunks + EOI). */
function oursOnce(inputs: readonly Input[]): number {
  let bytes = 0;
  for (const input of inputs) {
    for (const chunk of transcodeToProgressive(input.bytes).chunks) bytes += chunk.length;
    bytes += EOI.length;
  }
  return bytes;
}

/** jpegtran spawned from Node, one process per file, output to a file as a user would. */
function spawnedOnce(inputs: readonly Input[], outDir: string): void {
  for (const [i, input] of inputs.entries()) {
    check(run(JPEGTRAN, ['-progressive', '-copy', 'none', '-outfile', join(outDir, `out${i}.jpg`), input.path]), 'jpegtran');
  }
}

/** One sh process running a loop over a list of files, timed from outside as one spawn. */
function shellLoopOnce(listFile: string, command: string): void {
  const script = `while IFS= read -r f; do ${command}; done < '${listFile}'`;
  check(run('sh', ['-c', script]), `sh -c ${script}`);
}

// In-process libjpeg: exactly jpegtran's path for "-progressive -copy none"
// (jpeg_read_coefficients, jpeg_copy_critical_parameters, jpeg_simple_progression,
// jpeg_write_coefficients), from memory to memory. Written to a temporary file
// and compiled at run time so the bench stays one file.
const NATIVE_C = String.raw`
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <jpeglib.h>

static long long ns_of(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
static long long now_ns(void) { return ns_of(CLOCK_MONOTONIC); }
static long long cpu_ns(void) { return ns_of(CLOCK_PROCESS_CPUTIME_ID); }

int main(int argc, char **argv) {
  int runs = atoi(argv[1]), n = argc - 2;
  unsigned char **data = malloc(n * sizeof *data);
  unsigned long *size = malloc(n * sizeof *size);
  for (int i = 0; i < n; i++) {
    FILE *f = fopen(argv[i + 2], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    size[i] = ftell(f);
    fseek(f, 0, SEEK_SET);
    data[i] = malloc(size[i]);
    if (fread(data[i], 1, size[i], f) != size[i]) return 3;
    fclose(f);
  }
  for (int r = 0; r < runs; r++) {
    unsigned long total = 0;
    long long t0 = now_ns(), c0 = cpu_ns();
    for (int i = 0; i < n; i++) {
      struct jpeg_decompress_struct src;
      struct jpeg_compress_struct dst;
      struct jpeg_error_mgr e1, e2;
      src.err = jpeg_std_error(&e1);
      jpeg_create_decompress(&src);
      jpeg_mem_src(&src, data[i], size[i]);
      jpeg_read_header(&src, TRUE);
      jvirt_barray_ptr *coefs = jpeg_read_coefficients(&src);
      dst.err = jpeg_std_error(&e2);
      jpeg_create_compress(&dst);
      unsigned char *out = NULL;
      unsigned long outsize = 0;
      jpeg_mem_dest(&dst, &out, &outsize);
      jpeg_copy_critical_parameters(&src, &dst);
      jpeg_simple_progression(&dst);
      jpeg_write_coefficients(&dst, coefs);
      jpeg_finish_compress(&dst);
      jpeg_destroy_compress(&dst);
      jpeg_finish_decompress(&src);
      jpeg_destroy_decompress(&src);
      total += outsize;
      free(out);
    }
    printf("%lld %lld %lu\n", now_ns() - t0, cpu_ns() - c0, total);
  }
  return 0;
}
`;

function buildNative(dir: string): string | { skip: string } {
  if (run('sh', ['-c', 'command -v cc']).status !== 0) return { skip: 'no C compiler (cc)' };
  if (!existsSync('/usr/include/jpeglib.h')) return { skip: 'no libjpeg headers (/usr/include/jpeglib.h; Debian: libjpeg-dev)' };
  const source = join(dir, 'transcode.c');
  const binary = join(dir, 'transcode-native');
  writeFileSync(source, NATIVE_C);
  const r = run('cc', ['-O2', source, '-ljpeg', '-o', binary]);
  return r.status === 0 ? binary : { skip: `cc failed: ${r.stderr.trim().split('\n')[0]}` };
}

/** Runs the in-process transcoder twice over all files and reports the second pass (the first warms caches). */
function nativeOnce(binary: string, inputs: readonly Input[]): Timing & { bytes: number } {
  const out = check(run(binary, ['2', ...inputs.map((i) => i.path)]), 'native transcoder');
  const [ns, cpuNs, bytes] = out.trim().split('\n')[1]!.split(' ').map(Number) as [number, number, number];
  return { ms: ns / 1e6, cpuMs: cpuNs / 1e6, bytes };
}

// ---------------------------------------------------------------- checks

/** Pixels of our transcode equal the original's (djpeg), for the first VERIFY files. */
function verify(inputs: readonly Input[], dir: string): number {
  let same = 0;
  for (const input of inputs.slice(0, VERIFY)) {
    const ours = join(dir, 'verify.jpg');
    writeFileSync(ours, Buffer.concat([...transcodeToProgressive(input.bytes).chunks, EOI]));
    const a = spawnSync(DJPEG, ['-pnm', input.path], { maxBuffer: 64 << 20 });
    const b = spawnSync(DJPEG, ['-pnm', ours], { maxBuffer: 64 << 20 });
    if (a.status === 0 && b.status === 0 && b.stderr.length === 0 && Buffer.compare(a.stdout, b.stdout) === 0) same++;
    else log(`pixels differ after transcoding ${input.path} (${input.label})`);
  }
  return same;
}

function jpegtranBytes(inputs: readonly Input[], outDir: string): number[] {
  return inputs.map((_, i) => readFileSync(join(outDir, `out${i}.jpg`)).length);
}

// ---------------------------------------------------------------- main

function main(): void {
  for (const tool of [CJPEG, DJPEG, JPEGTRAN]) {
    if (!existsSync(tool)) throw new Error(`${tool} missing: apt-get install libjpeg-turbo-progs`);
  }
  const started = performance.now();
  const tmp = mkdtempSync(join(os.tmpdir(), 'bytelab-transcode-bench-'));
  try {
    const inDir = join(tmp, 'in');
    const outDir = join(tmp, 'out');
    mkdirSync(inDir);
    mkdirSync(outDir);
    log(`making ${IMAGES} JPEGs with cjpeg`);
    const inputs = makeInputs(inDir);
    const listFile = join(tmp, 'list.txt');
    writeFileSync(listFile, `${inputs.map((i) => i.path).join('\n')}\n`);
    const tiny = join(tmp, 'tiny.jpg');
    writeFileSync(join(tmp, 'tiny.pgm'), Buffer.concat([Buffer.from('P5\n1 1\n255\n'), Buffer.from([128])]));
    check(run(CJPEG, ['-outfile', tiny, join(tmp, 'tiny.pgm')]), 'cjpeg tiny');
    const tinyList = join(tmp, 'tiny-list.txt');
    writeFileSync(tinyList, `${tiny}\n`.repeat(IMAGES));

    log(`verifying pixels on ${VERIFY} files`);
    const verified = verify(inputs, tmp);
    const native = buildNative(tmp);

    // Warm-up round (JIT, page cache), then RUNS rounds, every contestant once per
    // round in turn so they all see the same state of this (shared) machine.
    log('warm-up');
    const ourBytes = oursOnce(inputs);
    spawnedOnce(inputs, outDir);
    const theirBytes = jpegtranBytes(inputs, outDir);
    const nativeBytes = typeof native === 'string' ? nativeOnce(native, inputs).bytes : undefined;
    const jpegtranLoop = `${JPEGTRAN} -progressive -copy none -outfile /dev/null "$f"`;
    const t = {
      ours: [] as Timing[],
      spawned: [] as Timing[],
      loop: [] as Timing[],
      native: [] as Timing[],
      tinyLoop: [] as Timing[],
      trueLoop: [] as Timing[],
    };
    for (let r = 0; r < RUNS; r++) {
      log(`round ${r + 1}/${RUNS}`);
      t.ours.push(timed(() => oursOnce(inputs)));
      t.spawned.push(timed(() => spawnedOnce(inputs, outDir)));
      t.loop.push(timed(() => shellLoopOnce(listFile, jpegtranLoop)));
      if (typeof native === 'string') t.native.push(nativeOnce(native, inputs));
      t.tinyLoop.push(timed(() => shellLoopOnce(tinyList, jpegtranLoop)));
      t.trueLoop.push(timed(() => shellLoopOnce(tinyList, '/bin/true "$f"')));
    }
    const med = (xs: Timing[]): Timing => ({ ms: median(xs.map((x) => x.ms)), cpuMs: median(xs.map((x) => x.cpuMs)) });

    // ---------------------------------------------------------------- report
    const n = inputs.length;
    const perImage = (ms: number): string => (ms / n).toFixed(2);
    const ips = (ms: number): number => (n / ms) * 1000;
    const ours = med(t.ours);
    /** Each round's wall-time ratio (this / ours) as min–max over the rounds. */
    const roundRange = (xs: Timing[]): string => {
      const rs = xs.map((x, r) => x.ms / t.ours[r]!.ms);
      return `${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)}`;
    };
    const rows: [string, Timing | undefined, string, Timing[]][] = [
      ['ours: transcodeToProgressive (TypeScript, Node, in-process, memory to memory)', ours, '', t.ours],
      ['jpegtran -progressive, spawned per file from Node (spawnSync)', med(t.spawned), '', t.spawned],
      ['jpegtran -progressive, per file inside one timed `sh` loop', med(t.loop), '', t.loop],
      [
        "libjpeg in-process (jpegtran's calls, C, memory to memory)",
        t.native.length ? med(t.native) : undefined,
        typeof native === 'string' ? '' : native.skip,
        t.native,
      ],
    ];
    const spawnTiny = med(t.tinyLoop);
    const spawnTrue = med(t.trueLoop);
    const loop = med(t.loop);
    const natMs = t.native.length ? med(t.native).ms : undefined;
    const inBytes = inputs.reduce((s, i) => s + i.bytes.length, 0);
    const jtBytes = theirBytes.reduce((a, b) => a + b, 0);
    const byKind = new Map<string, { n: number; input: number; ours: number; theirs: number }>();
    inputs.forEach((input, i) => {
      const kind = `${input.label.split(' ')[1]} ${input.progressive ? 'progressive' : 'baseline'}`;
      const k = byKind.get(kind) ?? { n: 0, input: 0, ours: 0, theirs: 0 };
      k.n++;
      k.input += input.bytes.length;
      k.ours += transcodeToProgressive(input.bytes).chunks.reduce((s, c) => s + c.length, 2);
      k.theirs += theirBytes[i]!;
      byKind.set(kind, k);
    });
    const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
    const jtVersion = (run(JPEGTRAN, ['-version']).stderr || '').trim().split('\n')[0];
    const lines = [
      '# Lossless transcoding benchmark',
      '',
      `- date: ${new Date().toISOString()}`,
      `- machine: ${cpu}, ${os.cpus().length} cores, load average at start ${os.loadavg()[0]!.toFixed(2)} (a shared machine: other work was running)`,
      `- node: ${process.version}; jpegtran: ${JPEGTRAN}, ${jtVersion}`,
      `- inputs: ${n} JPEGs made by cjpeg from synthetic photo-like images (seed ${SEED}): sizes 64..512 x 64..512, quality ${QUALITIES.join('/')}, ` +
        `${SUBSAMPLINGS.map(([s]) => s).join(' / ')} in turn, baseline and progressive (optimal tables) alternating; ${int(inBytes)} bytes in all`,
      `- check: ${verified}/${VERIFY} transcoded files decode (djpeg) to pixels identical to the originals'; the unit tests check the entropy-coded bits ` +
        `against jpegtran -progressive`,
      `- timing: median of ${RUNS} rounds after a warm-up round; each round runs every contestant once over all ${n} files, in turn`,
      `- whole bench: ${((performance.now() - started) / 1000).toFixed(1)} s`,
      '',
      '## Throughput',
      '',
      '| transcoder | images/s (wall) | ms / image (wall) | CPU ms / image | ours ÷ this, speed (wall; per-round range) | ours ÷ this, speed (CPU) |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...rows.map(([name, x, skip, series]) =>
        x === undefined
          ? `| ${name} | — | — | — | skipped: ${skip} | — |`
          : `| ${name} | ${sig3(ips(x.ms))} | ${perImage(x.ms)} | ${perImage(x.cpuMs)} | ${(x.ms / ours.ms).toFixed(2)}× (${roundRange(series)}) | ` +
            `${(x.cpuMs / ours.cpuMs).toFixed(2)}× |`,
      ),
      '',
      'A speed ratio > 1 means ours is faster. CPU time counts every process involved (Node, sh, jpegtran), so it shows the work done independently of what ' +
        'else ran on the machine.',
      '',
      `Spawn overhead, from the same \`sh\` loop: starting jpegtran on a 1x1 JPEG costs ${perImage(spawnTiny.ms)} ms wall (${perImage(spawnTiny.cpuMs)} ms ` +
        `CPU) per process; fork+exec of a program that does nothing (/bin/true) costs ${perImage(spawnTrue.ms)} ms wall (${perImage(spawnTrue.cpuMs)} ms ` +
        `CPU); spawning from Node instead of sh adds ${((med(t.spawned).ms - loop.ms) / n).toFixed(2)} ms wall per file.`,
      ...(natMs !== undefined
        ? [
            `jpegtran's own work per file, without any process start: ${(natMs / n).toFixed(2)} ms (in-process row); the shell loop minus the 1x1 startup ` +
              `cost gives ${((loop.ms - spawnTiny.ms) / n).toFixed(2)} ms.`,
          ]
        : []),
      '',
      '## Output size',
      '',
      `Ours (chunks + EOI) vs jpegtran -progressive -copy none of the same files; both use the same scan script and optimal Huffman tables per scan, so ` +
        `only header layout differs (we group a scan's tables in one DHT and write no restart or APPn segments beyond JFIF).`,
      '',
      '| inputs | files | ours, bytes | jpegtran, bytes | ours / jpegtran | ours / input |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...[...byKind.entries()]
        .sort()
        .map(([kind, k]) => `| ${kind} | ${k.n} | ${int(k.ours)} | ${int(k.theirs)} | ${(k.ours / k.theirs).toFixed(4)} | ${(k.ours / k.input).toFixed(4)} |`),
      `| all | ${n} | ${int(ourBytes)} | ${int(jtBytes)} | ${(ourBytes / jtBytes).toFixed(4)} | ${(ourBytes / inBytes).toFixed(4)} |`,
      ...(nativeBytes !== undefined ? ['', `In-process libjpeg wrote ${int(nativeBytes)} bytes (ours / that: ${(ourBytes / nativeBytes).toFixed(4)}).`] : []),
      '',
    ];
    const text = lines.join('\n');
    mkdirSync(dirname(RESULTS), { recursive: true });
    writeFileSync(RESULTS, text);
    process.stdout.write(text);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
