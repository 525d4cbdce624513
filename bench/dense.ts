// The thin dense layer (shaders/dense.wgsl, thinDense in src/gpu/dense.ts: the TOC MLP's output layer) and the hidden
// layer's bias and ReLU passes before it (shaders/bias.wgsl, src/gpu/bias.ts): the scalar entry points against the quad
// ones (vec4 loads and stores, picked when the inner size is a multiple of 4), per operation (forward, input gradient,
// weight gradient; bias + ReLU, ReLU gradient, bias gradient) and shape, on the WebGPU device tfjs uses. Starts a Vite dev server on a
// free localhost port, opens bench/gpu/dense.html in the system Chromium (the flags of playwright.config.ts), waits for
// window.__denseBench, prints the report and writes bench/results/dense.md.
// Usage: flock /tmp/bytelab-bench.lock npx tsx bench/dense.ts [--rounds N (default 9)] [--target MS (default 50)]
//        [--shapes 2000x64x6,250x64x2,250x64x10] [--no-timestamps] [--out FILE]
// (the lock keeps benches on this shared machine from running at the same time; the report records the load average).
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { DenseResults, DenseTiming, OpName, Variant } from './gpu/dense.js';
import { openLabBrowser, pageResults } from './support/lab-browser.js';
import { CHROMIUM_ARGS } from '../test/support/chromium.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PAGE_TIMEOUT_MS = 10 * 60_000;
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '9' },
    target: { type: 'string', default: '50' },
    shapes: { type: 'string', default: '2000x64x6,250x64x2,250x64x10' },
    'no-timestamps': { type: 'boolean' },
    out: { type: 'string' },
  },
});
// The page's module imports WGSL through Vite (?raw): only its types are imported here.
const OPS: OpName[] = ['forward', 'input gradient', 'weight gradient', 'bias + ReLU', 'ReLU gradient', 'bias gradient'];
const RESULTS = values.out ? resolve(values.out) : join(ROOT, 'bench', 'results', 'dense.md');
for (const [name, v] of [
  ['rounds', values.rounds],
  ['target', values.target],
] as const)
  if (!(Number(v) > 0)) throw new Error(`--${name} must be a positive number, got "${v}"`);
if (!/^\d+x\d+x\d+(,\d+x\d+x\d+)*$/.test(values.shapes)) throw new Error(`--shapes must be ROWSxINNERxUNITS,.., got "${values.shapes}"`);

const T0 = performance.now();
const log = (line: string): void => void process.stderr.write(`bench [${((performance.now() - T0) / 1000).toFixed(1)} s]: ${line}\n`);
const LOAD_AT_START = os.loadavg();
const loadavg = (l: number[]): string => l.map((x) => x.toFixed(2)).join(' / ');

/** The command line as typed: the enclosing `flock` process's when there is one (Linux /proc), else npx tsx with our arguments. */
function commandLine(): { command: string; locked: boolean } {
  const quote = (a: string) => (/^[\w./=,:-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
  try {
    for (let pid = process.ppid, depth = 0; pid > 1 && depth < 8; depth++) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (basename(argv[0] ?? '') === 'flock') return { command: ['flock', ...argv.slice(1)].map(quote).join(' '), locked: true };
      pid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    }
  } catch {
    // no /proc: fall through
  }
  return { command: ['npx', 'tsx', relative(ROOT, fileURLToPath(import.meta.url)), ...process.argv.slice(2)].map(quote).join(' '), locked: false };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
/** min / median / max of the per-round ratios a[i] / b[i]. */
function ratios(a: number[], b: number[]): string {
  const rs = a.map((x, i) => x / b[i]!);
  return `${Math.min(...rs).toFixed(2)} / ${median(rs).toFixed(2)} / ${Math.max(...rs).toFixed(2)}`;
}
const ms = (x: number) => x.toFixed(3);
const shapeName = ([rows, inner, units]: number[]) => `${rows}x${inner} -> ${units}`;

/** A markdown table padded so it reads as well in a terminal. */
function table(head: string[], body: string[][], right: boolean[]): string[] {
  const widths = head.map((h, c) => Math.max(3, h.length, ...body.map((r) => r[c]!.length)));
  const pad = (s: string, c: number) => (right[c] ? s.padStart(widths[c]!) : s.padEnd(widths[c]!));
  const line = (cells: string[]) => `| ${cells.map(pad).join(' | ')} |`;
  return [line(head), `| ${widths.map((w, c) => (right[c] ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`, ...body.map(line), ''];
}

function report(r: DenseResults, browserVersion: string, seconds: number, loadAtEnd: number[]): string {
  const cpus = os.cpus();
  const { command, locked } = commandLine();
  const { rounds, targetMs } = r.config;
  const timestamps = r.gpuTimes ? 'available, used for GPU-side times' : r.timestampQuery ? 'available, not used' : 'not available';
  const swiftshader = /swiftshader/i.test(r.adapter);
  const lines: string[] = ["# Thin dense layer, and the hidden layer's bias and ReLU: scalar against quad (vec4) entry points", ''];
  lines.push(
    `- date: ${new Date().toISOString()}`,
    `- command: \`${command}\`; whole bench ${seconds.toFixed(0)} s`,
    `- adapter: ${r.adapter}; timestamp-query ${timestamps}`,
    `- browser: Chromium ${browserVersion}, headless, ${CHROMIUM_ARGS.join(' ')}`,
    `- machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${os.type()} ${os.release()}, Node ${process.version}`,
    `- load average (1 / 5 / 15 min): ${loadavg(LOAD_AT_START)} at the start, ${loadavg(loadAtEnd)} at the end` +
      (locked ? ' (run under flock /tmp/bytelab-bench.lock: no other bench at the same time; tests and builds of others may run)' : ' (not run under flock)'),
    '',
  );
  if (swiftshader)
    lines.push(
      '> **SwiftShader is a CPU emulation of a GPU; only ratios mean much.** Its "GPU" runs on this machine\'s CPU cores, shared with the page ' +
        'and with whatever else runs here, so the milliseconds below say little about a real GPU; the scalar / quad ratios, taken within ' +
        'each round, are the figures to read.',
      '',
    );
  lines.push(
    "**What is timed.** `shaders/dense.wgsl`'s entry points, dispatched as `thinDense` (`src/gpu/dense.ts`) dispatches them (the 'grid' " +
      'layout, 64 invocations per workgroup, a bind group made per dispatch), for a layer Z = X·W + b with X rows x inner, W inner x ' +
      'units: **forward** Z (`forward`, one invocation per output, against `forward4`, X read as vec4), **input gradient** dX = dZ·Wᵀ ' +
      '(`input_gradient`, one invocation per element of dX, against `input_gradient4`, one per quad of dX, written as vec4) and **weight ' +
      "gradient** dW = Xᵀ·dZ (`weight_gradient` against `weight_gradient4`, one invocation per quad of dW's rows, X read as vec4). Each " +
      'shape has one set of random X, W, b and dZ (uniform in [-1, 1)) that both entry points read. The hidden layer before it, ' +
      "rows x inner (the TOC MLP's first layer, whose product is timed in the TOC kernels bench): **bias + ReLU** Z = relu(Z + b) in " +
      'place (`add_bias` with `RELU`, one invocation per element, against `add_bias4`, one per quad, as `recordAddBias` picks them; ' +
      'the timed trials go on adding b to the same Z), **ReLU gradient** dZ = dY where Y > 0 (`relu_mask` against `relu_mask4`) ' +
      'and **bias gradient** db = the column sums of dY (`column_sums`, one invocation per column summing the rows in order, ' +
      'against `column_sums4`, one per quad).',
    '',
    `A **trial** records R dispatches of one entry point into one compute pass, submits it and waits for \`onSubmittedWorkDone\`; R is ` +
      `chosen per entry point so a trial takes about ${targetMs} ms. Per operation and shape: one warm-up round, then ${rounds} rounds ` +
      'in which each entry point runs one trial, the order alternating from round to round. **Wall ms** = ms per dispatch: the trial ' +
      'from its first recorded command to `onSubmittedWorkDone`, divided by R (it includes recording and submitting). ' +
      (r.gpuTimes
        ? "**GPU ms** = ms per dispatch on the GPU side: the timestamp-query span between an empty pass just before the trial's compute " +
          'pass and one just after it, in the same command encoder, divided by R. '
        : '') +
      `ms columns are medians over the ${rounds} rounds; **scalar / quad** is taken within each round (> 1: quad faster), then ` +
      'summarised as min / median / max over the rounds.',
    '',
  );

  lines.push(
    '## Check before timing',
    '',
    'Each entry point runs once and its output is read back (`readBuffer`). The bench stops unless quad equals scalar to 1e-5 and scalar ' +
      'equals a float64 CPU reference to 1e-4, the error being max over elements of |got − want| / max(|want|, 1) (relative where ' +
      '|want| ≥ 1). "Same bits": elements where quad and scalar are bit-identical. `forward4` adds the same products in another order ' +
      '(a `dot` per quad of X, then the quads in turn), so some of its bits differ; the quad gradients add in the scalar order.',
    '',
    ...table(
      ['shape (rows x inner -> units)', 'operation', 'elements', 'quad vs scalar', 'same bits', 'scalar vs CPU float64'],
      r.checks.map((c) => [
        shapeName(c.shape),
        c.op,
        String(c.elements),
        c.quadVsScalar.toExponential(1),
        `${c.identical}/${c.elements}`,
        c.scalarVsCpu.toExponential(1),
      ]),
      [false, false, true, true, true, true],
    ),
  );

  const byShapeAndOp = (t: DenseTiming[]) =>
    r.config.shapes.flatMap((s) => OPS.map((op) => t.find((x) => x.op === op && x.shape.join('x') === s.join('x'))!).filter(Boolean));
  const timings = byShapeAndOp(r.timings);
  const side = (key: 'wall' | 'gpu', title: string) => {
    const name = key === 'wall' ? 'wall' : 'GPU';
    lines.push(
      `## ${title}`,
      '',
      ...table(
        [
          'shape (rows x inner -> units)',
          'operation',
          'R scalar, quad',
          `scalar, ${name} ms / dispatch (median)`,
          `quad, ${name} ms / dispatch (median)`,
          `scalar / quad, ${name}, per round (min / median / max)`,
        ],
        timings.map((t) => {
          const v = t[key]!;
          return [shapeName(t.shape), t.op, `${t.reps.scalar}, ${t.reps.quad}`, ms(median(v.scalar)), ms(median(v.quad)), ratios(v.scalar, v.quad)];
        }),
        [false, false, true, true, true, true],
      ),
    );
  };
  side('wall', `Wall clock: ms per dispatch (median of ${rounds} rounds) and scalar / quad per round`);
  if (r.gpuTimes) side('gpu', `GPU side (timestamp-query): ms per dispatch (median of ${rounds} rounds) and scalar / quad per round`);

  const variants: Variant[] = ['scalar', 'quad'];
  lines.push(
    '## Every round',
    '',
    `ms per dispatch of each timed round (the warm-up round not shown); the two trials of a round ran back to back, quad first in even rounds.`,
    '',
    ...table(
      [
        'shape',
        'operation',
        'round',
        ...variants.map((v) => `${v}, wall ms`),
        ...(r.gpuTimes ? variants.map((v) => `${v}, GPU ms`) : []),
        'scalar / quad, wall',
        ...(r.gpuTimes ? ['scalar / quad, GPU'] : []),
      ],
      timings.flatMap((t) =>
        t.wall.scalar.map((_, i) => [
          shapeName(t.shape),
          t.op,
          String(i),
          ...variants.map((v) => ms(t.wall[v][i]!)),
          ...(t.gpu ? variants.map((v) => ms(t.gpu![v][i]!)) : []),
          (t.wall.scalar[i]! / t.wall.quad[i]!).toFixed(2),
          ...(t.gpu ? [(t.gpu.scalar[i]! / t.gpu.quad[i]!).toFixed(2)] : []),
        ]),
      ),
      [false, false, true, true, true, true, true, true, true],
    ),
  );
  return `${lines.join('\n').trimEnd()}\n`;
}

async function main(): Promise<void> {
  const query = new URLSearchParams({ rounds: values.rounds, target: values.target, shapes: values.shapes });
  if (values['no-timestamps']) query.set('timestamps', '0');
  const lab = await openLabBrowser(ROOT);
  log(`vite on ${lab.origin}`);
  try {
    const { page } = lab;
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'info') log(`page: ${m.text()}`);
      else if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${lab.origin}/bench/gpu/dense.html?${query}`);
    const results = await pageResults<DenseResults | { error: string }>(page, '__denseBench', problems, PAGE_TIMEOUT_MS, PAGE_TIMEOUT_MS, log);
    if ('error' in results) throw new Error(results.error);
    if (problems.length) throw new Error(`page errors:\n  ${problems.join('\n  ')}`);
    const browserVersion = page.context().browser()?.version() ?? '?';
    const text = report(results, browserVersion, (performance.now() - T0) / 1000, os.loadavg());
    process.stdout.write(`${text}\n`);
    writeFileSync(RESULTS, text);
    log(`wrote ${relative(process.cwd(), RESULTS)}`);
  } finally {
    await lab.close();
  }
}

main().catch((e: Error) => {
  process.stderr.write(`bench failed: ${e.message}\n`);
  process.exitCode = 1;
});
