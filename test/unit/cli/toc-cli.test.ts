// `bytelab toc build | inspect` as a user runs them: idx, CSV (a small tricky one
// and vega's birdstrikes) and Parquet (vega's flights-3m, ZSTD pages) sources;
// every batch is decoded and compared with rows worked out from the source.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'fflate';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { csvTable, parseCsv } from '../../../src/cli/sources/csv.js';
import { zstdDecompress } from '../../../src/cli/sources/parquet.js';
import { parseDateTime } from '../../../src/cli/sources/tabular.js';
import { readTocRecord, validateTocManifest, type TocManifest } from '../../../src/toc/dataset.js';
import { decodeLogical } from '../../../src/toc/index.js';

const work = mkdtempSync(join(tmpdir(), 'bytelab-toc-cli-'));
const bytelab = (...args: string[]) => spawnSync('node', ['bin/bytelab.mjs', ...args], { encoding: 'utf8' });
const BIRDSTRIKES = 'node_modules/vega-datasets/data/birdstrikes.csv';
const FLIGHTS = 'node_modules/vega-datasets/data/flights-3m.parquet';

function run(...args: string[]): string {
  const r = bytelab(...args);
  expect(r.status, r.stderr).toBe(0);
  return r.stdout + r.stderr;
}

interface Row {
  label: number;
  values: Float64Array;
}

/** Decodes every frame of every record (validating them) back to dense rows. */
function readDataset(dir: string): { manifest: TocManifest; train: Row[]; test: Row[]; tocBytes: number } {
  const manifest = validateTocManifest(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')));
  const out = { manifest, train: [] as Row[], test: [] as Row[], tocBytes: 0 };
  for (const split of ['train', 'test'] as const) {
    for (const record of manifest.splits[split]?.records ?? []) {
      const bytes = new Uint8Array(readFileSync(join(dir, record.file)));
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (const b of record.batches) out.tocBytes += view.getUint32(b.offset + 12, true);
      for (const { labels, logical } of readTocRecord(bytes, record, { classes: manifest.classes.length, columns: manifest.columns })) {
        const { data, cols } = decodeLogical(logical);
        labels.forEach((label, r) => out[split].push({ label, values: data.slice(r * cols, (r + 1) * cols) }));
      }
    }
  }
  return out;
}

/** The row as {feature name: value} for its non-zero columns. */
function named(manifest: TocManifest, row: Row): Record<string, number> {
  const out: Record<string, number> = {};
  row.values.forEach((v, c) => {
    if (v !== 0) out[manifest.featureNames[c]!] = v;
  });
  return out;
}

// ------------------------------------------------------------------ idx

/** n images of w x h with about half the pixels zero, as gzipped idx files. */
function writeIdx(prefix: string, n: number, w: number, h: number, seed: number): { images: string; labels: string; pixels: Uint8Array[]; classes: number[] } {
  let s = seed;
  const random = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const pixels: Uint8Array[] = [];
  const classes: number[] = [];
  const img = new Uint8Array(16 + n * w * h);
  const view = new DataView(img.buffer);
  view.setUint32(0, 0x803);
  view.setUint32(4, n);
  view.setUint32(8, h);
  view.setUint32(12, w);
  const lab = new Uint8Array(8 + n);
  new DataView(lab.buffer).setUint32(0, 0x801);
  new DataView(lab.buffer).setUint32(4, n);
  for (let i = 0; i < n; i++) {
    const p = Uint8Array.from({ length: w * h }, () => (random() < 0.5 ? 0 : 1 + Math.floor(random() * 255)));
    pixels.push(p);
    img.set(p, 16 + i * w * h);
    classes.push(i % 10);
    lab[8 + i] = i % 10;
  }
  const paths = { images: join(work, `${prefix}-images.gz`), labels: join(work, `${prefix}-labels.gz`) };
  writeFileSync(paths.images, gzipSync(img));
  writeFileSync(paths.labels, gzipSync(lab));
  return { ...paths, pixels, classes };
}

describe('bytelab toc build --idx', () => {
  const train = writeIdx('train', 60, 28, 28, 1);
  const test = writeIdx('test', 12, 28, 28, 2);
  const out = join(work, 'idx');
  const args = [
    '--idx',
    train.images,
    '--labels',
    train.labels,
    '--test-idx',
    test.images,
    '--test-labels',
    test.labels,
    '--limit',
    '45',
    '--test-limit',
    '10',
    '--batch-size',
    '10',
    '--batches-per-record',
    '2',
  ];

  it('writes pixels as 784 columns of q/255 in float32, batches of --batch-size, records of --batches-per-record', () => {
    run('toc', 'build', ...args, '--name', 'tiny-idx', '--out', out);
    const { manifest, train: rows, test: testRows } = readDataset(out);
    expect(manifest.name).toBe('tiny-idx');
    expect(manifest.columns).toBe(784);
    expect(manifest.featureNames[28 * 3 + 5]).toBe('px_3_5');
    expect(manifest.classes).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    expect(manifest.rows).toEqual({ train: 45, test: 10 });
    expect(manifest.splits.train.records.map((r) => r.batches.map((b) => b.rows))).toEqual([[10, 10], [10, 10], [5]]);
    expect(manifest.splits.train.records.map((r) => r.file)).toEqual(['train-00000.tocr', 'train-00001.tocr', 'train-00002.tocr']);
    rows.forEach((row, i) => {
      expect(row.label).toBe(train.classes[i]);
      expect(Array.from(row.values)).toEqual(Array.from(train.pixels[i]!, (q) => Math.fround(q / 255)));
    });
    testRows.forEach((row, i) => expect(Array.from(row.values)).toEqual(Array.from(test.pixels[i]!, (q) => Math.fround(q / 255))));
  });

  it('--shuffle SEED permutes the rows (the same way every time) and keeps each row with its label', () => {
    const a = join(work, 'idx-shuffled-a');
    const b = join(work, 'idx-shuffled-b');
    run('toc', 'build', ...args, '--shuffle', '7', '--name', 'x', '--out', a);
    run('toc', 'build', ...args, '--shuffle', '7', '--name', 'x', '--out', b);
    for (const f of readdirSync(a)) expect(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), f).toBe(true);
    const { train: rows } = readDataset(a);
    const source = new Map(train.pixels.slice(0, 45).map((p, i) => [Array.from(p, (q) => Math.fround(q / 255)).join(','), i]));
    const order = rows.map((row) => {
      const i = source.get(Array.from(row.values).join(','));
      expect(i).toBeDefined();
      expect(row.label).toBe(train.classes[i!]);
      return i!;
    });
    expect([...order].sort((x, y) => x - y)).toEqual(Array.from({ length: 45 }, (_, i) => i));
    expect(order).not.toEqual([...order].sort((x, y) => x - y));
  });

  it("inspect --json: DEN = rows x cols x 8, stored TOC = the frames' TOC bytes, non-zeros as decoded", () => {
    const r = bytelab('toc', 'inspect', out, '--json');
    expect(r.status, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    const { train: rows, test: testRows, tocBytes } = readDataset(out);
    const all = [...rows, ...testRows];
    expect(s.rows).toEqual({ total: 55, train: 45, test: 10 });
    expect(s.batches).toBe(6);
    expect(s.measured).toEqual({ sampled: false, batches: 6, rows: 55 });
    expect(s.bytes.den).toBe(55 * 784 * 8);
    expect(s.bytes.tocNative).toBe(tocBytes);
    expect(s.nonZeros).toBe(all.reduce((n, r) => n + r.values.filter((v) => v !== 0).length, 0));
    expect(s.bytes.csr).toBe(12 * s.nonZeros + 4 * (55 + 6)); // + 4 (rows + 1) per batch
    expect(s.fileBytes).toBe(
      readdirSync(out)
        .filter((f) => f.endsWith('.tocr'))
        .reduce((n, f) => n + readFileSync(join(out, f)).length, 0),
    );
    expect(s.ratios.toc).toBeCloseTo(s.bytes.den / s.bytes.toc, 9);
    // Encodings for the GPU kernels: the 45 train rows (fewer than any candidate batch) as one batch, in both column orders.
    const trainNonZeros = rows.reduce((n, r) => n + r.values.filter((v) => v !== 0).length, 0);
    expect(s.encodings.sampleRows).toBe(45);
    expect(s.encodings.candidates.map((c: { batchRows: number; columnOrder: string }) => [c.batchRows, c.columnOrder])).toEqual([
      [45, 'source'],
      [45, 'frequency'],
    ]);
    expect(s.encodings.k).toBe(64);
    for (const c of s.encodings.candidates) {
      expect(c.nnz).toBe(trainNonZeros);
      expect(c.workRatio).toBeGreaterThan(0);
      expect(c.workRatio).toBeLessThanOrEqual(1);
      expect(c.costRatio).toBeGreaterThan(0);
      expect(c.costRatio).toBeLessThanOrEqual(1);
    }
    expect(s.encodings.chosen.costRatio).toBe(Math.min(...s.encodings.candidates.map((c: { costRatio: number }) => c.costRatio)));
    expect(bytelab('toc', 'inspect', out).stdout).toMatch(/GPU kernels by encoding at k = 64 \(first 45 train rows/);
    // The cost rule's decision per train batch, at the k asked for.
    expect(s.cacheDecisions.k).toBe(64);
    expect(s.cacheDecisions.batches.map((b: { rows: number }) => b.rows).reduce((a: number, b: number) => a + b, 0)).toBe(45);
    const one = JSON.parse(bytelab('toc', 'inspect', out, '--json', '--k', '1').stdout);
    expect([one.encodings.k, one.cacheDecisions.k]).toEqual([1, 1]);
    for (const b of one.cacheDecisions.batches) expect(b.predicted).toBeLessThanOrEqual(1);
    expect(bytelab('toc', 'inspect', out, '--k', '1').stdout).toMatch(/cost rule at k = 1, first \d+ train batches as stored/);
    const sampled = JSON.parse(bytelab('toc', 'inspect', out, '--json', '--sample', '2').stdout);
    expect(sampled.measured).toEqual({ sampled: true, batches: 2, rows: 20 });
    expect(sampled.nonZeros).toBe(s.nonZeros); // counts always cover every batch
    expect(bytelab('toc', 'inspect', out).stdout).toMatch(/sizes of all 6 batches/);
    expect(bytelab('toc', 'inspect', out, '--sample', '2').stdout).toMatch(/SAMPLED: the sizes below are for 2 of 6 batches/);
  });

  it('inspect names the record, batch and byte of a damaged frame', () => {
    const dir = join(work, 'idx-damaged');
    run('toc', 'build', ...args, '--out', dir);
    const file = join(dir, 'train-00001.tocr');
    const bytes = readFileSync(file);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as TocManifest;
    const second = manifest.splits.train.records[1]!.batches[1]!;
    bytes[second.offset + 16] = 200; // first label of batch 1: class 200 of 10
    writeFileSync(file, bytes);
    const r = bytelab('toc', 'inspect', dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`train-00001.tocr batch 1: label 200 of row 0 is not below 10 classes (at byte ${second.offset + 16})`);
  });
});

// ------------------------------------------------------------------ CSV

describe('CSV parsing', () => {
  const records = (text: string) => {
    const out: string[][] = [];
    parseCsv(text, (f) => void out.push(f));
    return out;
  };

  it('handles quotes, escaped quotes, separators and line breaks inside quotes, CRLF, CR and a BOM', () => {
    expect(records('\ufeffa,b\r\n"x, ""y""",2\r\n"multi\nline",\r3,""\n')).toEqual([
      ['a', 'b'],
      ['x, "y"', '2'],
      ['multi\nline', ''],
      ['3', ''],
    ]);
  });

  it('keeps empty fields and a last empty field, and ignores one final line break', () => {
    expect(records('a,,c\n,,\nx,')).toEqual([
      ['a', '', 'c'],
      ['', '', ''],
      ['x', ''],
    ]);
    expect(records('a\n\nb\n')).toEqual([['a'], [''], ['b']]);
  });

  it('names the line of an unterminated quote, text after a quote, or a wrong field count', () => {
    expect(() => records('a,b\n1,2\n"open,3\n4,5')).toThrow(/line 3: unterminated quoted field/);
    expect(() => records('a\n"x"y')).toThrow(/line 2: text after a closing quote/);
    expect(() => csvTable('a,b\n1,2\n"q\nq",2,3\n', 'f.csv')).toThrow(/f.csv: line 3 has 3 fields, the header has 2/);
  });

  it('types columns: numbers when every non-empty field is a number, categories otherwise', () => {
    const t = csvTable('n,s,m\n1,x,\n2.5e1,"y",3\n-0.5,,x\n', 'f.csv');
    expect(t.columns.map((c) => c.kind)).toEqual(['number', 'string', 'string']);
    const n = t.columns[0]!;
    expect(n.kind === 'number' && Array.from(n.values)).toEqual([1, 25, -0.5]);
  });
});

describe('bytelab toc build --csv', () => {
  // Quoted categories with commas and quotes, a numeric column with a missing
  // value, CRLF line ends, a line break inside a quoted field, an empty label.
  const csv = [
    'city,size,note,colour,kind',
    '"Paris, FR",10,x,red,good',
    'Oslo,,"say ""hi""",blue,bad',
    '"Paris, FR",30,"two',
    'lines",red,good',
    'Rome,20,x,,bad',
    'Oslo,25,y,green,',
    'Rome,15,y,red,good',
  ].join('\r\n');
  const path = join(work, 'small.csv');
  writeFileSync(path, `${csv}\r\n`);

  it('one-hots categories, min-max scales numbers (missing -> 0), sorts classes, drops rows without a label', () => {
    const out = join(work, 'csv');
    const log = run('toc', 'build', '--csv', path, '--label', 'kind', '--test-fraction', '0', '--drop', 'note', '--batch-size', '2', '--out', out);
    expect(log).toMatch(/dropped 1 rows without a label/);
    const { manifest, train, test } = readDataset(out);
    expect(test).toEqual([]);
    expect(manifest.splits.test).toBeUndefined();
    expect(manifest.classes).toEqual(['bad', 'good']);
    expect(manifest.featureNames).toEqual(['city=Oslo', 'city=Paris, FR', 'city=Rome', 'size', 'colour=blue', 'colour=green', 'colour=red']);
    expect(manifest.description).toMatch(/1 rows without a label dropped/);
    const f = (x: number) => Math.fround(x);
    expect(train.map((r) => [manifest.classes[r.label], named(manifest, r)])).toEqual([
      ['good', { 'city=Paris, FR': 1, 'colour=red': 1 }], // size 10 is the minimum: scaled to 0
      ['bad', { 'city=Oslo': 1, 'colour=blue': 1 }], // size missing -> 0
      ['good', { 'city=Paris, FR': 1, size: 1, 'colour=red': 1 }],
      ['bad', { 'city=Rome': 1, size: f(0.5) }], // colour missing: no colour column
      ['good', { 'city=Rome': 1, size: f(0.25), 'colour=red': 1 }],
    ]);
  });

  it('--test-fraction splits rows by a hash of their values: deterministic, and no row in both splits', () => {
    const a = join(work, 'csv-split-a');
    const b = join(work, 'csv-split-b');
    run('toc', 'build', '--csv', path, '--label', 'kind', '--test-fraction', '0.5', '--name', 'x', '--out', a);
    run('toc', 'build', '--csv', path, '--label', 'kind', '--test-fraction', '0.5', '--name', 'x', '--out', b);
    for (const f of readdirSync(a)) expect(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), f).toBe(true);
    const { manifest, train, test } = readDataset(a);
    expect(manifest.rows.train + manifest.rows.test!).toBe(5);
    const key = (r: Row) => Array.from(r.values).join(',');
    for (const row of test) expect(train.map(key)).not.toContain(key(row));
  });

  it('--column-order frequency: columns by descending non-zero count (ties in source order), the same rows by name', () => {
    const args = ['toc', 'build', '--csv', path, '--label', 'kind', '--test-fraction', '0', '--drop', 'note', '--batch-size', '2'];
    run(...args, '--out', join(work, 'csv-source'));
    run(...args, '--column-order', 'frequency', '--out', join(work, 'csv-freq'));
    const source = readDataset(join(work, 'csv-source'));
    const freq = readDataset(join(work, 'csv-freq'));
    // Non-zeros per column over the 5 labelled rows: red 3, size 3 (10 scales to 0), Paris 2, Rome 2, Oslo 1, blue 1, green 0.
    expect(freq.manifest.featureNames).toEqual(['size', 'colour=red', 'city=Paris, FR', 'city=Rome', 'city=Oslo', 'colour=blue', 'colour=green']);
    expect(freq.manifest.description).toMatch(/columns in frequency order/);
    expect(freq.train.map((r) => named(freq.manifest, r))).toEqual(source.train.map((r) => named(source.manifest, r)));
    const bad = bytelab(...args, '--column-order', 'random', '--out', join(work, 'x'));
    expect(bad.stderr).toMatch(/--column-order must be source, frequency or auto/);
    // Too few rows for one batch of 500: nothing to compare, and the build says what it kept.
    const few = run(
      'toc',
      'build',
      '--csv',
      path,
      '--label',
      'kind',
      '--test-fraction',
      '0',
      '--batch-size',
      '500',
      '--column-order',
      'auto',
      '--out',
      join(work, 'csv-few'),
    );
    expect(few).toMatch(/too few train rows \(5\) to choose an encoding: batch size 500, source column order/);
    expect(readDataset(join(work, 'csv-few')).manifest.description).toMatch(/too few train rows \(5\)/);
  });

  it('refuses a feature made from the label column, and an unknown column', () => {
    const leak = bytelab('toc', 'build', '--csv', path, '--label', 'kind', '--onehot', 'kind', '--out', join(work, 'x'));
    expect(leak.status).toBe(1);
    expect(leak.stderr).toMatch(/leak the label/);
    const unknown = bytelab('toc', 'build', '--csv', path, '--label', 'kind', '--drop', 'nope', '--out', join(work, 'x'));
    expect(unknown.stderr).toMatch(/--drop "nope": no such column/);
  });
});

describe('bytelab toc build --csv birdstrikes.csv', () => {
  const out = join(work, 'birdstrikes');
  const source = readFileSync(BIRDSTRIKES, 'utf8')
    .trim()
    .split('\r\n')
    .map((l) => l.split(',')); // CRLF, no quotes
  const header = source[0]!;
  const col = (name: string) => header.indexOf(name);

  it('builds all 10,000 rows; each decoded row matches its CSV line', () => {
    run('toc', 'build', '--csv', BIRDSTRIKES, '--label', 'Effect Amount of damage', '--weekday', 'Flight Date', '--test-fraction', '0', '--out', out);
    const { manifest, train } = readDataset(out);
    expect(train).toHaveLength(10_000);
    expect(manifest.classes).toEqual(['B', 'C', 'Medium', 'Minor', 'None', 'Substantial']);
    // 50 + 225 + 46 + 29 + 7 + 3 + 37 + 4 one-hot, 7 weekdays, 4 numeric.
    expect(manifest.columns).toBe(7 + 50 + 225 + 46 + 29 + 7 + 3 + 37 + 4 + 4);
    const speedMax = Math.max(...source.slice(1).map((r) => Number(r[col('Speed IAS in knots')] || 0)));
    const maxima = Object.fromEntries(
      ['Cost Other', 'Cost Repair', 'Cost Total $'].map((n) => [n, Math.max(...source.slice(1).map((r) => Number(r[col(n)])))]),
    );
    for (const i of [0, 3, 1234, 9999]) {
      const line = source[i + 1]!;
      const expected: Record<string, number> = {};
      const weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][new Date(`${line[col('Flight Date')]!}T00:00:00Z`).getUTCDay()];
      expected[`Flight Date:weekday=${weekday}`] = 1;
      for (const name of [
        'Airport Name',
        'Aircraft Make Model',
        'Aircraft Airline Operator',
        'Origin State',
        'Phase of flight',
        'Wildlife Size',
        'Wildlife Species',
        'Time of day',
      ]) {
        expected[`${name}=${line[col(name)]}`] = 1;
      }
      for (const name of Object.keys(maxima)) if (Number(line[col(name)])) expected[name] = Math.fround(Number(line[col(name)]) / maxima[name]!);
      const speed = line[col('Speed IAS in knots')]!;
      if (speed !== '' && Number(speed) !== 0) expected['Speed IAS in knots'] = Math.fround(Number(speed) / speedMax); // min is 0
      expect(named(manifest, train[i]!), `row ${i}`).toEqual(expected);
      expect(manifest.classes[train[i]!.label]).toBe(line[col('Effect Amount of damage')]);
    }
    expect(named(manifest, train[0]!)).toMatchObject({
      'Flight Date:weekday=Mon': 1,
      'Aircraft Make Model=T-38A': 1,
      'Speed IAS in knots': Math.fround(300 / 350),
    });
  });

  it('inspect --json agrees with the decoded rows', () => {
    const s = JSON.parse(bytelab('toc', 'inspect', out, '--json').stdout);
    const { train, manifest } = readDataset(out);
    expect(s.bytes.den).toBe(10_000 * manifest.columns * 8);
    expect(s.nonZeros).toBe(train.reduce((n, r) => n + r.values.filter((v) => v !== 0).length, 0));
    expect(s.ratios.toc).toBeGreaterThan(s.ratios.csr);
  });

  it('--batch-size auto --column-order auto: the encoding inspect advises for these rows, the same rows by name', () => {
    const flags = ['--label', 'Effect Amount of damage', '--weekday', 'Flight Date', '--shuffle', '1'];
    const plain = join(work, 'birdstrikes-250');
    const auto = join(work, 'birdstrikes-auto');
    run('toc', 'build', '--csv', BIRDSTRIKES, ...flags, '--out', plain);
    const log = run('toc', 'build', '--csv', BIRDSTRIKES, ...flags, '--batch-size', 'auto', '--column-order', 'auto', '--out', auto);
    // inspect compares the first train rows as stored; a source-order build stores them in the order the build chose on.
    const advice = JSON.parse(bytelab('toc', 'inspect', plain, '--json').stdout).encodings;
    expect(advice.candidates).toHaveLength(8);
    const { batchRows, columnOrder } = advice.chosen;
    expect(batchRows).toBeGreaterThan(250); // birdstrikes rows share prefixes in larger batches (docs/toc.md)
    expect(log).toMatch(new RegExp(`choosing the encoding on the first ${advice.sampleRows.toLocaleString('en-US')} train rows`));
    expect(log).toMatch(new RegExp(`${batchRows.toLocaleString('en-US')}  ${columnOrder} .*<- chosen`));
    const a = readDataset(auto);
    const p = readDataset(plain);
    const sizes = a.manifest.splits.train.records.flatMap((r) => r.batches.map((b) => b.rows));
    expect(sizes.slice(0, -1).every((n) => n === batchRows)).toBe(true);
    expect(sizes.at(-1)).toBeLessThanOrEqual(batchRows);
    expect(a.manifest.description).toMatch(new RegExp(`batch size ${batchRows} and ${columnOrder} column order chosen by the kernel cost model`));
    expect(a.train.map((r) => named(a.manifest, r))).toEqual(p.train.map((r) => named(p.manifest, r)));
    expect(a.test.map((r) => r.label)).toEqual(p.test.map((r) => r.label));
    // One flag given, the other chosen with it.
    const fixed = run('toc', 'build', '--csv', BIRDSTRIKES, ...flags, '--batch-size', '500', '--column-order', 'auto', '--out', join(work, 'birdstrikes-500'));
    expect(fixed).toMatch(/ 500 {2}(source|frequency) .*<- chosen/);
    expect(fixed).not.toMatch(/2,000 {2}source/);
    expect(bytelab('toc', 'build', '--csv', BIRDSTRIKES, ...flags, '--column-order', 'best', '--out', join(work, 'x')).stderr).toMatch(
      /--column-order must be source, frequency or auto, got "best"/,
    );
    expect(bytelab('toc', 'build', '--csv', BIRDSTRIKES, ...flags, '--batch-size', 'automatic', '--out', join(work, 'x')).stderr).toMatch(
      /--batch-size must be a positive integer or auto, got "automatic"/,
    );
  });
});

// ------------------------------------------------------------------ bundled

describe('the bundled TOC datasets', () => {
  const scripts = JSON.parse(readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
  for (const [script, dir] of [
    ['data:toc:birdstrikes', 'public/datasets/birdstrikes-toc'],
    ['data:toc:birdstrikes-2000', 'public/datasets/birdstrikes-2000-toc'],
    ['data:toc:flights-mini', 'public/datasets/flights-250k-toc'],
  ] as const) {
    it(`${dir} is what npm run ${script} builds, byte for byte`, () => {
      const command = scripts[script]!;
      expect(command).toContain(`--out ${dir}`);
      const out = join(work, script.replaceAll(':', '-'));
      const r = spawnSync('bash', ['-c', command.replace(`--out ${dir}`, `--out ${out}`)], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(readdirSync(out).sort()).toEqual(readdirSync(dir).sort());
      for (const f of readdirSync(dir)) expect(readFileSync(join(out, f)).equals(readFileSync(join(dir, f))), f).toBe(true);
    });
  }
});

// ------------------------------------------------------------------ Parquet

describe('bytelab toc build --parquet flights-3m.parquet', () => {
  const out = join(work, 'flights');
  const flags = ['--label', 'delay>15', '--onehot', 'origin,destination', '--hour', 'date', '--weekday', 'date', '--bucket', 'distance:10', '--limit', '20000'];

  it("derives one-hot airports, hour, weekday and distance buckets; rows match hyparquet's own reading", async () => {
    const log = run('toc', 'build', '--parquet', FLIGHTS, ...flags, '--test-fraction', '0', '--out', out);
    expect(log).toMatch(/read 20000 of 20000 rows/);
    const { manifest, train } = readDataset(out);
    expect(train).toHaveLength(20_000);
    expect(manifest.classes).toEqual(['delay<=15', 'delay>15']);
    const prefixes = ['origin=', 'destination=', 'date:hour=', 'date:weekday=', 'distance='];
    const width = (p: string) => manifest.featureNames.filter((n) => n.startsWith(p)).length;
    expect(prefixes.map(width).slice(2)).toEqual([24, 7, 10]);
    expect(manifest.columns).toBe(prefixes.map(width).reduce((a, b) => a + b, 0));
    expect(manifest.description).toMatch(/distance: 10 quantile buckets/);

    // The same rows as hyparquet's own row reader gives them (with the ZSTD
    // decompressor the CLI plugs in): date is TIMESTAMP(MICROS) without UTC adjustment.
    const file = await asyncBufferFromFile(FLIGHTS);
    const rows = await parquetReadObjects({ file, rowStart: 0, rowEnd: 20_000, compressors: { ZSTD: zstdDecompress } });
    const edges = manifest.featureNames.filter((n) => n.startsWith('distance=')).map((n) => Number(/\[(\d+),/.exec(n)![1]));
    for (const i of [0, 1, 777, 19_999]) {
      const src = rows[i]!;
      const date = src.date as Date;
      const distance = Number(src.distance);
      const bucket = edges.filter((e) => e <= distance).length - 1;
      const expected = {
        [`origin=${src.origin}`]: 1,
        [`destination=${src.destination}`]: 1,
        [`date:hour=${String(date.getUTCHours()).padStart(2, '0')}`]: 1,
        [`date:weekday=${['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][date.getUTCDay()]}`]: 1,
        [manifest.featureNames.filter((n) => n.startsWith('distance='))[bucket]!]: 1,
      };
      expect(named(manifest, train[i]!), `row ${i}`).toEqual(expected);
      expect(train[i]!.label).toBe(Number(src.delay) > 15 ? 1 : 0);
    }
    // Row 0 by hand: 2001-01-01 00:01 was a Monday.
    expect(rows[0]!.date).toEqual(new Date('2001-01-01T00:01:00Z'));
    expect(named(manifest, train[0]!)).toMatchObject({ 'date:hour=00': 1, 'date:weekday=Mon': 1 });
    expect(train.every((r) => r.values.filter((v) => v !== 0).length === 5)).toBe(true);
  });

  it('with the default test split and inspect --json, the numbers add up', () => {
    const dir = join(work, 'flights-split');
    run('toc', 'build', '--parquet', FLIGHTS, ...flags, '--shuffle', '3', '--out', dir);
    const { manifest, train, test, tocBytes } = readDataset(dir);
    expect(train.length + test.length).toBe(20_000);
    expect(test.length / 20_000).toBeGreaterThan(0.08);
    expect(test.length / 20_000).toBeLessThan(0.12);
    expect(manifest.description).toMatch(/shuffled \(Fisher-Yates, mulberry32 seed 3\)/);
    const s = JSON.parse(bytelab('toc', 'inspect', dir, '--json').stdout);
    expect(s.bytes.den).toBe(20_000 * manifest.columns * 8);
    expect(s.bytes.tocNative).toBe(tocBytes);
    expect(s.nonZeros).toBe(100_000);
    expect(s.bytes.csr).toBe(12 * 100_000 + 4 * (20_000 + s.batches));
    expect(s.codes).toBeLessThan(s.nonZeros);
  });

  it('dates in CSV strings: YYYY-MM-DD[ HH:MM[:SS]] as wall-clock time', () => {
    expect(parseDateTime('2001-01-01 06:30')).toBe(Date.UTC(2001, 0, 1, 6, 30));
    expect(parseDateTime('1990-01-08')).toBe(Date.UTC(1990, 0, 8));
    expect(parseDateTime('01010600')).toBeNaN();
  });

  it('left no stray files', () => {
    expect(existsSync(join(out, 'manifest.json'))).toBe(true);
    expect(readdirSync(out).filter((f) => !f.endsWith('.tocr') && f !== 'manifest.json')).toEqual([]);
  });
});
