// `bytelab toc build | inspect`: TOC datasets (docs/toc.md, "Dataset files").
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildPrefixTree, formatSizes, toBatch, type FormatSizes, type SparseRows, type TocLogical } from '../toc/index.js';
import { DEFAULT_RUNS_K, tocRunsLayout } from '../toc/gpu-runs.js';
import {
  chooseEncoding,
  compareEncodings,
  concatRows,
  orderByCount,
  renameRow,
  sliceRows,
  sparseFromLogical,
  type ColumnOrder,
  type EncodingCandidate,
} from '../toc/choose.js';
import {
  DEFAULT_BATCHES_PER_RECORD,
  MINI_BATCH_ROWS,
  readTocRecord,
  TOC_DATASET_FORMAT,
  TOC_DATASET_VERSION,
  TocSplitWriter,
  validateTocManifest,
  type TocManifest,
  type TocSplitName,
} from '../toc/dataset.js';
import { readCsvTable } from './sources/csv.js';
import { readIdxPair } from './sources/idx.js';
import { readParquetTable } from './sources/parquet.js';
import { seededRandom } from '../shared/random.js';
import { computeLabels, parseLabel, planFeatures, rowHash, rowOrder, type Derivation, type RawTable } from './sources/tabular.js';
import { positiveIntFlag } from './flags.js';

const FASHION_MNIST_CLASSES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];
const PROGRESS_ROWS = 500_000;
/** inspect measures format sizes on a sample when a dataset has more batches than this. */
const AUTO_SAMPLE_ABOVE = 2000;
const AUTO_SAMPLE = 1000;

export async function tocCommand(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  switch (verb) {
    case 'build':
      return build(rest);
    case 'inspect':
      return inspect(rest);
    default:
      throw new Error(`unknown verb "${verb ?? ''}" (build, inspect)`);
  }
}

/** Repeatable, comma-separated list flags: --onehot a,b --onehot c. */
function list(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const int = (n: number) => n.toLocaleString('en-US');

// ------------------------------------------------------------------ build

interface BuildContext {
  out: string;
  batchRows: number;
  batchesPerRecord: number;
  classes: number;
  columns: number;
}

/** Writers for the splits; each record file is written as soon as it is full. */
function splitWriters(ctx: BuildContext, withTest: boolean): { train: TocSplitWriter; test?: TocSplitWriter } {
  const make = (split: TocSplitName) =>
    new TocSplitWriter({
      split,
      columns: ctx.columns,
      classes: ctx.classes,
      batchRows: ctx.batchRows,
      batchesPerRecord: ctx.batchesPerRecord,
      onRecord: (file, bytes) => writeFileSync(join(ctx.out, file), bytes),
    });
  return withTest ? { train: make('train'), test: make('test') } : { train: make('train') };
}

async function build(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      idx: { type: 'string' },
      labels: { type: 'string' },
      'test-idx': { type: 'string' },
      'test-labels': { type: 'string' },
      csv: { type: 'string' },
      parquet: { type: 'string' },
      label: { type: 'string' },
      drop: { type: 'string', multiple: true },
      onehot: { type: 'string', multiple: true },
      numeric: { type: 'string', multiple: true },
      hour: { type: 'string', multiple: true },
      weekday: { type: 'string', multiple: true },
      bucket: { type: 'string', multiple: true },
      'test-fraction': { type: 'string' },
      limit: { type: 'string' },
      'test-limit': { type: 'string' },
      'batch-size': { type: 'string' },
      'batches-per-record': { type: 'string' },
      shuffle: { type: 'string' },
      'column-order': { type: 'string' },
      name: { type: 'string' },
      description: { type: 'string' },
      attribution: { type: 'string' },
      out: { type: 'string' },
    },
  });
  if (!values.out) throw new Error('--out DIR is required');
  const sources = [values.idx, values.csv, values.parquet].filter(Boolean).length;
  if (sources !== 1) throw new Error('give exactly one of --idx IMAGES --labels LABELS, --csv FILE --label COLUMN, --parquet FILE --label EXPR');
  let seed: number | undefined;
  if (values.shuffle !== undefined) {
    seed = Number(values.shuffle);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new Error(`--shuffle must be an integer seed in [0, 2^32), got "${values.shuffle}"`);
  }
  const columnOrder = values['column-order'] ?? 'source';
  if (columnOrder !== 'source' && columnOrder !== 'frequency' && columnOrder !== 'auto') {
    throw new Error(`--column-order must be source, frequency or auto, got "${columnOrder}"`);
  }
  const opts: BuildOptions = {
    out: values.out,
    columnOrder: columnOrder as ColumnOrder | 'auto',
    batchRows: batchSizeFlag(values['batch-size']),
    batchesPerRecord: positiveIntFlag(values['batches-per-record'], 'batches-per-record', DEFAULT_BATCHES_PER_RECORD),
    limit: values.limit === undefined ? Infinity : positiveIntFlag(values.limit, 'limit', 1),
    seed,
  };
  await mkdir(values.out, { recursive: true });
  // Records of an earlier build in the same folder would otherwise linger.
  for (const f of await readdir(values.out)) if (/^(train|test)-\d{5}\.tocr$/.test(f)) await rm(join(values.out, f));

  const started = performance.now();
  const built = values.idx ? await buildFromIdx(values, opts) : await buildFromTable(values, opts);
  const manifest: TocManifest = {
    format: TOC_DATASET_FORMAT,
    version: TOC_DATASET_VERSION,
    name: values.name ?? basename(values.out),
    ...((values.description ?? built.description) ? { description: values.description ?? built.description } : {}),
    ...((values.attribution ?? built.attribution) ? { attribution: values.attribution ?? built.attribution } : {}),
    classes: built.classes,
    columns: built.featureNames.length,
    featureNames: built.featureNames,
    rows: { train: built.writers.train.rows, ...(built.writers.test ? { test: built.writers.test.rows } : {}) },
    splits: { train: built.writers.train.finish(), ...(built.writers.test ? { test: built.writers.test.finish() } : {}) },
  };
  validateTocManifest(manifest, 'built manifest');
  await writeFile(join(values.out, 'manifest.json'), `${JSON.stringify(manifest, null, 1)}\n`);
  const counts = (['train', 'test'] as const)
    .filter((s) => manifest.splits[s])
    .map((s) => `${s}: ${manifest.rows[s]} rows in ${manifest.splits[s]!.records.length} records`);
  console.log(
    `wrote ${values.out}: ${counts.join(', ')}; ${manifest.columns} columns, ${manifest.classes.length} classes ` +
      `(${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
  return 0;
}

type BuildValues = Partial<Record<string, string | string[] | boolean>>;
/** `--batch-size N|auto`. */
function batchSizeFlag(value: string | undefined): number | 'auto' {
  if (value === 'auto') return 'auto';
  if (value !== undefined && !/^\d+$/.test(value)) throw new Error(`--batch-size must be a positive integer or auto, got "${value}"`);
  return positiveIntFlag(value, 'batch-size', MINI_BATCH_ROWS);
}

/** `auto`: chosen by the kernel cost model on the first train rows (chooseBuildEncoding). */
type BuildOptions = {
  out: string;
  batchRows: number | 'auto';
  batchesPerRecord: number;
  limit: number;
  seed: number | undefined;
  columnOrder: ColumnOrder | 'auto';
};
type ResolvedOptions = BuildOptions & { batchRows: number; columnOrder: ColumnOrder };

/**
 * Settles `--batch-size auto` and `--column-order auto` as `toc inspect` would advise (src/toc/choose.ts): the first
 * ENCODING_SAMPLE_ROWS train rows in the order they will be written, re-encoded at each candidate batch size and column
 * order, the least predicted runs / CSR time at k = DEFAULT_RUNS_K (the TOC MLP's first layer). A flag given a value
 * is kept and the other is chosen with it. Prints the comparison; `choiceNote` is a sentence for the manifest's description.
 */
function chooseBuildEncoding(
  opts: BuildOptions,
  columns: number,
  trainRows: (visit: (cols: ArrayLike<number>, vals: ArrayLike<number>, n: number) => boolean) => void,
): ResolvedOptions & { choiceNote?: string } {
  const { batchRows, columnOrder } = opts;
  if (batchRows !== 'auto' && columnOrder !== 'auto') return { ...opts, batchRows, columnOrder };
  const rowPtr = [0];
  const colIndex: number[] = [];
  const values: number[] = [];
  trainRows((cols, vals, n) => {
    // As the split writer stores them: zeros left out, values as float32.
    for (let i = 0; i < n; i++) {
      if (vals[i] === 0) continue;
      colIndex.push(cols[i]!);
      values.push(Math.fround(vals[i]!));
    }
    rowPtr.push(colIndex.length);
    return rowPtr.length <= ENCODING_SAMPLE_ROWS;
  });
  const rows = rowPtr.length - 1;
  const sample: SparseRows = {
    rows,
    cols: columns,
    valueType: 'f32',
    rowPtr: Uint32Array.from(rowPtr),
    colIndex: Uint32Array.from(colIndex),
    values: Float64Array.from(values),
  };
  const fitting = ENCODING_BATCH_ROWS.filter((b) => b <= rows);
  const sizes = batchRows !== 'auto' ? [batchRows] : fitting.length ? fitting : [Math.max(1, rows)];
  const orders: ColumnOrder[] = columnOrder !== 'auto' ? [columnOrder] : ['source', 'frequency'];
  const candidates = compareEncodings(sample, sizes, orders, DEFAULT_RUNS_K);
  const chosen = chooseEncoding(candidates);
  if (!chosen) {
    // Not one whole batch of any candidate: nothing to compare.
    const fallback = { batchRows: batchRows === 'auto' ? MINI_BATCH_ROWS : batchRows, columnOrder: columnOrder === 'auto' ? 'source' : columnOrder };
    const choiceNote = `too few train rows (${rows}) to choose an encoding: batch size ${fallback.batchRows}, ${fallback.columnOrder} column order`;
    log(choiceNote);
    return { ...opts, ...fallback, choiceNote };
  }
  log(`choosing the encoding on the first ${int(rows)} train rows:`);
  printEncodings({ sampleRows: rows, k: DEFAULT_RUNS_K, candidates, chosen }, log);
  const choiceNote =
    `batch size ${chosen.batchRows} and ${chosen.columnOrder} column order chosen by the kernel cost model ` +
    `(predicted runs / CSR time ${chosen.costRatio.toFixed(3)} at k = ${DEFAULT_RUNS_K}, first ${rows} train rows)`;
  return { ...opts, batchRows: chosen.batchRows, columnOrder: chosen.columnOrder, choiceNote };
}

/**
 * The column order of a build: undefined for source order; for frequency order (docs/toc.md, "Encoding for reuse") the
 * new index of each column, by descending non-zero count over the rows `eachRow` visits (all rows that will be written),
 * and the feature names in that order.
 */
function columnRenaming(
  order: ColumnOrder,
  names: string[],
  eachRow: (visit: (cols: ArrayLike<number>, n: number) => void) => void,
): { newIndex: Uint32Array; names: string[] } | undefined {
  if (order === 'source') return undefined;
  const count = new Uint32Array(names.length);
  eachRow((cols, n) => {
    for (let i = 0; i < n; i++) count[cols[i]!]!++;
  });
  const newIndex = orderByCount(count);
  const renamed = new Array<string>(names.length);
  names.forEach((name, c) => (renamed[newIndex[c]!] = name));
  return { newIndex, names: renamed };
}
interface Built {
  classes: string[];
  featureNames: string[];
  writers: { train: TocSplitWriter; test?: TocSplitWriter };
  description?: string;
  attribution?: string;
}

/** Images as rows of width x height pixels, each q / 255 as float32. */
async function buildFromIdx(values: BuildValues, opts: BuildOptions): Promise<Built> {
  const idx = values.idx as string;
  const labelsPath = values.labels as string | undefined;
  if (!labelsPath) throw new Error('--idx needs --labels');
  const train = await readIdxPair(idx, labelsPath, opts.limit);
  const splits: Partial<Record<TocSplitName, typeof train.items>> = { train: train.items };
  if (values['test-idx']) {
    if (!values['test-labels']) throw new Error('--test-idx needs --test-labels');
    const testLimit = values['test-limit'] === undefined ? Infinity : positiveIntFlag(values['test-limit'] as string, 'test-limit', 1);
    const test = await readIdxPair(values['test-idx'] as string, values['test-labels'] as string, testLimit);
    if (test.width !== train.width || test.height !== train.height) throw new Error('test images differ in size from the training images');
    splits.test = test.items;
  }
  const fashion = /fashion/i.test(idx);
  let labelMax = 0;
  for (const items of Object.values(splits)) for (const it of items) labelMax = Math.max(labelMax, it.label);
  const classes = fashion && labelMax < 10 ? FASHION_MNIST_CLASSES : Array.from({ length: labelMax + 1 }, (_, i) => String(i));
  const { width, height } = train;
  const columns = width * height;
  const sourceNames = Array.from({ length: columns }, (_, i) => `px_${Math.floor(i / width)}_${i % width}`);
  const pixel = Float32Array.from({ length: 256 }, (_, q) => q / 255);
  const cols = new Uint32Array(columns);
  const vals = new Float32Array(columns);
  /** The image's non-zero pixels into cols / vals; returns how many. */
  const pairs = (data: ArrayLike<number>): number => {
    let n = 0;
    for (let c = 0; c < columns; c++) {
      const q = data[c]!;
      if (q !== 0) {
        cols[n] = c;
        vals[n++] = pixel[q]!;
      }
    }
    return n;
  };
  const random = opts.seed === undefined ? undefined : seededRandom(opts.seed);
  const orders = { train: rowOrder(splits.train!.length, opts.seed, random), test: splits.test && rowOrder(splits.test.length, opts.seed, random) };
  const chosen = chooseBuildEncoding(opts, columns, (visit) => {
    for (const i of orders.train) if (!visit(cols, vals, pairs(splits.train![i]!.image.data))) return;
  });
  const renaming = columnRenaming(chosen.columnOrder, sourceNames, (visit) => {
    const nonZero = new Uint32Array(columns);
    for (const items of Object.values(splits)) {
      for (const { image } of items) {
        let n = 0;
        for (let c = 0; c < columns; c++) if (image.data[c] !== 0) nonZero[n++] = c;
        visit(nonZero, n);
      }
    }
  });
  const featureNames = renaming?.names ?? sourceNames;
  const writers = splitWriters({ ...chosen, classes: classes.length, columns }, Boolean(splits.test));
  for (const split of ['train', 'test'] as const) {
    const items = splits[split];
    const order = orders[split];
    if (!items || !order) continue;
    for (const i of order) {
      const { image, label } = items[i]!;
      const n = pairs(image.data);
      if (renaming) renameRow(renaming.newIndex, cols, vals, n);
      writers[split]!.addRow(cols, vals, n, label);
    }
  }
  const order = opts.seed === undefined ? 'file order' : `shuffled with seed ${opts.seed}`;
  return {
    classes,
    featureNames,
    writers,
    description:
      `${basename(idx)}: ${width}x${height} pixels as ${columns} columns, value q/255 (float32), rows in ${order}` +
      (renaming ? ', columns in frequency order (descending non-zero count)' : '') +
      (chosen.choiceNote ? `; ${chosen.choiceNote}` : ''),
    ...(fashion ? { attribution: 'Fashion-MNIST, Zalando Research (Xiao, Rasul, Vollgraf 2017), MIT licence' } : {}),
  };
}

/** CSV or Parquet: label, derived features, hash-based test split, streamed into batches. */
async function buildFromTable(values: BuildValues, opts: BuildOptions): Promise<Built> {
  const path = (values.csv ?? values.parquet) as string;
  const labelText = values.label as string | undefined;
  if (!labelText) throw new Error(`${values.csv ? '--csv' : '--parquet'} needs --label`);
  const drop = list(values.drop as string[] | undefined);
  const derivations: Derivation[] = [
    ...list(values.onehot as string[] | undefined).map((column): Derivation => ({ kind: 'onehot', column })),
    ...list(values.numeric as string[] | undefined).map((column): Derivation => ({ kind: 'minmax', column })),
    ...list(values.hour as string[] | undefined).map((column): Derivation => ({ kind: 'hour', column })),
    ...list(values.weekday as string[] | undefined).map((column): Derivation => ({ kind: 'weekday', column })),
    ...list(values.bucket as string[] | undefined).map((spec): Derivation => {
      const m = /^(.+):(\d+)$/.exec(spec);
      if (!m || Number(m[2]) < 2) throw new Error(`--bucket must look like COLUMN:K with K >= 2, got "${spec}"`);
      return { kind: 'bucket', column: m[1]!, buckets: Number(m[2]) };
    }),
  ];
  const testFraction = values['test-fraction'] === undefined ? 0.1 : Number(values['test-fraction']);
  if (!(testFraction >= 0 && testFraction < 1)) throw new Error(`--test-fraction must be in [0, 1), got "${values['test-fraction']}"`);

  const started = performance.now();
  let table: RawTable;
  if (values.csv) {
    table = await readCsvTable(path, { limit: opts.limit, drop });
  } else {
    let reported = 0;
    table = await readParquetTable(path, {
      drop,
      limit: opts.limit,
      onProgress: (read, total) => {
        if (read - reported >= PROGRESS_ROWS || read === total) {
          reported = read;
          log(`read ${read} of ${total} rows (${((performance.now() - started) / 1000).toFixed(1)} s)`);
        }
      },
    });
  }
  const names = table.columns.map((c) => c.name);
  const label = parseLabel(labelText, names);
  for (const d of derivations) {
    if (!names.includes(d.column)) throw new Error(`--${d.kind === 'minmax' ? 'numeric' : d.kind} ${d.column}: no such column (columns: ${names.join(', ')})`);
    if (d.column === label.column) throw new Error(`column "${d.column}" is the label's column; deriving features from it would leak the label`);
  }
  const plan = planFeatures(table, derivations, new Set([label.column]));
  const labels = computeLabels(table, label);
  if (labels.classes.length > 0x10000) throw new Error(`the label has ${labels.classes.length} distinct values; at most 65536 classes fit a u16 label`);
  if (labels.classes.length === 0) throw new Error(`the label column "${label.column}" has no values`);

  const threshold = testFraction * 2 ** 32;
  const inTest = (r: number) => testFraction > 0 && rowHash(table, r) < threshold;
  const order = rowOrder(table.rows, opts.seed);
  const cols: number[] = [];
  const vals: number[] = [];
  const chosen = chooseBuildEncoding(opts, plan.columns, (visit) => {
    for (const r of order) {
      if (labels.of[r]! < 0 || inTest(r)) continue;
      const n = plan.rowPairs(r, cols, vals);
      if (!visit(cols, vals, n)) return;
    }
  });
  const writers = splitWriters({ ...chosen, classes: labels.classes.length, columns: plan.columns }, testFraction > 0);
  // Frequency order counts over the rows that will be written (those with a label), both splits.
  const renaming = columnRenaming(chosen.columnOrder, plan.names, (visit) => {
    for (let r = 0; r < table.rows; r++) if (labels.of[r]! >= 0) visit(cols, plan.rowPairs(r, cols, vals));
  });
  let dropped = 0;
  for (let i = 0; i < order.length; i++) {
    const r = order[i]!;
    const y = labels.of[r]!;
    if (y < 0) dropped++;
    else {
      const n = plan.rowPairs(r, cols, vals);
      if (renaming) renameRow(renaming.newIndex, cols, vals, n);
      const split = writers.test && inTest(r) ? writers.test : writers.train;
      split.addRow(cols, vals, n, y);
    }
    if ((i + 1) % PROGRESS_ROWS === 0) log(`encoded ${i + 1} of ${order.length} rows (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
  if (dropped) log(`dropped ${dropped} rows without a label`);
  for (const s of plan.summary) log(`feature ${s}`);

  const file = basename(path);
  const description = [
    `${file}, ${table.rows} rows read${Number.isFinite(opts.limit) ? ` (--limit ${opts.limit})` : ''}`,
    `label ${label.kind === 'compare' ? label.text : label.column} (${dropped} rows without a label dropped)`,
    `features: ${plan.summary.join('; ')}`,
    drop.length ? `dropped columns: ${drop.join(', ')}` : '',
    testFraction > 0 ? `test split: rows whose FNV-1a hash / 2^32 < ${testFraction}` : 'no test split',
    opts.seed === undefined ? 'rows in file order' : `rows shuffled (Fisher-Yates, mulberry32 seed ${opts.seed})`,
    renaming ? 'columns in frequency order (descending non-zero count)' : '',
    chosen.choiceNote ?? '',
  ].filter(Boolean);
  const attribution = /birdstrikes/i.test(file)
    ? 'FAA Wildlife Strike Database, via vega-datasets (U.S. Government dataset)'
    : /flights/i.test(file)
      ? 'U.S. Bureau of Transportation Statistics on-time performance data, via vega-datasets'
      : undefined;
  return {
    classes: labels.classes,
    featureNames: renaming?.names ?? plan.names,
    writers,
    description: description.join('. '),
    ...(attribution ? { attribution } : {}),
  };
}

// ------------------------------------------------------------------ inspect

export interface TocInspection {
  name: string;
  rows: { total: number; train: number; test: number };
  columns: number;
  classes: number;
  records: number;
  batches: number;
  /** Bytes of all record files. */
  fileBytes: number;
  nonZeros: number;
  density: number;
  /** Sum over batches of |I| and |D|. */
  firstLayerPairs: number;
  codes: number;
  /** Batches whose sizes were measured with formatSizes: all, or a stated sample. */
  measured: { sampled: boolean; batches: number; rows: number };
  /** Sums of formatSizes over the measured batches (tocNative = the stored float32 TOC). */
  bytes: FormatSizes;
  /** DEN bytes / format bytes. */
  ratios: Record<keyof FormatSizes, number>;
  /**
   * Encodings for the GPU kernels (src/toc/choose.ts): the first train rows (up to
   * ENCODING_SAMPLE_ROWS, in file order) re-encoded at several batch sizes and column
   * orders, with the resolved-runs cost model at k (what the cost rule caches, predicted runs / CSR time), and the one
   * chooseEncoding picks.
   */
  encodings: { sampleRows: number; k: number; candidates: EncodingCandidate[]; chosen?: EncodingCandidate };
  /** The cost rule's decision per batch of the dataset as stored (the first `batches` of train), at k. */
  cacheDecisions: { k: number; batches: BatchCacheDecision[] };
}

export interface BatchCacheDecision {
  record: string;
  batch: number;
  rows: number;
  nnz: number;
  /** Codes the cost rule caches at k for A·M (row side) and Aᵀ·M (column side), and the mean terms per output column of the two (nnz when none). */
  cachedRow: number;
  cachedCol: number;
  terms: number;
  /** Predicted runs / CSR time at k (runsCost, A·M + Aᵀ·M). */
  predicted: number;
}

/** Rows inspect re-encodes to compare batch sizes and column orders. */
const ENCODING_SAMPLE_ROWS = 10_000;
const ENCODING_BATCH_ROWS = [250, 500, 1000, 2000];

/** Non-zeros of a batch: sum over codes of the depth of the node. */
function batchNonZeros(logical: TocLogical): number {
  const { parent, nodeCount } = buildPrefixTree(logical);
  const depth = new Uint32Array(nodeCount);
  for (let i = 1; i < nodeCount; i++) depth[i] = depth[parent[i]!]! + 1;
  let nnz = 0;
  for (const code of logical.codes) nnz += depth[code]!;
  return nnz;
}

/** Batches of train whose cache decision inspect lists. */
const DECISION_BATCHES = 12;

async function inspectDataset(dir: string, sample?: number, k = DEFAULT_RUNS_K): Promise<TocInspection> {
  const path = join(dir, 'manifest.json');
  const m = validateTocManifest(JSON.parse(await readFile(path, 'utf8')), path);
  const records = (['train', 'test'] as const).flatMap((s) => m.splits[s]?.records ?? []);
  const total = records.reduce((n, r) => n + r.batches.length, 0);
  const want = sample ?? (total > AUTO_SAMPLE_ABOVE ? AUTO_SAMPLE : total);
  const measure = new Set<number>();
  for (let i = 0; i < Math.min(want, total); i++) measure.add(Math.floor((i * total) / Math.min(want, total)));

  const keys = ['den', 'csr', 'cvi', 'dvi', 'gzip', 'toc', 'tocNative'] as const;
  const bytes = Object.fromEntries(keys.map((k) => [k, 0])) as unknown as FormatSizes;
  let index = 0;
  let fileBytes = 0;
  let nonZeros = 0;
  let firstLayerPairs = 0;
  let codes = 0;
  let measuredRows = 0;
  const encodingRows: SparseRows[] = [];
  let sampleRows = 0;
  const decisions: BatchCacheDecision[] = [];
  const trainRecords = new Set(m.splits.train.records);
  for (const record of records) {
    const file = new Uint8Array(await readFile(join(dir, record.file)));
    fileBytes += file.length;
    for (const { logical } of readTocRecord(file, record, { classes: m.classes.length, columns: m.columns })) {
      nonZeros += batchNonZeros(logical);
      firstLayerPairs += logical.firstLayerCol.length;
      codes += logical.codes.length;
      if (trainRecords.has(record) && decisions.length < DECISION_BATCHES) {
        const l = tocRunsLayout(toBatch(logical), { k });
        decisions.push({
          record: record.file,
          batch: decisions.filter((d) => d.record === record.file).length,
          rows: logical.rows,
          nnz: l.model.nnz,
          cachedRow: l.rowCached,
          cachedCol: l.colCached,
          terms: l.model.terms,
          predicted: l.cost.ratio,
        });
      }
      if (trainRecords.has(record) && sampleRows < ENCODING_SAMPLE_ROWS) {
        encodingRows.push(sparseFromLogical(logical));
        sampleRows += logical.rows;
      }
      if (measure.has(index)) {
        const sizes = formatSizes(logical);
        for (const k of keys) bytes[k] += sizes[k];
        measuredRows += logical.rows;
      }
      index++;
    }
  }
  const rows = { train: m.rows.train, test: m.rows.test ?? 0, total: m.rows.train + (m.rows.test ?? 0) };
  const ratios = Object.fromEntries(keys.map((k) => [k, bytes[k] === 0 ? 0 : bytes.den / bytes[k]])) as unknown as Record<keyof FormatSizes, number>;
  const table = concatRows(encodingRows);
  // A table smaller than every candidate batch is compared as one batch of all its rows.
  const sizes = ENCODING_BATCH_ROWS.filter((b) => b <= table.rows);
  const candidates = compareEncodings(
    sliceRows(table, 0, Math.min(table.rows, ENCODING_SAMPLE_ROWS)),
    sizes.length ? sizes : [Math.max(1, table.rows)],
    ['source', 'frequency'],
    k,
  );
  return {
    name: m.name,
    rows,
    columns: m.columns,
    classes: m.classes.length,
    records: records.length,
    batches: total,
    fileBytes,
    nonZeros,
    density: nonZeros / (rows.total * m.columns),
    firstLayerPairs,
    codes,
    measured: { sampled: measure.size < total, batches: measure.size, rows: measuredRows },
    bytes,
    ratios,
    encodings: { sampleRows: Math.min(table.rows, ENCODING_SAMPLE_ROWS), k, candidates, chosen: chooseEncoding(candidates) },
    cacheDecisions: { k, batches: decisions },
  };
}

/** The encodings table of `toc inspect` (and of a build that chooses its encoding), one line at a time to `out`. */
function printEncodings(e: TocInspection['encodings'], out: (line: string) => void): void {
  out(`  GPU kernels by encoding at k = ${e.k} (first ${int(e.sampleRows)} train rows; T / nnz = resolved-runs terms over CSR's with the cost rule's`);
  out('  cached codes; predicted = runsCost runs / CSR time, A·M + Aᵀ·M, SwiftShader prices; the chooser minimises it):');
  out(
    `  ${'batch rows'.padStart(10)}  ${'column order'.padEnd(12)} ${'batches'.padStart(7)} ${'nnz / |D|'.padStart(9)} ${'caching'.padStart(7)} ` +
      `${'cached A·M / Aᵀ·M'.padStart(15)} ${'T / nnz'.padStart(8)} ${'predicted'.padStart(9)}`,
  );
  for (const c of e.candidates) {
    const mark = c === e.chosen ? '  <- chosen' : '';
    const perCode = c.codes ? (c.nnz / c.codes).toFixed(2) : '-';
    const cells = [
      int(c.batchRows).padStart(10),
      ` ${c.columnOrder.padEnd(12)}`,
      String(c.batches).padStart(7),
      perCode.padStart(9),
      String(c.batchesCaching).padStart(7),
      `${int(c.cachedRow)} / ${int(c.cachedCol)}`.padStart(15),
      c.workRatio.toFixed(3).padStart(8),
      c.costRatio.toFixed(3).padStart(9),
    ];
    out(`  ${cells.join(' ')}${mark}`);
  }
}

async function inspect(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, sample: { type: 'string' }, k: { type: 'string' } },
  });
  const dir = positionals[0];
  if (!dir) throw new Error('usage: bytelab toc inspect DIR [--json] [--sample N|all] [--k N]');
  const sample = values.sample === undefined ? undefined : values.sample === 'all' ? Infinity : positiveIntFlag(values.sample, 'sample', 1);
  const k = values.k === undefined ? DEFAULT_RUNS_K : positiveIntFlag(values.k, 'k', 1);
  const s = await inspectDataset(dir, sample, k);
  if (values.json) {
    console.log(JSON.stringify(s, null, 2));
    return 0;
  }
  console.log(`${s.name}: ${int(s.rows.total)} rows (train ${int(s.rows.train)}, test ${int(s.rows.test)}), ${int(s.columns)} columns, ${s.classes} classes`);
  console.log(`  ${int(s.batches)} batches in ${s.records} record files, ${int(s.fileBytes)} bytes on disk`);
  console.log(
    `  non-zeros ${int(s.nonZeros)} (density ${(100 * s.density).toFixed(2)}%), first-layer pairs |I| ${int(s.firstLayerPairs)}, codes |D| ${int(s.codes)}`,
  );
  console.log(
    s.measured.sampled
      ? `  SAMPLED: the sizes below are for ${int(s.measured.batches)} of ${int(s.batches)} batches (${int(s.measured.rows)} of ${int(s.rows.total)} rows, ` +
          `evenly spaced; --sample all measures every batch)`
      : `  sizes of all ${int(s.batches)} batches in each format:`,
  );
  const rows: Array<[string, keyof FormatSizes]> = [
    ['DEN (float64)', 'den'],
    ['CSR', 'csr'],
    ['CVI', 'cvi'],
    ['DVI', 'dvi'],
    ['gzip of DEN', 'gzip'],
    ['TOC (float64 values)', 'toc'],
    ['TOC (float32, stored)', 'tocNative'],
  ];
  console.log(`  ${'format'.padEnd(22)} ${'bytes'.padStart(15)}  DEN / format`);
  for (const [label, k] of rows) console.log(`  ${label.padEnd(22)} ${int(s.bytes[k]).padStart(15)}  ${s.ratios[k].toFixed(2).padStart(8)}x`);
  printEncodings(s.encodings, (line) => console.log(line));
  const d = s.cacheDecisions;
  console.log(`  cost rule at k = ${d.k}, first ${d.batches.length} train batches as stored:`);
  const head = ['record'.padEnd(20), 'batch'.padStart(5), 'rows'.padStart(6), 'nnz'.padStart(8), 'cached A·M / Aᵀ·M'.padStart(15), 'T / nnz'.padStart(8)];
  console.log(`  ${[...head, 'predicted'.padStart(9)].join(' ')}`);
  for (const b of d.batches) {
    const cells = [
      b.record.padEnd(20),
      String(b.batch).padStart(5),
      int(b.rows).padStart(6),
      int(b.nnz).padStart(8),
      `${int(b.cachedRow)} / ${int(b.cachedCol)}`.padStart(15),
      (b.nnz ? b.terms / b.nnz : 1).toFixed(3).padStart(8),
      b.predicted.toFixed(3).padStart(9),
    ];
    console.log(`  ${cells.join(' ')}`);
  }
  return 0;
}
