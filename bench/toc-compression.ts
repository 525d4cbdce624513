// TOC compression benchmark, after §5.1 and Appendix D.3 of Li et al. (SIGMOD 2019):
//   1. compression ratio (DEN bytes / format bytes, summed over all mini-batches) of
//      TOC, CSR, CVI, DVI and gzip for mini-batch sizes 50, 100, 150, 200, 250;
//   2. compression and decompression speed of TOC vs gzip at 250 rows, in MB/s of
//      DEN bytes (8 x rows x cols).
// Datasets: Fashion-MNIST (first 10,000 training images, q/255), vega's birdstrikes
// (all 10,000 rows, one-hot, as `bytelab toc build` makes it) and vega's flights-3m
// (first 250,000 rows, one-hot airports, hour, weekday, 10 distance buckets).
// gzip of the DEN bytes dominates the run time (about 50 MB/s here), so speeds are
// timed on the first --speed-batches batches, and the flights ratios are summed over
// every --flights-every-th batch (evenly spaced; 1 = all); the report says so.
// Usage: npx tsx bench/toc-compression.ts [--flights-rows N] [--flights-every K] [--speed-batches N] [--runs N]
// Writes bench/results/toc-compression.md (overwritten) and prints the same text.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync, gzipSync } from 'fflate';
import { readCsvTable } from '../src/cli/sources/csv.js';
import { readIdxPair } from '../src/cli/sources/idx.js';
import { readParquetTable } from '../src/cli/sources/parquet.js';
import { planFeatures, parseLabel, type Derivation, type RawTable } from '../src/cli/sources/tabular.js';
import { decodeLogical, decodeToc, encodeDense, encodeSparse, encodeToc, formatSizes, toBatch, type FormatSizes, type SparseRows } from '../src/toc/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results', 'toc-compression.md');
const BATCH_SIZES = [50, 100, 150, 200, 250];

const { values } = parseArgs({
  options: { 'flights-rows': { type: 'string' }, 'flights-every': { type: 'string' }, 'speed-batches': { type: 'string' }, runs: { type: 'string' } },
});
const FLIGHTS_ROWS = Number(values['flights-rows'] ?? 250_000);
const FLIGHTS_EVERY = Number(values['flights-every'] ?? 4);
const SPEED_BATCHES = Number(values['speed-batches'] ?? 100);
const RUNS = Number(values.runs ?? 3);

const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);

/** A dataset as one big sparse matrix (float32-exact values). */
interface Dataset {
  name: string;
  /** Ratios use every `every`-th batch (1 = all). */
  every: number;
  source: string;
  rows: number;
  cols: number;
  rowPtr: Uint32Array;
  colIndex: Uint32Array;
  values: Float64Array;
}

function fromRows(name: string, source: string, rows: number, cols: number, row: (r: number, c: number[], v: number[]) => void): Dataset {
  const rowPtr = new Uint32Array(rows + 1);
  const colList: number[] = [];
  const valList: number[] = [];
  const c: number[] = [];
  const v: number[] = [];
  for (let r = 0; r < rows; r++) {
    row(r, c, v);
    for (let k = 0; k < c.length; k++) {
      colList.push(c[k]!);
      valList.push(v[k]!);
    }
    rowPtr[r + 1] = colList.length;
  }
  return { name, every: 1, source, rows, cols, rowPtr, colIndex: Uint32Array.from(colList), values: Float64Array.from(valList) };
}

function tabular(name: string, source: string, table: RawTable, label: string, derivations: Derivation[]): Dataset {
  const spec = parseLabel(
    label,
    table.columns.map((c) => c.name),
  );
  const plan = planFeatures(table, derivations, new Set([spec.column]));
  return fromRows(name, source, table.rows, plan.columns, (r, c, v) => plan.rowPairs(r, c, v));
}

/** Rows [start, start + n) as SparseRows. */
function slice(d: Dataset, start: number, n: number): SparseRows {
  const from = d.rowPtr[start]!;
  const to = d.rowPtr[start + n]!;
  const rowPtr = new Uint32Array(n + 1);
  for (let r = 0; r <= n; r++) rowPtr[r] = d.rowPtr[start + r]! - from;
  return { rows: n, cols: d.cols, valueType: 'f32', rowPtr, colIndex: d.colIndex.slice(from, to), values: d.values.slice(from, to) };
}

function dense(s: SparseRows): Float32Array {
  const out = new Float32Array(s.rows * s.cols);
  for (let r = 0; r < s.rows; r++) for (let k = s.rowPtr[r]!; k < s.rowPtr[r + 1]!; k++) out[r * s.cols + s.colIndex[k]!] = s.values[k]!;
  return out;
}

function denBytes(data: Float32Array): Uint8Array {
  const out = new Float64Array(data.length);
  out.set(data);
  return new Uint8Array(out.buffer);
}

// ---------------------------------------------------------------- datasets

async function loadDatasets(): Promise<Dataset[]> {
  const fm = '/usr/share/datasets/fashion-mnist';
  const images = await readIdxPair(`${fm}/train-images-idx3-ubyte.gz`, `${fm}/train-labels-idx1-ubyte.gz`, 10_000);
  const pixel = Float32Array.from({ length: 256 }, (_, q) => q / 255);
  const fashion = fromRows('Fashion-MNIST', 'first 10,000 training images, 784 pixels, q/255', images.items.length, 784, (r, c, v) => {
    c.length = 0;
    v.length = 0;
    images.items[r]!.image.data.forEach((q, i) => {
      if (q) {
        c.push(i);
        v.push(pixel[q]!);
      }
    });
  });
  const birds = tabular(
    'birdstrikes',
    'all rows; label "Effect Amount of damage" left out; Flight Date -> weekday (7), 8 categorical columns one-hot, 4 numeric min-max',
    await readCsvTable(join(ROOT, 'node_modules/vega-datasets/data/birdstrikes.csv')),
    'Effect Amount of damage',
    [{ kind: 'weekday', column: 'Flight Date' }],
  );
  const flightsTable = await readParquetTable(join(ROOT, 'node_modules/vega-datasets/data/flights-3m.parquet'), { limit: FLIGHTS_ROWS });
  const flights = tabular(
    'flights',
    `first ${FLIGHTS_ROWS.toLocaleString('en-US')} rows; label delay>15 left out; origin, destination one-hot, hour (24), weekday (7), distance in 10 ` +
      `quantile buckets`,
    flightsTable,
    'delay>15',
    [
      { kind: 'onehot', column: 'origin' },
      { kind: 'onehot', column: 'destination' },
      { kind: 'hour', column: 'date' },
      { kind: 'weekday', column: 'date' },
      { kind: 'bucket', column: 'distance', buckets: 10 },
    ],
  );
  return [fashion, birds, { ...flights, every: FLIGHTS_EVERY }];
}

// ---------------------------------------------------------------- measurements

type Sizes = Record<keyof FormatSizes, number>;

function ratiosAt(d: Dataset, batchRows: number): Sizes {
  const sum: Sizes = { den: 0, csr: 0, cvi: 0, dvi: 0, gzip: 0, toc: 0, tocNative: 0 };
  for (let start = 0, i = 0; start < d.rows; start += batchRows, i++) {
    if (i % d.every !== 0) continue;
    const sizes = formatSizes(encodeSparse(slice(d, start, Math.min(batchRows, d.rows - start))));
    for (const k of Object.keys(sum) as Array<keyof Sizes>) sum[k] += sizes[k];
  }
  return Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, sum.den / v])) as Sizes;
}

interface Speeds {
  tocEncode: number;
  gzip: number;
  tocDecode: number;
  tocDecodeDense: number;
  gunzip: number;
}

/** MB/s of DEN bytes at 250 rows over the first SPEED_BATCHES batches, best of RUNS passes. */
function speeds(d: Dataset): Speeds {
  const batches: Array<{ data: Float32Array; den: Uint8Array; rows: number }> = [];
  for (let start = 0; start < d.rows && batches.length < SPEED_BATCHES; start += 250) {
    const data = dense(slice(d, start, Math.min(250, d.rows - start)));
    batches.push({ data, den: denBytes(data), rows: Math.min(250, d.rows - start) });
  }
  const denTotal = batches.reduce((n, b) => n + b.den.length, 0);
  const best = { tocEncode: Infinity, gzip: Infinity, tocDecode: Infinity, tocDecodeDense: Infinity, gunzip: Infinity };
  for (let run = 0; run < RUNS; run++) {
    const t = { tocEncode: 0, gzip: 0, tocDecode: 0, tocDecodeDense: 0, gunzip: 0 };
    const tocs: Uint8Array[] = [];
    const gzips: Uint8Array[] = [];
    let t0 = performance.now();
    for (const b of batches) tocs.push(encodeToc(encodeDense(b.data, b.rows, d.cols)));
    t.tocEncode = performance.now() - t0;
    t0 = performance.now();
    for (const b of batches) gzips.push(gzipSync(b.den));
    t.gzip = performance.now() - t0;
    t0 = performance.now();
    for (const bytes of tocs) toBatch(decodeToc(bytes));
    t.tocDecode = performance.now() - t0;
    t0 = performance.now();
    for (const bytes of tocs) decodeLogical(decodeToc(bytes));
    t.tocDecodeDense = performance.now() - t0;
    t0 = performance.now();
    for (const z of gzips) gunzipSync(z);
    t.gunzip = performance.now() - t0;
    for (const k of Object.keys(best) as Array<keyof Speeds>) best[k] = Math.min(best[k], t[k]);
  }
  return Object.fromEntries(Object.entries(best).map(([k, ms]) => [k, denTotal / 1e6 / (ms / 1000)])) as unknown as Speeds;
}

// ---------------------------------------------------------------- report

const fix = (x: number, digits = 1) => (x >= 100 ? x.toFixed(0) : x.toFixed(digits));

/** The closing paragraph, worded from the measured numbers. */
function comparison(r: Map<string, Sizes>, s: Map<string, Speeds>, small: Map<string, Sizes>): string {
  const f = r.get('Fashion-MNIST')!;
  const b = r.get('birdstrikes')!;
  const fl = r.get('flights')!;
  const vs = (x: Sizes) => (x.toc >= x.gzip ? `${fix(x.toc / x.gzip)}x gzip's ${fix(x.gzip)}x` : `gzip ${fix(x.gzip)}x`);
  const grows = [...r.keys()].every((k) => r.get(k)!.toc > small.get(k)!.toc);
  const speed = [...s.entries()].map(([name, x]) => {
    const enc = x.tocEncode / x.gzip;
    const dec = x.tocDecode / x.gunzip;
    const decoding =
      dec >= 1.15 ? `decodes ${fix(dec)}x faster than gunzip` : dec <= 0.87 ? `decodes ${fix(1 / dec)}x slower than gunzip` : 'decodes about as fast as gunzip';
    return `${name}: TOC encodes ${fix(enc)}x ${enc >= 1 ? 'faster' : 'slower'} than gzip and ${decoding} (${fix(x.tocDecode)} vs ${fix(x.gunzip)} MB/s)`;
  });
  return [
    'The paper (Figure 5) finds TOC ahead of every other format, gzip included, on Census, ImageNet and Kdd99 (31-43% non-zeros; "comparable to gzip" in ' +
      'its abstract),',
    'but behind gzip on MNIST (25% non-zeros), which has few repeated column:value sequences for the prefix tree; its Figure 12 has TOC compressing faster ' +
      'than gzip and decompressing faster than gzip and Snappy.',
    `We reproduce the MNIST case: on Fashion-MNIST (50% non-zeros) TOC reaches ${fix(f.toc)}x at 250 rows against gzip's ${fix(f.gzip)}x, and DVI ` +
      `(${fix(f.dvi)}x) beats it too, since 256 distinct pixel values need one-byte indexes.`,
    `On the one-hot tables TOC leads every format: birdstrikes ${fix(b.toc)}x (${vs(b)}) and flights ${fix(fl.toc)}x (${vs(fl)}).`,
    "These tables are much sparser than the paper's (1-2.4% non-zeros). gzip compresses DEN bytes, where a one-hot row is 3.3-3.9 KB of mostly zero bytes " +
      "and deflate's longest match is 258 bytes, so gzip spends a dozen or more match codes per row on zeros alone, while TOC pays only for the 5-10 " +
      "non-zeros, in a few codes into the batch's prefix tree (origin and destination, for example, recur together).",
    grows
      ? 'As in the paper, TOC gains on the other formats as the mini-batch grows (every dataset compresses better at 250 rows than at 50), since more rows ' +
        'share one dictionary.'
      : 'Unlike the paper, TOC does not gain on every dataset as the mini-batch grows from 50 to 250 rows.',
    `Speed at 250 rows, in DEN-equivalent MB/s (JavaScript here, C++ in the paper, so only the comparison carries over): ${speed.join('; ')}.`,
    'TOC decode stops at the validated in-memory batch that the GPU kernels and ops.ts run on; gunzip yields dense bytes that still need a full pass for ' +
      'any product.',
    'The timings come from a shared 2-core machine and move by tens of percent between runs; the ratios are exact.',
  ].join(' ');
}

async function main(): Promise<void> {
  const started = performance.now();
  const datasets = await loadDatasets();
  const lines: string[] = [];
  const out = (s = '') => {
    lines.push(s);
    console.log(s);
  };
  out('# TOC compression benchmark');
  out();
  out(
    `\`npx tsx bench/toc-compression.ts\` on ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'}, ` +
      `${os.cpus().length} cores. Single-threaded.`,
  );
  out(
    'Ratios are DEN bytes / format bytes summed over every mini-batch of the dataset (formats as in `formatSizes`, docs/toc.md: DEN, CSR, CVI, DVI and TOC ' +
      'store float64 values; "TOC f32" is the stored dataset frame payload; gzip is fflate `gzipSync` level 6 of the DEN bytes).',
  );
  out();
  out('| dataset | rows | columns | non-zeros | density | source |');
  out('|---|---:|---:|---:|---:|---|');
  for (const d of datasets) {
    const nnz = d.colIndex.length;
    out(
      `| ${d.name} | ${d.rows.toLocaleString('en-US')} | ${d.cols} | ${nnz.toLocaleString('en-US')} | ${((100 * nnz) / (d.rows * d.cols)).toFixed(2)}% | ` +
        `${d.source} |`,
    );
  }
  out();
  out('## Compression ratio vs DEN by mini-batch size');
  const at250 = new Map<string, Sizes>();
  const at50 = new Map<string, Sizes>();
  const speedOf = new Map<string, Speeds>();
  for (const d of datasets) {
    log(`ratios: ${d.name}`);
    out();
    out(`### ${d.name}`);
    out();
    if (d.every > 1)
      out(`Sampled: every ${d.every}th mini-batch (evenly spaced over the ${d.rows.toLocaleString('en-US')} rows), to keep gzip's time in bounds.\n`);
    out('| rows per batch | TOC | TOC f32 | CSR | CVI | DVI | gzip |');
    out('|---:|---:|---:|---:|---:|---:|---:|');
    for (const b of BATCH_SIZES) {
      const r = ratiosAt(d, b);
      if (b === 250) at250.set(d.name, r);
      if (b === 50) at50.set(d.name, r);
      out(`| ${b} | ${fix(r.toc)} | ${fix(r.tocNative)} | ${fix(r.csr)} | ${fix(r.cvi)} | ${fix(r.dvi)} | ${fix(r.gzip)} |`);
    }
  }
  out();
  out(`## Speed at 250 rows per batch (MB/s of DEN bytes; first ${SPEED_BATCHES} batches of each dataset, best of ${RUNS} passes)`);
  out();
  out(
    'TOC encode = `encodeDense` + `encodeToc` from the dense float32 batch; gzip = `gzipSync` of the DEN bytes. TOC decode = `decodeToc` + `toBatch` ' +
      '(validated, ready for the GPU kernels and `ops.ts`, which never need the dense matrix); TOC to dense = `decodeToc` + `decodeLogical`; gunzip = ' +
      '`gunzipSync` back to DEN bytes.',
  );
  out();
  out('| dataset | TOC encode | gzip | TOC decode | TOC to dense | gunzip |');
  out('|---|---:|---:|---:|---:|---:|');
  for (const d of datasets) {
    log(`speed: ${d.name}`);
    const s = speeds(d);
    speedOf.set(d.name, s);
    out(`| ${d.name} | ${fix(s.tocEncode)} | ${fix(s.gzip)} | ${fix(s.tocDecode)} | ${fix(s.tocDecodeDense)} | ${fix(s.gunzip)} |`);
  }
  out();
  out('## Where we stand vs the paper');
  out();
  out(comparison(at250, speedOf, at50));
  writeFileSync(RESULTS, `${lines.join('\n')}\n`);
  log(`wrote ${RESULTS}`);
  log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

mkdirSync(dirname(RESULTS), { recursive: true });
await main();
