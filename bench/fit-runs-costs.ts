// Fits the prices of the runs kernels' cost model (src/toc/gpu-runs.ts, RUNS_PRICES and runsCost) to a kernel bench
// report (bench/results/toc-kernels.md format): its GPU-side medians of CSR, runs and "gather only" per batch and op.
// Each timed product is a sum of work units (runsCost's): dispatches beyond the first, invocations, terms and floats of M
// copied into X; a least-squares fit on relative errors with non-negative prices gives one price per unit, separately for
// the scalar products (A*v, v*A: k = 1) and the quad ones (A*M, AT*M: k = 64). The scalar fit takes the quad fit's copy
// price (at k = 1 the copy is a few hundred floats and cannot be told from a dispatch).
// The batches whose report shows cached codes are rebuilt here from the bundled datasets with the rule that report ran
// (session 6: { cache: 'terms' } for all products; session 8's format: the cost rule at each k, with the prices of the
// checkout) to count their inline pairs, runs and uses; the counts must match the report's |S| and nnz. Batches with
// nothing cached need only the report's rows, cols and nnz.
// Usage: npx tsx bench/fit-runs-costs.ts [--rev GIT_REV].. [--report FILE[@GIT_REV]]..
//   --rev: bench/results/toc-kernels.md as committed at GIT_REV (default, when no report is named: 5c98c27, session 6's);
//   --report: a report file; @GIT_REV names the commit whose RUNS_PRICES chose its cached codes (session 8's format),
//   where the report does not print them and they differ from this checkout's. The points of all reports are pooled.
import { execSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { concatRows, frequencyOrder, permuteColumns, sliceRows, sparseFromLogical } from '../src/toc/choose.js';
import { readTocRecord, validateTocManifest } from '../src/toc/dataset.js';
import type { TocBatch } from '../src/toc/batch.js';
import {
  bothSides,
  boundsSpan,
  invocationWidth,
  laneRows,
  laneSpan,
  tocRunsLayout,
  type RunsCostInput,
  type RunsLayoutOptions,
  type RunsPrices,
  type RunsSideCounts,
  type SidePrices,
  type TocRunsLayout,
} from '../src/toc/gpu-runs.js';
import { encodeDense, encodeSparse, toBatch, type SparseRows } from '../src/toc/index.js';
import { mnistLike, randomMatrix, rng } from '../test/unit/toc/generators.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    report: { type: 'string', multiple: true },
    rev: { type: 'string', multiple: true },
    pooled: { type: 'boolean' },
    lanes: { type: 'string' },
  },
});
const git = (what: string) => execSync(`git show ${what}`, { cwd: ROOT, encoding: 'utf8' });

type PriceTable = { scalar: SidePrices; quad: SidePrices };
/** One report: its text, and the prices its cost-rule layouts were built with (undefined: this checkout's). */
interface Report {
  name: string;
  text: string;
  prices?: PriceTable;
}

/** Session 8 and before: one RunsPrices per form, the same on both sides. */
const normalise = (t: { scalar: RunsPrices | SidePrices; quad: RunsPrices | SidePrices }): PriceTable => {
  const side = (p: RunsPrices | SidePrices): SidePrices => ('base' in p ? bothSides(p) : p);
  return { scalar: side(t.scalar), quad: side(t.quad) };
};

/** RUNS_PRICES as written in src/toc/gpu-runs.ts at a commit (session 8's format: one price set per form). */
function pricesAt(rev: string): PriceTable {
  const src = git(`${rev}:src/toc/gpu-runs.ts`);
  const block = /RUNS_PRICES[^=]*=\s*\{([\s\S]*?)\n\};/.exec(src)?.[1];
  const one = (name: string): RunsPrices => {
    const body = new RegExp(`${name}: \\{([^}]*)\\}`).exec(block ?? '')?.[1];
    if (!body) throw new Error(`no RUNS_PRICES.${name} in src/toc/gpu-runs.ts at ${rev}`);
    return Object.fromEntries(
      body
        .split(',')
        .map((kv) => kv.split(':').map((x) => x.trim()))
        .map(([k, v]) => [k, Number(v)]),
    ) as unknown as RunsPrices;
  };
  return normalise({ scalar: one('scalar'), quad: one('quad') });
}

/** Prices a session-8 report prints ("- runs cost prices (µs): {json}"), if it does. */
function printedPrices(text: string): Report['prices'] {
  const line = /^- runs cost prices \(µs\): (.*)$/m.exec(text)?.[1];
  return line ? normalise(JSON.parse(line)) : undefined;
}

/** The layout options a report printed ("- runs layout caching rule (...): {json}"): not the lab's defaults. */
function printedOptions(text: string): RunsLayoutOptions {
  const line = /^- runs layout caching rule[^:]*: (.*)$/m.exec(text)?.[1];
  return line ? JSON.parse(line) : {};
}

const reports: Report[] = [
  ...(values.rev ?? (values.report ? [] : ['5c98c27'])).map((rev) => {
    const text = git(`${rev}:bench/results/toc-kernels.md`);
    return { name: `git show ${rev}:bench/results/toc-kernels.md`, text, prices: printedPrices(text) };
  }),
  ...(values.report ?? []).map((spec) => {
    const [file, rev] = spec.split('@');
    const text = readFileSync(file!, 'utf8');
    return { name: spec, text, prices: rev ? pricesAt(rev) : printedPrices(text) };
  }),
];

// ---------------------------------------------------------------- the report's tables

/** The markdown table after the heading that starts with `heading`: its rows as objects keyed by the header's cells. */
function table(text: string, heading: string): Array<Record<string, string>> {
  const lines = text.split('\n');
  const h = lines.findIndex((l) => l.startsWith(heading));
  if (h < 0) throw new Error(`no section "${heading}" in the report`);
  const at = lines.findIndex((l, i) => i > h && l.startsWith('| '));
  const cells = (l: string) =>
    l
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim().replace(/\\\|/g, '|'));
  const head = cells(lines[at]!);
  const out: Array<Record<string, string>> = [];
  for (let i = at + 2; i < lines.length && lines[i]!.startsWith('|'); i++) out.push(Object.fromEntries(cells(lines[i]!).map((c, j) => [head[j]!, c])));
  return out;
}
const num = (s: string | undefined): number => Number((s ?? 'NaN').replace(/,/g, '').replace(/×$/, ''));

interface ReportBatch {
  name: string;
  rows: number;
  cols: number;
  nnz: number;
  /**
   * Codes cached per k and side, and the rule that cached them: session 6's reports have one layout for all four products
   * (the terms rule), session 8's one per k (the cost rule, one set for both sides, with the prices of that commit), session
   * 10's one per k with a set per side.
   */
  cached: Map<number, { row: number; col: number }>;
  options: RunsLayoutOptions;
  prices?: Report['prices'];
}
const batchesOf = (r: Report): ReportBatch[] =>
  table(r.text, '## Batches').map((c) => {
    const [rows, cols] = c['rows × cols']!.split('×').map((x) => num(x.trim()));
    const perSide = c['cached |S| A·M / Aᵀ·M, k = 1 ; 64'];
    const perK = c['cached |S| k = 1 / 64'];
    const both = (n: number) => ({ row: n, col: n });
    const cached = perSide
      ? new Map(
          perSide.split(';').map((x, i) => {
            const [row, col] = x.split('/').map((y) => num(y.trim()));
            return [i === 0 ? 1 : 64, { row: row!, col: col! }];
          }),
        )
      : perK
        ? new Map(perK.split('/').map((x, i) => [i === 0 ? 1 : 64, both(num(x.trim()))]))
        : new Map([
            [1, both(num(c['cached |S|']))],
            [64, both(num(c['cached |S|']))],
          ]);
    const printed = printedOptions(r.text);
    // Session 8's reports (one set per k, no options printed) ran the one-set cost rule; session 6's the terms rule.
    const options: RunsLayoutOptions = perSide ? printed : perK ? { sides: 'one', ...printed } : { cache: 'terms' };
    return { name: c.batch!, rows: rows!, cols: cols!, nnz: num(c.nnz), cached, options, prices: r.prices };
  });

interface Timing {
  report: string;
  batch: string;
  op: string;
  k: number;
  runs: number;
  csr: number;
  gather: number;
}
const timings: Timing[] = reports.flatMap((r) =>
  table(r.text, '## The same trials, GPU side').map((c) => ({
    report: r.name,
    batch: c.batch!,
    op: c.op!,
    k: num(c.k),
    runs: num(c.runs),
    csr: num(c.CSR),
    gather: num(c['gather only']),
  })),
);
const batches = new Map(reports.map((r) => [r.name, batchesOf(r)]));

// ---------------------------------------------------------------- the batches' counts

function firstRecord(dir: string, under = 'datasets'): SparseRows {
  const base = join(ROOT, 'public', under, dir);
  const manifest = validateTocManifest(JSON.parse(readFileSync(join(base, 'manifest.json'), 'utf8')), dir);
  const entry = manifest.splits.train.records[0]!;
  const frames = readTocRecord(new Uint8Array(readFileSync(join(base, entry.file))), entry, { classes: manifest.classes.length, columns: manifest.columns });
  return concatRows(frames.map((f) => sparseFromLogical(f.logical)));
}
const tables: Record<string, SparseRows> = { flights: firstRecord('flights-250k-toc'), birdstrikes: firstRecord('birdstrikes-toc') };
const FASHION = join(ROOT, 'public', 'data', 'fashion-mnist-toc', 'manifest.json');

/** The bench's batch of that name, rebuilt as bench/gpu/kernels.ts builds it; undefined where its data is not here. */
function rebuild(name: string): TocBatch | undefined {
  const m = /^(\w+) (\d+)( frequency| source)?$/.exec(name);
  const source = m && tables[m[1]!];
  if (source) {
    const ordered = m[3] === ' frequency' ? permuteColumns(source, frequencyOrder(source)) : source;
    return toBatch(encodeSparse(sliceRows(ordered, 0, Number(m[2]))));
  }
  if (name === 'sparse random 250')
    return toBatch(encodeDense(randomMatrix(rng(21), { rows: 250, cols: 1000, density: 0.05, distinctValues: 4 }, 'f32'), 250, 1000));
  if (name === 'mnist-like 250') return toBatch(encodeDense(mnistLike(250, 3), 250, 784));
  if (name === 'Fashion-MNIST 250' && existsSync(FASHION)) return toBatch(encodeSparse(sliceRows(firstRecord('fashion-mnist-toc', 'data'), 0, 250)));
  return undefined;
}

/** A rebuilt batch's layout at k by the report's rule (its cached sets must match the report's), and CSR's lists. */
interface Rebuilt {
  layout: TocRunsLayout;
  rowNnz: Uint32Array;
  colNnz: Uint32Array;
}
function rebuilt(b: ReportBatch, k: number): Rebuilt | undefined {
  const batch = rebuild(b.name);
  if (!batch) return undefined;
  const cached = b.cached.get(k)!;
  const prices = b.prices && (k % 4 === 0 ? b.prices.quad : b.prices.scalar);
  const l = tocRunsLayout(batch, { ...b.options, k, ...(prices ? { prices } : {}) });
  if (l.model.nnz !== b.nnz || l.rowCached !== cached.row || l.colCached !== cached.col)
    throw new Error(
      `${b.name}, k = ${k}: rebuilt nnz ${l.model.nnz}, |S| ${l.rowCached} / ${l.colCached}; the report says ${b.nnz}, ` +
        `${cached.row} / ${cached.col} (other prices?)`,
    );
  const none = tocRunsLayout(batch, { cache: 'none' });
  const lengths = (bounds: Uint32Array) => Uint32Array.from({ length: bounds.length - 1 }, (_, i) => bounds[i + 1]! - bounds[i]!);
  return { layout: l, rowNnz: lengths(none.rowBounds), colNnz: lengths(none.colBounds) };
}

/** The counts runsCost prices, with the lists padded for `lanes` lockstep invocations at k. */
function counts(r: Rebuilt, k: number, lanes: number): RunsCostInput {
  const l = r.layout;
  const g = laneRows(k, lanes);
  const side = (cachedCodes: number, gather: Uint32Array, fill: Uint32Array, csr: Uint32Array) => ({
    cachedCodes,
    gatherSpan: boundsSpan(gather, g),
    fillSpan: boundsSpan(fill, g),
    csrSpan: laneSpan(csr.length, (i) => csr[i]!, g),
  });
  return {
    rows: l.rows,
    cols: l.cols,
    row: side(l.rowCached, l.rowBounds, l.runOffsets, r.rowNnz),
    col: side(l.colCached, l.colBounds, l.occurrenceOffsets, r.colNnz),
  };
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
  const s: RunsSideCounts = transpose ? m.col : m.row;
  if (impl === 'csr') return [1, 0, w * outRows, w * s.csrSpan, 0];
  if (impl === 'gather') return [1, 0, w * outRows, w * s.gatherSpan, 0];
  return [0, 1, w * s.cachedCodes, w * s.fillSpan, (transpose ? m.rows : m.cols) * k];
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

const memo = new Map<string, Rebuilt | undefined>();
/** A timing's batch rebuilt at its k (slow: once each); undefined where its data is not here (its points are left out). */
function rebuiltOf(t: Timing): Rebuilt | undefined {
  const key = `${t.report}|${t.batch}|${t.k}`;
  if (!memo.has(key)) memo.set(key, rebuilt(batches.get(t.report)!.find((b) => b.name === t.batch)!, t.k));
  return memo.get(key);
}
const isTranspose = (op: string) => op === 'v*A' || op === 'AT*M';
type Side = 'row' | 'col' | 'both';
/** The timings of one form (scalar: k = 1; quad: k = 64) and side (row: A*v, A*M; col: v*A, AT*M; both: pooled, session 8's fit). */
const ofMode = (scalar: boolean, side: Side) =>
  timings.filter((t) => (t.k % 4 === 0) !== scalar && (side === 'both' || isTranspose(t.op) === (side === 'col')) && rebuiltOf(t));
const labelOf = (t: Timing) => `${reports.length > 1 ? `[${reports.findIndex((r) => r.name === t.report) + 1}] ` : ''}${t.batch} ${t.op}`;
const left = [...new Set(timings.filter((t) => !rebuiltOf(t)).map((t) => t.batch))];

/** Stage 1: CSR and gather-only products give the base, invocation and term prices. */
function gatherPoints(scalar: boolean, side: Side, lanes: number): Point[] {
  return ofMode(scalar, side).flatMap((t) =>
    (['csr', 'gather'] as const).map((impl) => {
      const us = 1000 * (impl === 'csr' ? t.csr : t.gather);
      return { label: `${labelOf(t)} ${impl}`, units: units(counts(rebuiltOf(t)!, t.k, lanes), t.k, isTranspose(t.op), impl), us, weight: 1 / us ** 2 };
    }),
  );
}

/** Stage 2: the fill (runs − gather only, where the op's side cached something) gives the fill's dispatch and copy prices. */
function fillPoints(scalar: boolean, side: Side, lanes: number): Point[] {
  return ofMode(scalar, side)
    .filter((t) => (isTranspose(t.op) ? rebuiltOf(t)!.layout.colCached : rebuiltOf(t)!.layout.rowCached) > 0)
    .map((t) => ({
      label: `${labelOf(t)} fill`,
      units: units(counts(rebuiltOf(t)!, t.k, lanes), t.k, isTranspose(t.op), 'fill'),
      us: 1000 * (t.runs - t.gather),
      weight: 1 / (1000 * t.runs) ** 2,
    }));
}

function fitMode(scalar: boolean, side: Side, lanes: number, copy?: number): { prices: number[]; gather: Point[]; fill: Point[] } {
  const gather = gatherPoints(scalar, side, lanes);
  const g = nnFit(gather, [0, 2, 3], [0, 0, 0, 0, 0]);
  const fill = fillPoints(scalar, side, lanes);
  const prices = copy === undefined ? nnFit(fill, [1, 4], g) : nnFit(fill, [1], [...g.slice(0, 4), copy]);
  return { prices, gather, fill };
}

/** Both forms for one side: the scalar fit takes the quad fit's copy price (at k = 1 a copy is a few hundred floats). */
function fitSide(side: Side, lanes: number) {
  const quad = fitMode(false, side, lanes);
  return { quad, scalar: fitMode(true, side, lanes, quad.prices[4]) };
}
const fitAll = (lanes: number) => ({ lanes, row: fitSide('row', lanes), col: fitSide('col', lanes), both: fitSide('both', lanes) });
type Fits = ReturnType<typeof fitAll>;
/** Weighted rms error of the products (CSR and gather only) over both forms, per side or pooled. */
const productError = (f: Fits, sides: Array<'row' | 'col' | 'both'>) => {
  const parts = sides.flatMap((side) => (['scalar', 'quad'] as const).map((form) => f[side][form]));
  const n = parts.reduce((sum, p) => sum + p.gather.length, 0);
  return Math.sqrt(parts.reduce((sum, p) => sum + wrms(p.gather, p.prices) ** 2 * p.gather.length, 0) / n);
};

reports.forEach((r, i) => console.log(`report [${i + 1}]: ${r.name}`));
if (left.length) console.log(`left out (no data here to rebuild them): ${left.join(', ')}`);
// Lanes: every width tried, the one with the least product error (per-side prices) kept, unless --lanes names one.
const LANE_CHOICES = [1, 2, 4, 8, 16, 32];
const tried = LANE_CHOICES.map(fitAll);
console.log('\nlanes: weighted rms error of the products (CSR and gather only), per-side prices / pooled prices; scalar / quad');
for (const f of tried)
  console.log(
    `  ${String(f.lanes).padStart(2)}: all ${(100 * productError(f, ['row', 'col'])).toFixed(1)}% / ` +
      `${(100 * productError(f, ['both'])).toFixed(1)}%; ` +
      `scalar row ${(100 * wrms(f.row.scalar.gather, f.row.scalar.prices)).toFixed(1)}%, ` +
      `col ${(100 * wrms(f.col.scalar.gather, f.col.scalar.prices)).toFixed(1)}%`,
  );
const fits = values.lanes
  ? fitAll(Number(values.lanes))
  : tried.reduce((best, f) => (productError(f, ['row', 'col']) < productError(best, ['row', 'col']) ? f : best));

const asPrices = (p: number[]): RunsPrices => ({ base: p[0]!, dispatch: p[1]!, invocation: p[2]!, term: p[3]!, copy: p[4]!, lanes: fits.lanes });
const fmt = (p: RunsPrices) =>
  `{ base: ${p.base.toPrecision(3)}, dispatch: ${p.dispatch.toPrecision(3)}, invocation: ${p.invocation.toPrecision(3)}, ` +
  `term: ${p.term.toPrecision(3)}, copy: ${p.copy.toPrecision(3)}, lanes: ${p.lanes} }`;
console.log(`\nlanes ${fits.lanes}:`);
for (const form of ['scalar', 'quad'] as const) {
  const pooled = fits.both[form].prices;
  for (const side of values.pooled ? (['both'] as const) : (['row', 'col'] as const)) {
    const fit = fits[side][form];
    const all = [...fit.gather, ...fit.fill];
    const name = `${form} (k = ${form === 'scalar' ? 1 : 64}), ${side === 'both' ? 'both sides pooled' : `${side} side`}`;
    console.log(`\n${name}: ${fmt(asPrices(fit.prices))} (µs per unit)`);
    console.log(
      `  weighted rms error: products ${(100 * wrms(fit.gather, fit.prices)).toFixed(1)}%, fills ${(100 * wrms(fit.fill, fit.prices)).toFixed(1)}% ` +
        `of the product; with the pooled prices (one set for both sides): ${(100 * wrms(fit.gather, pooled)).toFixed(1)}%, ` +
        `${(100 * wrms(fit.fill, pooled)).toFixed(1)}%`,
    );
    for (const q of all)
      console.log(
        `  ${q.label.padEnd(46)} measured ${q.us.toFixed(1).padStart(8)} µs  fit ${predict(q, fit.prices).toFixed(1).padStart(8)} µs` +
          `  pooled ${predict(q, pooled).toFixed(1).padStart(8)} µs`,
      );
  }
}
console.log(
  values.pooled
    ? `\nRUNS_PRICES (pooled) = {\n  scalar: ${fmt(asPrices(fits.both.scalar.prices))},\n  quad: ${fmt(asPrices(fits.both.quad.prices))},\n};`
    : `\nRUNS_PRICES = {\n  scalar: {\n    row: ${fmt(asPrices(fits.row.scalar.prices))},\n    col: ${fmt(asPrices(fits.col.scalar.prices))},\n  },\n` +
        `  quad: {\n    row: ${fmt(asPrices(fits.row.quad.prices))},\n    col: ${fmt(asPrices(fits.col.quad.prices))},\n  },\n};`,
);
