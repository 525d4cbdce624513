// The TOC kernel benchmark: TOC, CSR and dense (tfjs tf.matMul) matrix products
// and logistic-regression epochs, timed side by side in one run on the WebGPU
// device tfjs uses. Starts a Vite dev server on a free localhost port, opens
// bench/gpu/kernels.html in Chromium (the flags of playwright.config.ts), waits
// for window.__bench, prints the tables and writes bench/results/toc-kernels.md.
// Usage: npx tsx bench/toc-kernels.ts [--trials N] [--epochs N (default 8)] [--target MS]
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium, type Browser } from '@playwright/test';
import { createServer, type ViteDevServer } from 'vite';
import { freePort } from './support/lab-browser.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test/support/chromium.js';
import type { BenchResults, KernelTiming, OpName } from './gpu/kernels.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'bench', 'results', 'toc-kernels.md');
const PAGE = '/bench/gpu/kernels.html';
const PAGE_TIMEOUT_MS = 8 * 60_000;

const { values } = parseArgs({
  options: {
    trials: { type: 'string' },
    epochs: { type: 'string' },
    target: { type: 'string' },
  },
});

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

/** The report; `md` for the file (escaped pipes, and the per-batch appendix), else for the terminal. */
function report(r: BenchResults, browserVersion: string, seconds: number, md: boolean): string {
  const cpus = os.cpus();
  const e = r.endToEnd;
  const lines: string[] = [];
  const para = (...text: string[]) => lines.push(...text, '');

  lines.push('# TOC kernels on the tfjs WebGPU device', '');
  lines.push(`- date: ${new Date().toISOString()}`);
  lines.push(
    `- adapter: ${r.adapter}${r.adapterDescription ? ` (${r.adapterDescription})` : ''}; timestamp-query ` +
      `${r.gpuTimes ? 'available, used for GPU-side times' : r.timestampQuery ? 'available, not used' : 'not available'}`,
  );
  lines.push(`- browser: Chromium ${browserVersion}, headless, ${CHROMIUM_ARGS.join(' ')}`);
  lines.push(`- machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${os.type()} ${os.release()}`);
  lines.push(
    `- settings: ${r.trials} timed trials per product of about ${r.targetMs} ms each; ${e.epochs} epochs per training run; whole bench ${seconds.toFixed(0)} s`,
  );
  lines.push('');
  if (/swiftshader/i.test(`${r.adapter} ${r.adapterDescription}`)) {
    para(
      '> **SwiftShader is a CPU emulation of a GPU.** Absolute times here say little about real GPUs: a workgroup runs on one CPU thread and',
      '> "GPU memory" is host memory. What these numbers are for is the ratios between kernels measured on the same device in the same run.',
    );
  }

  lines.push('## Batches (250 rows each)', '');
  lines.push(
    ...table(
      md,
      // biome-ignore format: one header row reads best on one line
      ['batch', 'rows × cols', 'nnz', '|I|', '|D|', 'tree nodes', 'tree levels',
        'nnz / |D|', 'terms A·M ²', 'terms Aᵀ·M ²', 'TOC1 bytes', 'dense f32 bytes'],
      r.batches.map((b) => [
        b.name,
        `${b.rows} × ${b.cols}`,
        int(b.nnz),
        int(b.firstLayer),
        int(b.codes),
        int(b.nodes),
        String(b.levels),
        (b.nnz / b.codes).toFixed(2),
        ratio((b.nodes - 1 + b.codes) / b.nnz),
        ratio((b.codes + 2 * (b.nodes - 1)) / b.nnz),
        int(b.tocFileBytes),
        int(b.rows * b.cols * 4),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  para(
    'Columns: |I| = unique column:value pairs (the first tree layer); |D| = codes, one per matched sequence; tree nodes include the root. Levels = depth of ' +
      'the tree:',
    'A*v / A*M push values down the tree level by level, v*A / M*A push sums up it, one storage barrier per level, inside one workgroup per output column.',
    'flights-like: 5 one-hot pairs per row over 641 columns (origin 300, destination 300, hour 24, weekday 7, distance bucket 10), Zipf-like airports so ' +
      'routes repeat;',
    'sparse random: randomMatrix(density 0.05, 4 distinct values) with 1,000 columns. nnz / |D|: mean pairs per code (how much a code saves).',
    '² Terms each output column sums, TOC over CSR: TOC A·M adds one per non-root node (node_values) and one per code (row_sums), TOC Aᵀ·M one per',
    'code (occurrence_sums), one per child edge (subtree_sums) and one per non-root node (column_sums); CSR adds one per non-zero either way.',
  );

  lines.push('## One-time costs per batch (median of 5)', '');
  lines.push(
    ...table(
      md,
      ['batch', 'encode (CPU)', 'toBatch + layout (CPU)', 'TOC upload', 'TOC ms', 'CSR upload ¹', 'CSR ms', 'dense upload', 'dense ms'],
      r.oneTime.map((o) => [
        o.name,
        `${ms(o.encodeMs)} ms (${o.encodeWith})`,
        `${ms(o.batchLayoutMs)} ms`,
        bytes(o.tocBytes),
        ms(o.tocUploadMs),
        bytes(o.csrBytes),
        ms(o.csrUploadMs),
        bytes(o.denseBytes),
        ms(o.denseUploadMs),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  para(
    'Upload = creating the GPU buffers from the CPU arrays until the queue is idle again. TOC: TocGpuBatch.uploadBytes (the batch arrays plus the',
    'layout.ts index arrays); CSR: CsrGpuBatch.uploadBytes (CSR and CSC copies); dense: rows × cols × 4 bytes as a tf.tensor2d.',
    '¹ includes building the CSC copy on the CPU, which CsrGpuBatch does in its constructor.',
  );

  const ops: OpName[] = ['A*v', 'v*A', 'A*M', 'M*A'];
  lines.push('## Check before timing: max |x − dense| / (1 + |dense|), TOC / CSR against tf.matMul', '');
  const names = r.batches.map((b) => b.name);
  lines.push(
    ...table(
      md,
      ['batch', ...ops],
      names.map((n) => [
        n,
        ...ops.map((op) => {
          const c = r.checks.find((x) => x.batch === n && x.op === op)!;
          return `${err(c.tocError)} / ${err(c.csrError)}`;
        }),
      ]),
      ['l', 'r', 'r', 'r', 'r'],
    ),
  );

  lines.push(`## Per-step times, ms per operation (median of ${r.trials} trials)`, '');
  /** The ratio of the medians, and the range of the per-round ratios. */
  const ratios = (k: KernelTiming, other: 'csr' | 'dense'): string => {
    const perRound = k.trials.toc.map((t, i) => t / k.trials[other][i]!);
    const [lo, hi] = [Math.min(...perRound), Math.max(...perRound)];
    const f = (x: number) => (x >= 10 ? x.toFixed(1) : x.toFixed(2));
    return `${ratio(k.toc / k[other])} (${f(lo)}–${f(hi)})`;
  };
  const kernelRow = (k: KernelTiming): string[] => [k.batch, k.op, String(k.k), ms(k.toc), ms(k.csr), ms(k.dense), ratios(k, 'dense'), ratios(k, 'csr')];
  lines.push(
    ...table(md, ['batch', 'op', 'k', 'TOC', 'CSR', 'dense (tf.matMul)', 'TOC / dense (rounds)', 'TOC / CSR (rounds)'], r.kernels.map(kernelRow), [
      'l',
      'l',
      'r',
      'r',
      'r',
      'r',
      'r',
      'r',
    ]),
  );
  para(
    'A*M: A (250 × cols) times M (cols × 64); M*A: M (64 × 250) times A; A*v and v*A are the k = 1 cases (tf.matMul with a cols × 1 or 1 × 250 operand).',
    'Ratios below 1× mean TOC is faster. Each trial records R operations into one command encoder (TOC, CSR) or issues R tf.matMul calls (dense),',
    'then waits for device.queue.onSubmittedWorkDone(); R is picked so that a trial takes about the target time (R = 1 for slower operations).',
    'Results are not read back while timing. The three run one trial each in turn, round after round, so they share the state of the machine;',
    'in brackets, the lowest and highest of the per-round ratios.',
  );
  if (r.gpuTimes) {
    lines.push('## The same trials, GPU side: ms per operation between two timestamp-query marks', '');
    const gpuRow = (k: KernelTiming): string[] => {
      const g = k.gpu!;
      return [
        k.batch,
        k.op,
        String(k.k),
        ms(g.toc),
        ms(g.csr),
        ms(g.dense),
        ratio(g.toc / g.dense),
        ratio(g.toc / g.csr),
        `${Math.round((100 * g.toc) / k.toc)}%`,
      ];
    };
    lines.push(
      ...table(md, ['batch', 'op', 'k', 'TOC', 'CSR', 'dense (tf.matMul)', 'TOC / dense', 'TOC / CSR', 'TOC GPU / wall'], r.kernels.map(gpuRow), [
        'l',
        'l',
        'r',
        'r',
        'r',
        'r',
        'r',
        'r',
        'r',
      ]),
    );
    para(
      "An empty compute pass writes a timestamp before the R operations and another after them. For TOC and CSR both sit in the trial's one command",
      'encoder, so the span is GPU work alone; the rest of the wall-clock time is recording the passes (a bind group per dispatch) and the submission.',
      'tfjs records into its own encoder, so its marks are separate submissions around its work and its span also holds any time the GPU waited for',
      'tfjs to submit. Chrome rounds timestamps (to 100 µs without developer features), which is small against a trial of about the target time.',
    );
  }

  lines.push(
    `## End to end: logistic regression on ${e.batches} batches of real flights (${int(e.rows)} rows × ${e.cols} columns, the first record of the bundled ` +
      `flights-250k TOC dataset)`,
    '',
  );
  para(
    `Softmax over ${e.classes} classes (delay > 15 min or not; ${(100 * e.positiveRate).toFixed(1)}% delayed), Adam, lr ${e.learningRate},`,
    `the same starting weights and batch order for all three; the first layer X·W is tocMatMul on TocGpuBatch, tocMatMul on CsrGpuBatch, or tf.matMul on a ` +
      `dense`,
    `tensor uploaded once per batch. ${e.epochs} epochs each, the three taking turns epoch by epoch; ms/epoch is the median of epochs 2..${e.epochs}`,
    '(epoch 1 compiles pipelines and is shown apart). One loss read-back per epoch.',
  );
  const stat = (label: string, xs: number[], total = true): string[] => [
    label,
    int(Math.min(...xs)),
    int(median(xs)),
    int(Math.max(...xs)),
    total ? int(xs.reduce((a, b) => a + b, 0)) : '—',
  ];
  lines.push(
    ...table(
      md,
      ['TOC batches', 'min', 'median', 'max', 'total'],
      (
        [
          ['nnz', (t) => t.nnz],
          ['|I|', (t) => t.firstLayer],
          ['|D|', (t) => t.codes],
          ['tree nodes', (t) => t.nodes],
          ['tree levels', (t) => t.levels, false],
          ['TOC1 bytes', (t) => t.tocFileBytes],
        ] as [string, (t: (typeof e.toc)[number]) => number, boolean?][]
      ).map(([label, of, total]) => stat(label, e.toc.map(of), total)),
      ['l', 'r', 'r', 'r', 'r'],
    ),
  );
  const dense = e.runs.find((x) => x.name === 'dense')!;
  const csr = e.runs.find((x) => x.name === 'CSR')!;
  const perEpoch = (x: (typeof e.runs)[number]) => median(x.epochMs.slice(1));
  /** min / median / max over epochs 2..N of this run's epoch time over the other's, epoch by epoch. */
  const epochRatios = (x: (typeof e.runs)[number], y: (typeof e.runs)[number]) => {
    const rs = x.epochMs.slice(1).map((t, i) => t / y.epochMs[i + 1]!);
    return `${ratio(Math.min(...rs))} / ${ratio(median(rs))} / ${ratio(Math.max(...rs))}`;
  };
  lines.push(
    ...table(
      md,
      [
        'first layer',
        'ms / epoch',
        'epoch 1',
        'vs dense',
        'vs CSR',
        'vs CSR per epoch (min / median / max)',
        'loss by epoch',
        'final loss',
        'GPU bytes, 40 batches',
        'vs dense',
      ],
      e.runs.map((x) => [
        x.name === 'dense' ? 'tf.matMul, dense' : `tocMatMul, ${x.name}`,
        ms(perEpoch(x)),
        ms(x.epochMs[0]!),
        ratio(perEpoch(x) / perEpoch(dense)),
        ratio(perEpoch(x) / perEpoch(csr)),
        epochRatios(x, csr),
        x.losses.map((l) => l.toFixed(4)).join(', '),
        x.losses[x.losses.length - 1]!.toFixed(6),
        `${bytes(x.gpuBytes)} (${int(x.gpuBytes)})`,
        ratio(x.gpuBytes / dense.gpuBytes),
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'r', 'r'],
    ),
  );
  const finals = e.runs.map((x) => x.losses[x.losses.length - 1]!);
  const spread = (Math.max(...finals) - Math.min(...finals)) / Math.abs(finals[0]!);
  const weightErrors = e.runs
    .filter((x) => x.name !== 'dense')
    .map((x) => `${x.name} ${err(x.weightError)}`)
    .join(', ');
  para(
    `Final losses ${spread === 0 ? 'are identical' : `agree to ${spread.toExponential(1)} relative`}, and the trained weights agree to max |W − W_dense| / ` +
      `(1 + |W_dense|) = ${weightErrors}:`,
    `all three compute the same function; only the float summation order ` +
      `differs${e.runs.some((x) => x.name !== 'dense' && x.weightError === 0) ? ' (0 = bit for bit the same weights)' : ''}.`,
    `GPU bytes: TOC = sum of TocGpuBatch.uploadBytes (the TOC kernels also keep a node × ${e.classes} scratch buffer per batch: ${bytes(e.tocScratchBytes)} ` +
      `for all ${e.batches});`,
    `CSR = sum of CsrGpuBatch.uploadBytes; dense = ${e.batches} × 250 × ${e.cols} × 4 bytes. Labels (the same for all three) are not counted.`,
  );
  lines.push(
    ...table(
      md,
      [`one-time, all ${e.batches} batches`, 'time', 'bytes'],
      [
        ['encodePairs (CPU, dataset build)', `${ms(e.encodeMs)} ms`, '—'],
        ['readTocRecord of the TOC1 record (CPU, median of 3)', `${ms(e.readRecordMs)} ms`, int(e.recordBytes)],
        ['toBatch + tocGpuLayout (CPU)', `${ms(e.batchLayoutMs)} ms`, '—'],
        ['upload TOC', `${ms(e.uploadMs.toc)} ms`, int(e.runs.find((x) => x.name === 'TOC')!.gpuBytes)],
        ['upload CSR (with the CSC build)', `${ms(e.uploadMs.csr)} ms`, int(csr.gpuBytes)],
        ['upload dense', `${ms(e.uploadMs.dense)} ms`, int(dense.gpuBytes)],
      ],
      ['l', 'r', 'r'],
    ),
  );
  if (md) {
    lines.push(`## Appendix: the ${e.batches} TOC batches of the end-to-end run`, '');
    lines.push(
      ...table(
        md,
        ['batch', 'nnz', '|I|', '|D|', 'tree nodes', 'tree levels', 'TOC1 bytes'],
        e.toc.map((t, i) => [String(i), int(t.nnz), int(t.firstLayer), int(t.codes), int(t.nodes), String(t.levels), int(t.tocFileBytes)]),
        ['r', 'r', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
  } else {
    lines.push(`(The per-batch TOC structure of all ${e.batches} batches is listed at the end of ${RESULTS.slice(ROOT.length + 1)}.)`, '');
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------- run

async function main(): Promise<void> {
  const port = await freePort();
  const query = new URLSearchParams();
  for (const name of ['trials', 'epochs', 'target'] as const) {
    const v = positive(values[name], name);
    if (v !== undefined) query.set(name, String(v));
  }

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
    let results: BenchResults | undefined;
    // Vite may reload the page once if it discovers a dependency to pre-bundle; then the page starts over.
    for (let attempt = 1; !results; attempt++) {
      if (attempt === 1) await page.goto(url);
      try {
        await page.waitForFunction(() => window.__bench !== undefined, undefined, { timeout: 120_000 });
        const timeout = new Promise<never>((_, fail) =>
          setTimeout(() => fail(new Error(`the page gave no results within ${PAGE_TIMEOUT_MS / 1000} s`)), PAGE_TIMEOUT_MS).unref(),
        );
        results = await Promise.race([page.evaluate(() => window.__bench!), timeout]);
      } catch (e) {
        const message = (e as Error).message;
        if (attempt < 3 && /context was destroyed|navigat/i.test(message)) {
          log('the page reloaded (Vite optimised a dependency); waiting for it again');
          continue;
        }
        throw new Error(`${message.split('\n')[0]}${problems.length ? `\npage errors:\n  ${problems.join('\n  ')}` : ''}`);
      }
    }
    if (results.gpuErrors.length) throw new Error(`WebGPU validation errors:\n  ${results.gpuErrors.join('\n  ')}`);
    if (problems.length) throw new Error(`page errors:\n  ${problems.join('\n  ')}`);
    if (results.endToEnd.leakedTensors !== 0) log(`warning: the training runs left ${results.endToEnd.leakedTensors} tfjs tensors behind`);

    const seconds = (performance.now() - T0) / 1000;
    process.stdout.write(`${report(results, browser.version(), seconds, false)}\n`);
    writeFileSync(RESULTS, `${report(results, browser.version(), seconds, true)}\n`);
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
