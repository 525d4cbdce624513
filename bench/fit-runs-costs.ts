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
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { concatRows, frequencyOrder, permuteColumns, sliceRows, sparseFromLogical } from '../src/toc/choose.js';
import { readTocRecord, validateTocManifest } from '../src/toc/dataset.js';
import { invocationWidth, tocRunsLayout, type RunsCostInput, type RunsPrices } from '../src/toc/gpu-runs.js';
import { encodeSparse, toBatch, type SparseRows } from '../src/toc/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { report: { type: 'string', multiple: true }, rev: { type: 'string', multiple: true } } });
const git = (what: string) => execSync(`git show ${what}`, { cwd: ROOT, encoding: 'utf8' });

/** One report: its text, and the prices its cost-rule layouts were built with (undefined: this checkout's). */
interface Report {
  name: string;
  text: string;
  prices?: { scalar: RunsPrices; quad: RunsPrices };
}

/** RUNS_PRICES as written in src/toc/gpu-runs.ts at a commit. */
function pricesAt(rev: string): { scalar: RunsPrices; quad: RunsPrices } {
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
  return { scalar: one('scalar'), quad: one('quad') };
}

/** Prices a session-8 report prints ("- runs cost prices (µs): {json}"), if it does. */
function printedPrices(text: string): Report['prices'] {
  const line = /^- runs cost prices \(µs\): (.*)$/m.exec(text)?.[1];
  return line ? JSON.parse(line) : undefined;
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
   * Codes cached per k, and the rule that cached them: session 6's reports have one layout for all four products (the
   * terms rule), session 8's one per k (the cost rule, with the prices of that commit).
   */
  cached: Map<number, number>;
  rule: 'terms' | 'cost';
  prices?: Report['prices'];
}
const batchesOf = (r: Report): ReportBatch[] =>
  table(r.text, '## Batches').map((c) => {
    const [rows, cols] = c['rows × cols']!.split('×').map((x) => num(x.trim()));
    const perK = c['cached |S| k = 1 / 64'];
    const cached = perK
      ? new Map(perK.split('/').map((x, i) => [i === 0 ? 1 : 64, num(x.trim())]))
      : new Map([
          [1, num(c['cached |S|'])],
          [64, num(c['cached |S|'])],
        ]);
    return { name: c.batch!, rows: rows!, cols: cols!, nnz: num(c.nnz), cached, rule: perK ? 'cost' : 'terms', prices: r.prices };
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

function firstRecord(dir: string): SparseRows {
  const base = join(ROOT, 'public', 'datasets', dir);
  const manifest = validateTocManifest(JSON.parse(readFileSync(join(base, 'manifest.json'), 'utf8')), dir);
  const entry = manifest.splits.train.records[0]!;
  const frames = readTocRecord(new Uint8Array(readFileSync(join(base, entry.file))), entry, { classes: manifest.classes.length, columns: manifest.columns });
  return concatRows(frames.map((f) => sparseFromLogical(f.logical)));
}
const tables: Record<string, SparseRows> = { flights: firstRecord('flights-250k-toc'), birdstrikes: firstRecord('birdstrikes-toc') };

/** The counts of a report batch's layout at k: rebuilt (where it cached codes) or all inline (nothing cached). */
function counts(b: ReportBatch, k: number): RunsCostInput {
  const cached = b.cached.get(k)!;
  if (cached === 0) return { rows: b.rows, cols: b.cols, nnz: b.nnz, inlinePairs: b.nnz, cachedCodes: 0, cachedRunPairs: 0, cachedUses: 0 };
  const m = /^(\w+) (\d+)( frequency| source)?$/.exec(b.name);
  const source = m && tables[m[1]!];
  if (!source) throw new Error(`${b.name}: cached codes, but no table to rebuild it from`);
  const ordered = m[3] === ' frequency' ? permuteColumns(source, frequencyOrder(source)) : source;
  const prices = b.prices && (k % 4 === 0 ? b.prices.quad : b.prices.scalar);
  const l = tocRunsLayout(
    toBatch(encodeSparse(sliceRows(ordered, 0, Number(m[2])))),
    b.rule === 'terms' ? { cache: 'terms' } : { k, ...(prices ? { prices } : {}) },
  );
  if (l.model.nnz !== b.nnz || l.cached !== cached)
    throw new Error(`${b.name}, k = ${k}: rebuilt nnz ${l.model.nnz}, |S| ${l.cached}; the report says ${b.nnz}, ${cached} (other prices?)`);
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

const memo = new Map<string, RunsCostInput>();
/** The counts of a timing's batch at its k (rebuilding a batch is slow: once each). */
function byName(t: Timing): RunsCostInput {
  const key = `${t.report}|${t.batch}|${t.k}`;
  if (!memo.has(key)) memo.set(key, counts(batches.get(t.report)!.find((b) => b.name === t.batch)!, t.k));
  return memo.get(key)!;
}
const isTranspose = (op: string) => op === 'v*A' || op === 'AT*M';
const ofMode = (scalar: boolean) => timings.filter((t) => (t.k % 4 === 0) !== scalar);

/** Stage 1: CSR and gather-only products give the base, invocation and term prices. */
function gatherPoints(scalar: boolean): Point[] {
  return ofMode(scalar).flatMap((t) =>
    (['csr', 'gather'] as const).map((impl) => {
      const us = 1000 * (impl === 'csr' ? t.csr : t.gather);
      return {
        label: `${reports.length > 1 ? `[${reports.findIndex((r) => r.name === t.report) + 1}] ` : ''}${t.batch} ${t.op} ${impl}`,
        units: units(byName(t), t.k, isTranspose(t.op), impl),
        us,
        weight: 1 / us ** 2,
      };
    }),
  );
}

/** Stage 2: the fill (runs − gather only, where something is cached) gives the fill's dispatch and copy prices. */
function fillPoints(scalar: boolean): Point[] {
  return ofMode(scalar)
    .filter((t) => byName(t).cachedCodes > 0)
    .map((t) => ({
      label: `${reports.length > 1 ? `[${reports.findIndex((r) => r.name === t.report) + 1}] ` : ''}${t.batch} ${t.op} fill`,
      units: units(byName(t), t.k, isTranspose(t.op), 'fill'),
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
reports.forEach((r, i) => console.log(`report [${i + 1}]: ${r.name}`));
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
