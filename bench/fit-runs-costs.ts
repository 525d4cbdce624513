// Fits the prices of the runs kernels' cost model (src/toc/gpu-runs.ts, RUNS_PRICES and runsCost) to a kernel bench
// report (bench/results/toc-kernels.md format): its GPU-side medians of CSR, runs and "gather only" per batch and op.
// Each timed product is a sum of work units (runsCost's): dispatches beyond the first, invocations, terms and floats of M
// copied into X; a least-squares fit on relative errors with non-negative prices gives one price per unit, separately for
// the scalar products (A*v, v*A: k = 1) and the quad ones (A*M, AT*M: k = 64). The scalar fit takes the quad fit's copy
// price (at k = 1 the copy is a few hundred floats and cannot be told from a dispatch).
// The batches whose report shows cached codes are rebuilt here from the bundled datasets with the rule that report ran
// (RunsLayoutOptions { cache: 'terms' }, MIN_SAVED_SHARE) to count their inline pairs, runs and uses; the counts must
// match the report's |S| and nnz. Batches with nothing cached need only the report's rows, cols and nnz.
// Usage: npx tsx bench/fit-runs-costs.ts [--report FILE | --rev GIT_REV (default 5c98c27, the session-6 report)]
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { concatRows, frequencyOrder, permuteColumns, sliceRows, sparseFromLogical } from '../src/toc/choose.js';
import { readTocRecord, validateTocManifest } from '../src/toc/dataset.js';
import { invocationWidth, tocRunsLayout, type RunsCostInput, type RunsPrices } from '../src/toc/gpu-runs.js';
import { encodeSparse, toBatch, type SparseRows } from '../src/toc/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { report: { type: 'string' }, rev: { type: 'string' } } });
const rev = values.rev ?? '5c98c27';
const text = values.report ? readFileSync(values.report, 'utf8') : execSync(`git show ${rev}:bench/results/toc-kernels.md`, { cwd: ROOT, encoding: 'utf8' });

// ---------------------------------------------------------------- the report's tables

/** The body rows of the markdown table whose header starts with `head`, as trimmed cells. */
function tableAfter(head: string): string[][] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('| ') && l.slice(1).trim().startsWith(head) && lines[lines.indexOf(l) + 1]?.startsWith('| -'));
  if (at < 0) throw new Error(`no table headed "${head}" in the report`);
  const out: string[][] = [];
  for (let i = at + 2; i < lines.length && lines[i]!.startsWith('|'); i++)
    out.push(
      lines[i]!.split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  return out;
}
const num = (s: string): number => Number(s.replace(/,/g, '').replace(/×$/, ''));

interface ReportBatch {
  name: string;
  rows: number;
  cols: number;
  nnz: number;
  cached: number;
}
const batches: ReportBatch[] = tableAfter('batch ').flatMap((c) => {
  if (!c[1]?.includes('×') || c.length < 10) return [];
  const [rows, cols] = c[1].split('×').map((x) => num(x.trim()));
  return [{ name: c[0]!, rows: rows!, cols: cols!, nnz: num(c[2]!), cached: num(c[5]!) }];
});

interface Timing {
  batch: string;
  op: string;
  k: number;
  runs: number;
  csr: number;
  gather: number;
}
const gpuHead = text.indexOf('## The same trials, GPU side');
if (gpuHead < 0) throw new Error('the report has no GPU-side table');
const timings: Timing[] = [];
for (const line of text.slice(gpuHead).split('\n').slice(2)) {
  if (!line.startsWith('| ') || line.startsWith('| -') || line.startsWith('| batch')) {
    if (timings.length && !line.startsWith('|')) break;
    continue;
  }
  const c = line
    .split('|')
    .slice(1, -1)
    .map((x) => x.trim());
  timings.push({ batch: c[0]!, op: c[1]!, k: num(c[2]!), runs: num(c[3]!), csr: num(c[4]!), gather: num(c[13]!) });
}

// ---------------------------------------------------------------- the batches' counts

function firstRecord(dir: string): SparseRows {
  const base = join(ROOT, 'public', 'datasets', dir);
  const manifest = validateTocManifest(JSON.parse(readFileSync(join(base, 'manifest.json'), 'utf8')), dir);
  const entry = manifest.splits.train.records[0]!;
  const frames = readTocRecord(new Uint8Array(readFileSync(join(base, entry.file))), entry, { classes: manifest.classes.length, columns: manifest.columns });
  return concatRows(frames.map((f) => sparseFromLogical(f.logical)));
}
const tables: Record<string, SparseRows> = { flights: firstRecord('flights-250k-toc'), birdstrikes: firstRecord('birdstrikes-toc') };

/** The counts of a report batch: rebuilt (cached ones) or all inline (nothing cached). */
function counts(b: ReportBatch): RunsCostInput {
  if (b.cached === 0) return { rows: b.rows, cols: b.cols, nnz: b.nnz, inlinePairs: b.nnz, cachedCodes: 0, cachedRunPairs: 0, cachedUses: 0 };
  const m = /^(\w+) (\d+)( frequency)?$/.exec(b.name);
  const table = m && tables[m[1]!];
  if (!table) throw new Error(`${b.name}: cached codes, but no table to rebuild it from`);
  const ordered = m[3] ? permuteColumns(table, frequencyOrder(table)) : table;
  const l = tocRunsLayout(toBatch(encodeSparse(sliceRows(ordered, 0, Number(m[2])))), { cache: 'terms' });
  if (l.model.nnz !== b.nnz || l.cached !== b.cached)
    throw new Error(`${b.name}: rebuilt nnz ${l.model.nnz}, |S| ${l.cached}; the report says ${b.nnz}, ${b.cached}`);
  return { rows: l.rows, cols: l.cols, ...l.model };
}

// ---------------------------------------------------------------- the fit

/**
 * Work units of one timed product, as runsCost counts them: [products, fill dispatches, invocations, terms, copied floats].
 * Every product has its own dispatch (its base price); a runs product with cached codes adds the fill's dispatch and copy.
 */
type Units = [number, number, number, number, number];

function units(m: RunsCostInput, k: number, transpose: boolean, impl: 'csr' | 'gather' | 'fill'): Units {
  const w = invocationWidth(k);
  const outRows = transpose ? m.cols : m.rows;
  const cachedItems = transpose ? m.cachedRunPairs : m.cachedUses;
  const fillItems = transpose ? m.cachedUses : m.cachedRunPairs;
  if (impl === 'csr') return [1, 0, w * outRows, w * m.nnz, 0];
  if (impl === 'gather') return [1, 0, w * outRows, w * (m.inlinePairs + cachedItems), 0];
  return [0, 1, w * m.cachedCodes, w * fillItems, (transpose ? m.rows : m.cols) * k];
}

interface Point {
  label: string;
  units: Units;
  /** µs per operation, GPU side (for a fill: runs − gather only, medians). */
  us: number;
  /** Weight of its squared error: 1 / (the product's time)², so errors count relative to the product. */
  weight: number;
}

/** Weighted least squares over the prices in `free`; the others are fixed at `fixed`. */
function lsq(points: Point[], free: number[], fixed: number[]): number[] | undefined {
  const n = free.length;
  const a = Array.from({ length: n }, () => new Float64Array(n));
  const b = new Float64Array(n);
  for (const p of points) {
    const rest = p.us - p.units.reduce((s, u, j) => s + (free.includes(j) ? 0 : u * fixed[j]!), 0);
    free.forEach((i, r) => {
      b[r]! += p.weight * p.units[i]! * rest;
      free.forEach((j, c) => (a[r]![c]! += p.weight * p.units[i]! * p.units[j]!));
    });
  }
  // Gaussian elimination with partial pivoting.
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[piv]![c]!)) piv = r;
    if (Math.abs(a[piv]![c]!) < 1e-300) return undefined;
    [a[c], a[piv]] = [a[piv]!, a[c]!];
    [b[c], b[piv]] = [b[piv]!, b[c]!];
    for (let r = c + 1; r < n; r++) {
      const f = a[r]![c]! / a[c]![c]!;
      for (let j = c; j < n; j++) a[r]![j]! -= f * a[c]![j]!;
      b[r]! -= f * b[c]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = b[r]!;
    for (let j = r + 1; j < n; j++) s -= a[r]![j]! * x[j]!;
    x[r] = s / a[r]![r]!;
  }
  const out = [...fixed];
  free.forEach((i, r) => (out[i] = x[r]!));
  return out;
}

const predict = (q: Point, p: number[]) => q.units.reduce((s, u, j) => s + u * p[j]!, 0);
const wrms = (points: Point[], p: number[]) => Math.sqrt(points.reduce((s, q) => s + q.weight * (predict(q, p) - q.us) ** 2, 0) / points.length);

/** Non-negative fit: every subset of the candidate prices fitted freely (the other candidates 0), the best with no negative price. */
function nnFit(points: Point[], candidates: number[], fixed: number[]): number[] {
  let best: number[] | undefined;
  let bestErr = Infinity;
  for (let mask = 1; mask < 1 << candidates.length; mask++) {
    const free = candidates.filter((_, i) => mask & (1 << i));
    const p = lsq(
      points,
      free,
      fixed.map((v, j) => (candidates.includes(j) ? 0 : v)),
    );
    if (!p || free.some((j) => p[j]! < 0)) continue;
    const e = wrms(points, p);
    if (e < bestErr) [best, bestErr] = [p, e];
  }
  if (!best) throw new Error('no non-negative fit');
  return best;
}

const byName = new Map(batches.map((b) => [b.name, counts(b)]));
const isTranspose = (op: string) => op === 'v*A' || op === 'AT*M';
const ofMode = (scalar: boolean) => timings.filter((t) => (t.k % 4 === 0) !== scalar);

/** Stage 1: CSR and gather-only products give the base, invocation and term prices. */
function gatherPoints(scalar: boolean): Point[] {
  return ofMode(scalar).flatMap((t) =>
    (['csr', 'gather'] as const).map((impl) => {
      const us = 1000 * (impl === 'csr' ? t.csr : t.gather);
      return { label: `${t.batch} ${t.op} ${impl}`, units: units(byName.get(t.batch)!, t.k, isTranspose(t.op), impl), us, weight: 1 / us ** 2 };
    }),
  );
}

/** Stage 2: the fill (runs − gather only, where something is cached) gives the fill's dispatch and copy prices. */
function fillPoints(scalar: boolean): Point[] {
  return ofMode(scalar)
    .filter((t) => byName.get(t.batch)!.cachedCodes > 0)
    .map((t) => ({
      label: `${t.batch} ${t.op} fill`,
      units: units(byName.get(t.batch)!, t.k, isTranspose(t.op), 'fill'),
      us: 1000 * (t.runs - t.gather),
      weight: 1 / (1000 * t.runs) ** 2,
    }));
}

function fitMode(scalar: boolean, copy?: number): { prices: number[]; gather: Point[]; fill: Point[] } {
  const gather = gatherPoints(scalar);
  const g = nnFit(gather, [0, 2, 3], [0, 0, 0, 0, 0]);
  const fill = fillPoints(scalar);
  const prices = copy === undefined ? nnFit(fill, [1, 4], g) : nnFit(fill, [1], [...g.slice(0, 4), copy]);
  return { prices, gather, fill };
}

const quad = fitMode(false);
// At k = 1 a copy is a few hundred floats: the scalar fit takes the quad fit's copy price.
const scalar = fitMode(true, quad.prices[4]);

const asPrices = (p: number[]): RunsPrices => ({ base: p[0]!, dispatch: p[1]!, invocation: p[2]!, term: p[3]!, copy: p[4]! });
const fmt = (p: RunsPrices) =>
  `{ base: ${p.base.toPrecision(3)}, dispatch: ${p.dispatch.toPrecision(3)}, invocation: ${p.invocation.toPrecision(3)}, ` +
  `term: ${p.term.toPrecision(3)}, copy: ${p.copy.toPrecision(3)} }`;
console.log(`report: ${values.report ?? `git show ${rev}:bench/results/toc-kernels.md`}`);
for (const [name, fit] of [
  ['scalar (k = 1)', scalar],
  ['quad (k = 64)', quad],
] as const) {
  const all = [...fit.gather, ...fit.fill];
  console.log(`\n${name}: ${fmt(asPrices(fit.prices))} (µs per unit); weighted rms error ${(100 * wrms(all, fit.prices)).toFixed(1)}% of the product`);
  for (const q of all)
    console.log(`  ${q.label.padEnd(38)} measured ${q.us.toFixed(1).padStart(8)} µs  fit ${predict(q, fit.prices).toFixed(1).padStart(8)} µs`);
}
console.log(`\nRUNS_PRICES = {\n  scalar: ${fmt(asPrices(scalar.prices))},\n  quad: ${fmt(asPrices(quad.prices))},\n};`);
