// The TOC kernel benchmark: TOC, CSR and dense (tfjs tf.matMul) matrix products
// and logistic-regression epochs, timed side by side in one run on the WebGPU
// device tfjs uses. Starts a Vite dev server on a free localhost port, opens
// bench/gpu/kernels.html in Chromium (the flags of playwright.config.ts), waits
// for window.__bench, prints the tables and writes bench/results/toc-kernels.md.
// Usage: flock /tmp/bytelab-bench.lock npx tsx bench/toc-kernels.ts [--trials N] [--epochs N (default 8)] [--target MS]
//        [--only NAME,..] [--e2e logreg,mlp|none] [--out FILE] [--cache cost|terms|all|none] [--min-saved-share F]
//        [--min-saved-per-code N] [--no-fashion] [--e2e-data flights|birdstrikes] [--e2e-rows N] [--e2e-order frequency|source]
//        [--plain unit|all|none]
// (default caching rule: the lab's, the cost rule at each product's k; the share and per-code knobs imply --cache terms)
// (the lock keeps benches on this shared machine from running at the same time; the report records the load average).
// Real Fashion-MNIST: the bench builds public/data/fashion-mnist-toc (npm run data:toc:fashion) when it is missing,
// installing Debian's dataset-fashion-mnist first when run as root (as scripts/datasets.mjs does); --no-fashion, or
// neither the build nor the package, leaves synthetic MNIST-like digits in its place.
import { execSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium, type Browser } from '@playwright/test';
import { createServer, type ViteDevServer } from 'vite';
import { freePort, pageResults } from './support/lab-browser.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/support/chromium.js';
import type { BenchResults, E2eImpl, OpName } from './gpu/kernels.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PAGE = '/bench/gpu/kernels.html';
const PAGE_TIMEOUT_MS = 25 * 60_000;

const { values } = parseArgs({
  options: {
    trials: { type: 'string' },
    epochs: { type: 'string' },
    target: { type: 'string' },
    only: { type: 'string' },
    cache: { type: 'string' },
    sides: { type: 'string' },
    'min-saved-share': { type: 'string' },
    'min-saved-per-code': { type: 'string' },
    e2e: { type: 'string' },
    out: { type: 'string' },
    'no-fashion': { type: 'boolean' },
    'e2e-data': { type: 'string' },
    'e2e-rows': { type: 'string' },
    'e2e-order': { type: 'string' },
    plain: { type: 'string' },
  },
});

const RESULTS = values.out ? resolve(values.out) : join(ROOT, 'bench', 'results', 'toc-kernels.md');

function positive(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!(n > 0)) throw new Error(`--${name} must be a positive number, got "${value}"`);
  return n;
}

const T0 = performance.now();
const log = (line: string): void => void process.stderr.write(`bench [${((performance.now() - T0) / 1000).toFixed(1)} s]: ${line}\n`);

// ---------------------------------------------------------------- formatting

type Align = 'l' | 'r';

/**
 * A markdown table whose columns are padded, so it reads as well in a terminal
 * as rendered. With `md`, pipes inside cells are escaped (|I| becomes \|I\|).
 */
function table(md: boolean, head: string[], body: string[][], align: Align[]): string[] {
  const escapePipes = (cells: string[]) => (md ? cells.map((c) => c.replace(/\|/g, '\\|')) : cells);
  head = escapePipes(head);
  const rows = body.map(escapePipes);
  const widths = head.map((h, c) => Math.max(3, h.length, ...rows.map((r) => r[c]!.length)));
  const pad = (s: string, c: number) => (align[c] === 'r' ? s.padStart(widths[c]!) : s.padEnd(widths[c]!));
  const line = (cells: string[]) => `| ${cells.map(pad).join(' | ')} |`;
  const rule = `| ${widths.map((w, c) => (align[c] === 'r' ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(head), rule, ...rows.map(line), ''];
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
/** Milliseconds with 3 significant digits. */
const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toPrecision(3));
const ratio = (n: number): string => `${n >= 10 ? n.toFixed(1) : n.toFixed(2)}×`;
function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(2)} MiB`;
}
const err = (e: number): string => (e === 0 ? '0' : e.toExponential(1));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

// ---------------------------------------------------------------- report

const IMPL_LABEL: Record<E2eImpl, string> = {
  runs: 'TOC runs',
  runsBiasPass: 'TOC runs, bias (and ReLU) in a pass of their own (before session 34)',
  runsTfjsRest: 'TOC runs, loss, output layer and Adam by tfjs (before session 13)',
  csr: 'CSR',
  csrAgain: 'CSR again (A/A control)',
  dense: 'dense',
  skip: 'skipped',
};

function layerLabel(name: E2eImpl): string {
  if (name === 'dense') return 'tf.fused.matMul, dense';
  if (name === 'skip') return 'none (floor: zero output, zero gradients)';
  return `tocMatMul, ${IMPL_LABEL[name]}`;
}

/** The 1, 5 and 15 minute load averages, at the start and at the end of the bench. */
const LOAD_AT_START = os.loadavg();
const loadavg = (l: number[]): string => l.map((x) => x.toFixed(2)).join(' / ');

/** min / median / max of the per-round ratios a[i] / b[i]. */
function spread(a: number[], b: number[]): string {
  const rs = a.map((x, i) => x / b[i]!);
  return `${ratio(Math.min(...rs))} / ${ratio(median(rs))} / ${ratio(Math.max(...rs))}`;
}

/** min / median / max of the per-round shares (a[i] − b[i]) / a[i], as percentages. */
function shareSpread(a: number[], b: number[]): string {
  const rs = a.map((x, i) => (100 * (x - b[i]!)) / x);
  const pc = (n: number) => `${n.toFixed(0)}%`;
  return `${pc(Math.min(...rs))} / ${pc(median(rs))} / ${pc(Math.max(...rs))}`;
}

/** The report; `md` for the file (escaped pipes, and the per-batch appendix), else for the terminal. */
function report(r: BenchResults, browserVersion: string, seconds: number, loadAtEnd: number[], md: boolean): string {
  const cpus = os.cpus();
  const lines: string[] = [];
  const para = (...text: string[]) => lines.push(...text, '');
  const epochs = r.endToEnd[0]?.epochs ?? 0;

  lines.push('# TOC kernels on the tfjs WebGPU device', '');
  lines.push(`- date: ${new Date().toISOString()}`);
  lines.push(
    `- adapter: ${r.adapter}${r.adapterDescription ? ` (${r.adapterDescription})` : ''}; timestamp-query ` +
      `${r.gpuTimes ? 'available, used for GPU-side times' : r.timestampQuery ? 'available, not used' : 'not available'}`,
  );
  lines.push(`- browser: Chromium ${browserVersion}, headless, ${CHROMIUM_ARGS.join(' ')}`);
  lines.push(`- machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${os.type()} ${os.release()}`);
  lines.push(
    `- settings: ${r.trials} timed rounds per product of about ${r.targetMs} ms per trial; ${epochs} epochs per training run; ` +
      `whole bench ${seconds.toFixed(0)} s`,
  );
  lines.push(
    `- load average (1 / 5 / 15 min): ${loadavg(LOAD_AT_START)} at the start, ${loadavg(loadAtEnd)} at the end ` +
      '(run under flock /tmp/bytelab-bench.lock: no other bench at the same time; tests and builds of others may run)',
  );
  if (Object.keys(r.layoutOptions).length)
    lines.push(`- runs layout caching rule (RunsLayoutOptions, not the lab's defaults): ${JSON.stringify(r.layoutOptions)}`);
  // One line of JSON, so bench/fit-runs-costs.ts can rebuild the layouts this run timed.
  lines.push(`- runs cost prices (µs): ${JSON.stringify(r.prices)}`);
  if (r.only.length) lines.push(`- batches: only those named ${r.only.map((o) => `"${o}…"`).join(', ')}`);
  lines.push('');
  if (/swiftshader/i.test(`${r.adapter} ${r.adapterDescription}`)) {
    para(
      '> **SwiftShader is a CPU emulation; only ratios mean much.** Absolute times here say little about real GPUs: a workgroup runs on one CPU',
      '> thread and "GPU memory" is host memory. No real GPU was lent to this task (the device tool reported can_start_another = false), so every',
      '> figure below is SwiftShader on a shared 2-core machine (other engineers work on it too: expect noise; hence the per-round spreads).',
    );
  }
  para(
    'Implementations: **runs** = the TOC resolved-runs kernels (TocRunsGpuBatch, shaders/toc_runs.wgsl, docs/toc.md "Kernel design");',
    '**CSR** = CsrGpuBatch (csr.wgsl, CSR + CSC copies). Both with the same two kernel choices on: 4 output columns per invocation (quad',
    'entry points, vec4 loads and stores) when the operands are row-major and k is a multiple of 4 (A*M and AT*M here, k = 64), and no value',
    'loads when every value of the batch is 1 (flights). **runs basic** / **CSR basic** = the same kernels with both choices off (one output',
    'column per invocation, values loaded): what the two formats cost before this change, on equal terms. **tree** = the level-by-level',
    'tree kernels (TocGpuBatch). **dense** = tf.matMul on a dense tensor. T / nnz = the terms per output column the runs kernels sum over the',
    "non-zeros CSR sums. The runs layout is built per k, as the lab builds it for its model's first layer: k = 1 for A*v and v*A, k = 64 for",
    'A*M and AT*M; the default rule caches, for each side (A*v, A*M: rows; v*A, AT*M: columns), the codes that runsCost (src/toc/gpu-runs.ts,',
    'prices fitted per side to SwiftShader runs of sessions 6 and 8) says pay at that k. **predicted** = runsCost runs / CSR for that product',
    'and layout: a prediction made before timing, not a measurement.',
  );

  lines.push('## Encoding choice (src/toc/choose.ts) on the first record of each bundled table', '');
  lines.push(
    ...table(
      md,
      [
        'table',
        'batch rows',
        'column order',
        'whole batches',
        'nnz',
        'nnz / |D|',
        'batches caching',
        'cached codes A·M / Aᵀ·M',
        'T / nnz',
        'predicted',
        'chosen',
      ],
      r.encodings.flatMap((e) =>
        e.candidates.map((c) => [
          e.table,
          int(c.batchRows),
          c.columnOrder,
          String(c.batches),
          int(c.nnz),
          (c.nnz / c.codes).toFixed(2),
          String(c.batchesCaching),
          `${int(c.cachedRow)} / ${int(c.cachedCol)}`,
          c.workRatio.toFixed(3),
          c.costRatio.toFixed(3),
          c === e.chosen || (c.batchRows === e.chosen.batchRows && c.columnOrder === e.chosen.columnOrder) ? '◀' : '',
        ]),
      ),
      ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
  );
  para(
    `At k = ${r.encodings[0]?.candidates[0]?.k ?? 64} (the TOC MLP's). chooseEncoding: the least predicted runs / CSR time (runsCost over the`,
    'batches, A·M + Aᵀ·M), a larger batch only if it is predicted 5% cheaper than the best smaller one. Frequency order = columns by',
    "descending non-zero count. Whole batches only (a last partial batch is left out). T / nnz with the cost rule's cached codes (1: none).",
  );

  lines.push('## Batches', '');
  lines.push(
    ...table(
      md,
      // biome-ignore format: one header row reads best on one line
      ['batch', 'rows × cols', 'nnz', '|I|', '|D|', 'cached |S| A·M / Aᵀ·M, k = 1 ; 64', 'nnz / |D|', 'tree terms A·M ²',
        'T / nnz k = 1 / 64 ³', 'predicted k = 1 / 64', 'index bits', 'TOC1 bytes', 'source'],
      r.batches.map((b) => {
        const per = (f: (l: BenchResults['batches'][number]['layouts'][number]) => string, join = ' / ') => b.layouts.map(f).join(join);
        return [
          b.name,
          `${b.rows} × ${b.cols}`,
          int(b.nnz),
          int(b.firstLayer),
          int(b.codes),
          per((l) => `${int(l.model.row.cachedCodes)} / ${int(l.model.col.cachedCodes)}`, ' ; '),
          (b.nnz / b.codes).toFixed(2),
          ratio((b.nodes - 1 + b.codes) / b.nnz),
          per((l) => (l.model.nnz ? (l.model.terms / l.model.nnz).toFixed(3) : '—')),
          per((l) => l.cost.ratio.toFixed(3)),
          String(b.indexBits),
          int(b.tocFileBytes),
          b.source,
        ];
      }),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
  );
  const realFashion = r.batches.some((b) => b.name.startsWith('Fashion-MNIST'));
  para(
    'flights: bundled flights-250k (487 one-hot and bucket columns); birdstrikes: bundled birdstrikes (409 columns);',
    realFashion
      ? `Fashion-MNIST: ${FASHION_DIR} (npm run data:toc:fashion from Debian's dataset-fashion-mnist), first record of train, pixels q/255.`
      : 'Fashion-MNIST was not built for this run (--no-fashion, or no dataset-fashion-mnist), so MNIST-like synthetic digits stand in.',
    'Cached |S|: codes the runs layout caches for products with k output columns, for A·M / A·v (row side) and for Aᵀ·M / v·A (column',
    "side): each side has its own set (the lab's rule unless the settings say otherwise; --sides one: one set for both, session 8's rule).",
    'predicted: runsCost runs / CSR at that k, A·M + Aᵀ·M. ² Terms of the tree kernels A·M over nnz (one per non-root node plus one per code).',
    "³ The mean of the two sides' terms per output column over nnz.",
  );

  lines.push('## One-time costs per batch (median of 5)', '');
  lines.push(
    ...table(
      md,
      // biome-ignore format: one header row reads best on one line
      ['batch', 'encode (CPU)', 'runs layout (CPU)', 'tree layout (CPU)', 'runs upload', 'ms', 'tree upload', 'ms',
        'CSR upload ¹', 'ms', 'dense upload', 'ms', 'runs / CSR bytes'],
      r.oneTime.map((o) => [
        o.name,
        `${ms(o.encodeMs)} ms`,
        `${ms(o.runsLayoutMs)} ms`,
        `${ms(o.batchLayoutMs)} ms`,
        bytes(o.runsBytes),
        ms(o.runsUploadMs),
        bytes(o.tocBytes),
        ms(o.tocUploadMs),
        bytes(o.csrBytes),
        ms(o.csrUploadMs),
        bytes(o.denseBytes),
        ms(o.denseUploadMs),
        ratio(o.runsBytes / o.csrBytes),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  para(
    'Bytes moved to the GPU per batch. Layout = toBatch + tocRunsLayout / tocGpuLayout. Upload = creating the GPU buffers until the queue is idle',
    'again. ¹ includes building the CSC copy on the CPU, which CsrGpuBatch does in its constructor. Dense: rows × cols × 4 bytes.',
  );

  const ops: OpName[] = ['A*v', 'v*A', 'A*M', 'AT*M'];
  lines.push('## Check before timing: max |x − dense| / (1 + |dense|) against tf.matMul, runs / CSR / runs basic / CSR basic / tree', '');
  lines.push(
    ...table(
      md,
      ['batch', ...ops],
      r.batches.map((b) => [
        b.name,
        ...ops.map((op) => {
          const c = r.checks.find((x) => x.batch === b.name && x.op === op)!;
          return [c.errors.runs, c.errors.csr, c.errors.runsBasic, c.errors.csrBasic, c.errors.tree].map(err).join(' / ');
        }),
      ]),
      ['l', 'r', 'r', 'r', 'r'],
    ),
  );

  lines.push(`## Per operation, wall clock: ms per operation (median of ${r.trials} rounds) and per-round ratios (min / median / max)`, '');
  /** The layout an op's runs products used (by its k), and what it cached and predicted for that op. */
  const layoutOf = (name: string, k: number) => r.batches.find((x) => x.name === name)!.layouts.find((l) => l.k === k)!;
  /** The side of the layout an op runs on: A's rows (A*v, A*M) or columns (v*A, AT*M), each with its own cached set. */
  const sideOf = (name: string, k: number, op: OpName) => layoutOf(name, k).model[op === 'A*v' || op === 'A*M' ? 'row' : 'col'];
  const model = (name: string, k: number, op: OpName) => {
    const l = layoutOf(name, k);
    return l.model.nnz ? (sideOf(name, k, op).terms / l.model.nnz).toFixed(2) : '—';
  };
  const cachedOf = (name: string, k: number, op: OpName) => int(sideOf(name, k, op).cachedCodes);
  const predicted = (name: string, op: OpName, k: number) => {
    const c = layoutOf(name, k).cost;
    return (op === 'A*v' || op === 'A*M' ? c.times / c.csrTimes : c.transposeTimes / c.csrTransposeTimes).toFixed(2);
  };
  lines.push(
    ...table(
      md,
      // biome-ignore format: one header row reads best on one line
      ['batch', 'op', 'k', '|S|', 'runs', 'CSR', 'runs basic', 'CSR basic', 'tree', 'dense', 'runs / CSR (rounds)', 'predicted', 'T / nnz',
        'runs basic / CSR basic (rounds)', 'runs / runs basic (rounds)', 'CSR / CSR basic (rounds)', 'runs / dense (rounds)'],
      r.kernels.map((k) => [
        k.batch,
        k.op,
        String(k.k),
        cachedOf(k.batch, k.k, k.op),
        ms(k.ms.runs),
        ms(k.ms.csr),
        ms(k.ms.runsBasic),
        ms(k.ms.csrBasic),
        ms(k.ms.tree),
        ms(k.ms.dense),
        spread(k.trials.runs, k.trials.csr),
        predicted(k.batch, k.op, k.k),
        model(k.batch, k.k, k.op),
        spread(k.trials.runsBasic, k.trials.csrBasic),
        spread(k.trials.runs, k.trials.runsBasic),
        spread(k.trials.csr, k.trials.csrBasic),
        spread(k.trials.runs, k.trials.dense),
      ]),
      ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  para(
    'A*M: A (rows × cols) times M (cols × 64); AT*M: Aᵀ times M (rows × 64), the first-layer weight gradient as the lab computes it; A*v and',
    'v*A are the k = 1 cases (one output column: neither kernel choice but unit values applies). Ratios below 1× mean the first is faster.',
    'Each trial records R operations into one command encoder (TOC, CSR) or issues R tf.matMul calls (dense), then waits for',
    'device.queue.onSubmittedWorkDone(); R is picked so that a trial takes about the target time. Results are not read back while timing.',
    'A round runs one trial of each implementation in turn (the order shuffled each round since session 34; rotating before), so they',
    'share the state of the machine; the ratios are taken round by round and summarised as min / median / max.',
  );
  if (r.gpuTimes) {
    lines.push('## The same trials, GPU side: ms per operation between two timestamp-query marks (median), per-round ratios (min / median / max)', '');
    lines.push(
      ...table(
        md,
        // biome-ignore format: one header row reads best on one line
        ['batch', 'op', 'k', '|S|', 'runs', 'CSR', 'runs basic', 'CSR basic', 'tree', 'dense', 'runs / CSR (rounds)', 'predicted', 'T / nnz',
          'runs basic / CSR basic (rounds)', 'runs GPU / wall', 'gather only', 'gather only / CSR (rounds)', 'fill / runs (rounds)', 'runs packed',
          'runs packed / CSR (rounds)', 'runs / runs packed (rounds)'],
        r.kernels.map((k) => {
          const g = k.gpu!;
          const t = k.gpuTrials!;
          return [
            k.batch,
            k.op,
            String(k.k),
            cachedOf(k.batch, k.k, k.op),
            ms(g.runs),
            ms(g.csr),
            ms(g.runsBasic),
            ms(g.csrBasic),
            ms(g.tree),
            ms(g.dense),
            spread(t.runs, t.csr),
            predicted(k.batch, k.op, k.k),
            model(k.batch, k.k, k.op),
            spread(t.runsBasic, t.csrBasic),
            `${Math.round((100 * g.runs) / k.ms.runs)}%`,
            ms(g.runsGather),
            spread(t.runsGather, t.csr),
            shareSpread(t.runs, t.runsGather),
            ms(g.runsPacked),
            spread(t.runsPacked, t.csr),
            spread(t.runs, t.runsPacked),
          ];
        }),
        ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
    para(
      "An empty compute pass writes a timestamp before the R operations and another after them; for TOC and CSR both sit in the trial's command",
      'encoder, so the span is GPU work alone. tfjs records into its own encoder, so its span also holds any time the GPU waited for tfjs.',
      "**gather only**: the runs product's last step alone (the same items, k and entry point) on an operand that already holds |S| rows",
      "after M's, so no copy of M into X and no run_sums / occurrence_sums dispatch; timed in the same rounds. fill / runs = (runs − gather",
      'only) / runs per round: the share of a runs product spent filling X = [M; H or G]. Where nothing is cached the two are the same',
      'product (fill ≈ 0 up to noise).',
      "**runs packed**: runs on session 10's layout (`plainSides: 'none'`): a side that caches nothing keeps packed items (hi << pairBits",
      '| pair, the value loaded by pair); runs lays such a side out plain (hi alone, the value beside it). On a cached side the two are the',
      'same product. Timed in the same rounds.',
    );
  }
  if (r.fusedBias.length > 0) {
    const side = r.fusedBias[0]!.gpuSide ? 'GPU side (timestamp-query)' : 'wall clock';
    lines.push(`## The first layer's forward with its bias: added as the gather stores, or by a pass after the product (${side})`, '');
    const med = (xs: number[]) => ms(median(xs));
    lines.push(
      ...table(
        md,
        // biome-ignore format: one header row reads best on one line
        ['batch', 'op', 'k', 'runs, bias in the gather', 'runs, bias pass', 'in the gather / pass (rounds)', 'CSR, bias in the gather', 'CSR, bias pass',
          'in the gather / pass (rounds)', 'runs / CSR, both in the gather (rounds)'],
        r.fusedBias.map((f) => [
          f.batch,
          f.op,
          String(f.k),
          med(f.trials.runsFused),
          med(f.trials.runsPass),
          spread(f.trials.runsFused, f.trials.runsPass),
          med(f.trials.csrFused),
          med(f.trials.csrPass),
          spread(f.trials.csrFused, f.trials.csrPass),
          spread(f.trials.runsFused, f.trials.csrFused),
        ]),
        ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
    para(
      `ms per operation (median of ${r.trials} rounds, the four taking turns as above). **in the gather** (session 34): timesAddBias, the bias`,
      "(and the ReLU in relu(A·M + b), the TOC MLP's hidden layer) added to each output as the product's last dispatch stores it; **pass**:",
      "the product, then bias.wgsl's add_bias (add_bias4 for k a multiple of 4) in a compute pass of its own, the lab's forward before.",
      'Within each format the two gave the same bits (checked before timing).',
    );
  }

  const meanCached = (e: (typeof r.endToEnd)[number], side: 'row' | 'col') => (e.models.reduce((n, m) => n + m[side].cachedCodes, 0) / e.batches).toFixed(1);
  for (const e of r.endToEnd) {
    const what = e.model === 'mlp' ? `an MLP (${e.units} ReLU units, then ${e.classes} classes)` : 'logistic regression';
    lines.push(
      `## Per epoch: ${what} on ${e.batches} batches of real ${e.dataset} ` +
        `(${int(e.rows)} rows × ${e.cols} columns, ${e.batchRows}-row batches, ${e.columnOrder} column order)`,
      '',
    );
    para(
      e.dataset === 'flights'
        ? `Softmax over ${e.classes} classes (delay > 15 min or not; ${(100 * e.positiveRate).toFixed(1)}% delayed), Adam, lr ${e.learningRate}, ` +
            `${e.batchRows}-row batches,`
        : `Softmax over ${e.classes} classes (the manifest's), Adam, lr ${e.learningRate}, ${e.batchRows}-row batches,`,
      `the same starting weights and batch order for all; the first layer X·W + b (k = ${e.units} output columns) is tocMatMul with the bias`,
      '(added, and its gradient taken, by our kernels, as in the lab: added as the forward gather stores its outputs since session 34) on',
      'TocRunsGpuBatch or on CsrGpuBatch (both with their kernel choices on),',
      'or tf.fused.matMul with the bias on a dense tensor uploaded once per batch; in the MLP with its ReLU fused in each (since session 15;',
      "tf.relu after it in **TOC runs, loss, output layer and Adam by tfjs**). The loss is the lab's softmaxCrossEntropy and the MLP's",
      "output layer its thinDense, the optimiser the lab's Adam (our kernels, src/gpu/softmax-ce.ts, dense.ts and adam.ts) except for **TOC runs,",
      'loss, output layer and Adam by tfjs**: tf.losses.softmaxCrossEntropy against one-hot labels, tf.fused.matMul with the bias and',
      `tf.train.adam, the lab before session 13. ${e.epochs} epochs each, taking`,
      `turns epoch by epoch (the order shuffled each round since session 34); ms/epoch is the median of epochs 2..${e.epochs}`,
      '(epoch 1 compiles pipelines and is shown apart). One loss read-back',
      `per epoch. Column order: ${e.columnOrder} (the same matrix for all; sessions 4-10 ran flights, 250 rows, frequency). The runs layouts are`,
      `built for k = ${e.units}, as the lab's pipeline builds them for this model (PipelineOptions.tocColumns); cached codes per batch (mean),`,
      `A·M / Aᵀ·M side: ${meanCached(e, 'row')} / ${meanCached(e, 'col')}.`,
    );
    const csr = e.runs.find((x) => x.name === 'csr')!;
    const dense = e.runs.find((x) => x.name === 'dense')!;
    const skip = e.runs.find((x) => x.name === 'skip');
    const before = e.runs.find((x) => x.name === 'runsTfjsRest');
    const perEpoch = (x: (typeof e.runs)[number]) => median(x.epochMs.slice(1));
    lines.push(
      ...table(
        md,
        // biome-ignore format: one header row reads best on one line
        ['first layer', 'ms / epoch', 'epoch 1', 'vs CSR per epoch (min / median / max)', 'vs dense per epoch (min / median / max)',
          'vs TOC runs, the rest by tfjs, per epoch (min / median / max)', 'final loss', 'GPU bytes per batch (mean)', 'all batches',
          'weights vs dense', 'first layer share of the epoch (min / median / max)'],
        e.runs.map((x) => [
          layerLabel(x.name),
          ms(perEpoch(x)),
          ms(x.epochMs[0]!),
          spread(x.epochMs.slice(1), csr.epochMs.slice(1)),
          spread(x.epochMs.slice(1), dense.epochMs.slice(1)),
          before ? spread(x.epochMs.slice(1), before.epochMs.slice(1)) : '—',
          x.losses[x.losses.length - 1]!.toFixed(6),
          bytes(x.gpuBytes / e.batches),
          bytes(x.gpuBytes),
          x.name === 'dense' || x.name === 'skip' ? '—' : err(x.weightError),
          skip && x !== skip ? shareSpread(x.epochMs.slice(1), skip.epochMs.slice(1)) : '—',
        ]),
        ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
    const timed = e.runs.filter((x) => x.products);
    const csrProducts = csr.products?.forward.map((f, i) => f + csr.products!.gradient[i]!);
    if (timed.length > 0 && csrProducts) {
      lines.push(
        `### The first layer's products inside the epochs, GPU side`,
        '',
        ...table(
          md,
          // biome-ignore format: one header row reads best on one line
          ['first layer', 'A·M (forward), GPU ms / epoch', 'Aᵀ·M (gradient), GPU ms / epoch', 'both', 'both vs CSR per epoch (min / median / max)',
            'both, share of the epoch wall time (min / median / max)'],
          timed.map((x) => {
            const both = x.products!.forward.map((f, i) => f + x.products!.gradient[i]!).slice(1);
            const wall = x.epochMs.slice(1);
            return [
              layerLabel(x.name),
              ms(median(x.products!.forward.slice(1))),
              ms(median(x.products!.gradient.slice(1))),
              ms(median(both)),
              spread(both, csrProducts.slice(1)),
              shareSpread(
                wall,
                wall.map((w, i) => w - both[i]!),
              ),
            ];
          }),
          ['l', 'r', 'r', 'r', 'r', 'r'],
        ),
      );
      para(
        "The same epochs as above: an empty compute pass with a timestamp write before and after each product, in tocMatMul's own",
        'command encoder, summed over the epoch (medians of epochs 2..N; ratios epoch by epoch). The forward spans hold the bias and the',
        'ReLU (added in the gather since session 34); the ReLU mask, the column sums, the loss, the output layer and Adam are the same',
        'kernels for TOC and CSR and are not in these spans. Unlike the',
        "epoch's wall time, the spans do not hold the waits for the CPU between submissions, which on this shared machine swing an epoch",
        'by half; the share column is how much of the epoch these products are, so how much a faster product can take off it.',
      );
    }
    const terms = e.models.reduce((n, m) => n + m.terms, 0);
    const nnz = e.models.reduce((n, m) => n + m.nnz, 0);
    para(
      `Losses by epoch (runs): ${e.runs[0]!.losses.map((l) => l.toFixed(4)).join(', ')}. Weights vs dense: max |W − W_dense| / (1 + |W_dense|) of the`,
      'trained first layer (only the float summation order differs). GPU bytes per batch: uploadBytes of each form (mean over the batches);',
      `not counted: the runs kernels' X = [M; H or G] buffers, made on the GPU, (rows of M + |S|) × ${e.units} floats each, ` +
        `${bytes(e.runsScratchBytes)} for all.`,
      `T / nnz over the ${e.batches} batches: ${(terms / nnz).toFixed(3)}; at k = ${e.units} the layouts cache codes in ` +
        `${e.models.filter((m) => m.row.cachedCodes + m.col.cachedCodes > 0).length} of them (row side ` +
        `${int(e.models.reduce((n, m) => n + m.row.cachedCodes, 0))} codes, column side ${int(e.models.reduce((n, m) => n + m.col.cachedCodes, 0))}).`,
      `One-time CPU: encodeSparse ${ms(e.encodeMs)} ms, readTocRecord ${ms(e.readRecordMs)} ms (${int(e.recordBytes)} record bytes),`,
      `runs layout ${ms(e.runsLayoutMs)} ms; uploads: runs ${ms(e.uploadMs.runs)} ms, CSR ${ms(e.uploadMs.csr)} ms, dense ${ms(e.uploadMs.dense)} ms.`,
      '**none (floor)**: the same model and steps with the first layer skipped (a kept zero tensor as its output, zero gradients for W and',
      'b; Adam still updates both): what every other part of the step costs. First layer share = (this − floor) / this, epoch by epoch: the',
      'most a faster first layer could take off that epoch.',
    );
    lines.push(
      '### Where one step goes: tfjs kernels under tf.profile',
      '',
      ...table(
        md,
        // biome-ignore format: one header row reads best on one line
        ['first layer', 'step, wall ms', 'tfjs kernels, GPU ms', 'costliest tfjs kernels: calls, GPU ms (input shapes of the costliest call)',
          'our passes, GPU ms', 'our passes by label: calls, GPU ms'],
        e.runs.map((x) => [
          layerLabel(x.name),
          ms(x.profile.wallMs),
          ms(x.profile.tfjsKernelMs),
          x.profile.kernels
            .slice(0, 5)
            .map((k) => `${k.name} ×${k.calls} ${ms(k.ms)} (${k.shapes})`)
            .join('; '),
          x.profile.ourKernelMs === undefined ? '—' : ms(x.profile.ourKernelMs),
          (x.profile.ours ?? []).map((p) => `${p.label} ×${p.calls} ${ms(p.ms)}`).join('; ') || '—',
        ]),
        ['l', 'r', 'r', 'l', 'r', 'l'],
      ),
    );
    para(
      'One more step of each run after its epochs (batch 1), under tf.profile: GPU times of tfjs kernels from timestamp queries, summed by',
      'kernel name. Our kernels are submitted outside tfjs, so tf.profile does not see them: each of their compute passes gets a timestamp',
      'pair of its own in that step (by label: TocRuns.times / .transposeTimes and Csr.* are the products, a runs product with its fill in',
      'one pass; Bias.* the bias, ReLU, ReLU gradient and column sums; SoftmaxCe the loss; Dense.* the output layer; Adam the optimiser;',
      'a copy of M into X outside a pass is in neither sum). A step under the profiler runs slower than in the epochs (a query pair per',
      'kernel or pass), so read the shares, not the totals.',
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- run

const FASHION_DIR = 'public/data/fashion-mnist-toc';
const FASHION_SRC = '/usr/share/datasets/fashion-mnist';

/** The Fashion-MNIST TOC build under public/ for the page (built here if missing), or undefined when it cannot be had. */
function ensureFashion(): string | undefined {
  if (values['no-fashion']) return undefined;
  const sh = (cmd: string) => execSync(cmd, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (!existsSync(join(ROOT, FASHION_DIR, 'manifest.json'))) {
    if (!existsSync(`${FASHION_SRC}/train-images-idx3-ubyte.gz`)) {
      if (process.getuid?.() !== 0) {
        log(`${FASHION_SRC} is missing and this is not root: apt-get install dataset-fashion-mnist, then run again; MNIST-like digits stand in`);
        return undefined;
      }
      log('installing dataset-fashion-mnist');
      sh('apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist');
    }
    log(`building ${FASHION_DIR}`);
    sh('npm run -s data:toc:fashion');
  }
  return FASHION_DIR.replace(/^public\//, '');
}

async function main(): Promise<void> {
  const port = await freePort();
  const query = new URLSearchParams();
  for (const name of ['trials', 'epochs', 'target'] as const) {
    const v = positive(values[name], name);
    if (v !== undefined) query.set(name, String(v));
  }
  if (values.only) query.set('only', values.only);
  if (values['e2e-data'] !== undefined) {
    if (!['flights', 'birdstrikes'].includes(values['e2e-data'])) throw new Error(`--e2e-data must be flights or birdstrikes, got "${values['e2e-data']}"`);
    query.set('e2eData', values['e2e-data']);
  }
  const e2eRows = positive(values['e2e-rows'], 'e2e-rows');
  if (e2eRows !== undefined) query.set('e2eRows', String(e2eRows));
  if (values.plain !== undefined) {
    if (!['unit', 'all', 'none'].includes(values.plain)) throw new Error(`--plain must be unit, all or none, got "${values.plain}"`);
    query.set('plain', values.plain);
  }
  if (values['e2e-order'] !== undefined) {
    if (!['frequency', 'source'].includes(values['e2e-order'])) throw new Error(`--e2e-order must be frequency or source, got "${values['e2e-order']}"`);
    query.set('e2eOrder', values['e2e-order']);
  }
  if (values.e2e) query.set('e2e', values.e2e);
  if (values.cache !== undefined) {
    if (!['cost', 'terms', 'all', 'none'].includes(values.cache)) throw new Error(`--cache must be cost, terms, all or none, got "${values.cache}"`);
    query.set('cache', values.cache);
  }
  if (values.sides !== undefined) {
    if (!['each', 'one'].includes(values.sides)) throw new Error(`--sides must be each or one, got "${values.sides}"`);
    query.set('sides', values.sides);
  }
  if (values['min-saved-share'] !== undefined) query.set('minSavedShare', values['min-saved-share']);
  if (values['min-saved-per-code'] !== undefined) query.set('minSavedPerCode', values['min-saved-per-code']);
  const fashion = ensureFashion();
  if (fashion) query.set('fashion', fashion);

  let server: ViteDevServer | undefined;
  let browser: Browser | undefined;
  try {
    // No HMR and no file watching: other files may change while the bench runs, and a reload would restart the page.
    server = await createServer({
      root: ROOT,
      clearScreen: false,
      logLevel: 'warn',
      server: { host: 'localhost', port, strictPort: true, hmr: false, watch: null },
    });
    await server.listen();
    log(`vite on http://localhost:${port}`);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      const text = m.text();
      if (text.startsWith('bench: ')) log(text.slice(7));
      else if (m.type() === 'error') problems.push(text);
    });
    page.on('pageerror', (e) => problems.push(e.message));

    const url = `http://localhost:${port}${PAGE}${query.size ? `?${query}` : ''}`;
    await page.goto(url);
    const results = await pageResults<BenchResults>(page, '__bench', problems, 120_000, PAGE_TIMEOUT_MS, log);
    if (results.gpuErrors.length) throw new Error(`WebGPU validation errors:\n  ${results.gpuErrors.join('\n  ')}`);
    if (problems.length) throw new Error(`page errors:\n  ${problems.join('\n  ')}`);
    for (const e of results.endToEnd) if (e.leakedTensors !== 0) log(`warning: the ${e.model} runs left ${e.leakedTensors} tfjs tensors behind`);

    const seconds = (performance.now() - T0) / 1000;
    const loadAtEnd = os.loadavg();
    process.stdout.write(`${report(results, browser.version(), seconds, loadAtEnd, false)}\n`);
    writeFileSync(RESULTS, `${report(results, browser.version(), seconds, loadAtEnd, true)}\n`);
    log(`wrote ${RESULTS}`);
  } finally {
    await browser?.close();
    await server?.close();
  }
}

main().catch((e: Error) => {
  process.stderr.write(`bench failed: ${e.message}\n`);
  process.exitCode = 1;
});
