// The built lab on a real server: nginx (Debian's) with deploy/nginx/bytelab.conf,
// started by deploy/nginx/serve.mjs on two free ports. The lab trains from its
// own origin and from a second origin (CORS, CORP), and the prefix cache extends
// cached prefixes there with Range + If-Range requests that nginx answers 206.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { snapshot, waitFor } from './helpers.js';

interface Served {
  lab: string;
  data: string;
  log: string;
}
interface LogLine {
  port: number;
  method: string;
  uri: string;
  status: number;
  range: string;
  ifRange: string;
  etag: string;
}

let nginx: ChildProcess | undefined;
let served: Served;

/** The newest change among what the build reads. */
function newestSource(): number {
  const files = [
    'index.html',
    'vite.config.ts',
    'package-lock.json',
    ...['src', 'docs'].flatMap((d) => readdirSync(d, { recursive: true, encoding: 'utf8' }).map((f) => join(d, f))),
  ];
  return Math.max(...files.map((f) => statSync(f).mtimeMs));
}

/** dist/ as `vite build` makes it, without copying public/ (nginx serves the datasets from there). */
async function buildIfStale(): Promise<void> {
  const index = 'dist/index.html';
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource()) return;
  const { build } = await import('vite');
  await build({ logLevel: 'error', build: { outDir: 'dist', emptyOutDir: true, copyPublicDir: false } });
}

function startNginx(): Promise<Served> {
  const prefix = mkdtempSync(join(tmpdir(), 'bytelab-nginx-'));
  const args = ['deploy/nginx/serve.mjs', '--lab-port', '0', '--data-port', '0', '--prefix', prefix, '--stop-on-stdin-end'];
  const child = spawn('node', args, { stdio: ['pipe', 'pipe', 'pipe'] });
  nginx = child;
  let out = '';
  let err = '';
  return new Promise((ok, no) => {
    const timer = setTimeout(() => no(new Error(`nginx did not start within 15 s: ${err}`)), 15_000);
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const line = /^bytelab-nginx (.*)$/m.exec(out);
      if (line) {
        clearTimeout(timer);
        ok(JSON.parse(line[1]!) as Served);
      }
    });
    child.on('exit', (code) => no(new Error(`nginx exited (${code}): ${err}`)));
  });
}

const accessLog = (): LogLine[] =>
  readFileSync(served.log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine);
const port = (url: string) => Number(new URL(url).port);

async function stop(page: Page): Promise<void> {
  await page.locator('#stop').click();
  await expect(page.locator('#start')).toBeEnabled({ timeout: 10_000 });
}

test.beforeAll(async () => {
  await buildIfStale();
  served = await startNginx();
});

test.afterAll(async () => {
  if (!nginx || nginx.exitCode !== null) return;
  const exited = new Promise((ok) => nginx!.once('exit', ok));
  nginx.kill('SIGTERM');
  await exited;
});

test('the built lab, served by nginx, is cross-origin isolated and trains on WebGPU from 206 answers', async ({ page }) => {
  const response = await page.goto(`${served.lab}/?model=mlp&batch=32&evalEvery=10&autostart=1`);
  expect(response!.headers()).toMatchObject({ 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' });
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  await expect(page.locator('#backend')).toContainText('webgpu');
  const s = await waitFor(
    page,
    'an evaluation and two train records',
    (x) => x.evals.length > 0 && x.fetches.filter((f) => f.record.startsWith('train')).length >= 2,
  );
  await stop(page);
  expect(s.backend).toBe('webgpu');
  expect(s.warnings).toEqual([]);
  expect(s.fetches.every((f) => f.status === 206)).toBe(true);
  const records = accessLog().filter((l) => l.port === port(served.lab) && l.uri.endsWith('.pcr'));
  expect(records.length).toBeGreaterThanOrEqual(s.fetches.length);
  expect(records.every((l) => l.status === 206 && l.range.startsWith('bytes=0-'))).toBe(true);
  // The page asked /data/ which datasets are built (none here but the bundled ones) and probed no missing manifest.
  const lab = accessLog().filter((l) => l.port === port(served.lab));
  expect(lab.some((l) => l.uri === '/data/' && l.status === 200)).toBe(true);
  expect(lab.filter((l) => l.status === 404).map((l) => l.uri)).toEqual([]);

  // The help beside the controls links to docs/: the build ships them beside the page.
  const docs = await page.locator('details.help a').evaluateAll((as) => [...new Set(as.map((a) => (a as HTMLAnchorElement).href))]);
  expect(docs.length).toBeGreaterThan(3);
  for (const url of docs) {
    const r = await page.request.get(url);
    expect(r.status(), url).toBe(200);
    expect(await r.text(), url).toMatch(/^# /);
  }
});

test('a dataset on a second origin (CORS, CORP): trains without warnings, and a higher fidelity extends cached prefixes with If-Range', async ({ page }) => {
  const manifest = `${served.data}/datasets/fashion-mnist-mini/manifest.json`;
  const url = (group: number) => `${served.lab}/?manifest=${encodeURIComponent(manifest)}&model=mlp&batch=32&evalEvery=10&group=${group}&autostart=1`;
  const trainFetches = (s: Awaited<ReturnType<typeof snapshot>>) => s.fetches.filter((f) => f.record.startsWith('train'));

  // Scan group 2: every record is read from origin 2 from byte 0 and kept in the prefix cache.
  await page.goto(url(2));
  expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
  const first = await waitFor(page, 'an evaluation and two train records', (s) => s.evals.length > 0 && trainFetches(s).length >= 2);
  await stop(page);
  const fetched = new Set((await snapshot(page)).fetches.map((f) => f.record));
  expect(first.warnings).toEqual([]);
  expect(first.fetches.every((f) => f.status === 206 && f.cached === 0)).toBe(true);
  await expect.poll(async () => (await page.evaluate(() => window.__lab!.cache()))!.entries).toBe(fetched.size);

  // Scan group 6 after a reload: the same records first (same seed); each asks only for the bytes after its cached prefix.
  await page.goto(url(6));
  const second = await waitFor(page, 'two extended train records', (s) => trainFetches(s).filter((f) => f.cached > 0).length >= 2);
  await stop(page);
  expect(second.warnings).toEqual([]);
  const extended = trainFetches(second).filter((f) => f.cached > 0);
  expect(extended.every((f) => f.status === 206 && f.level === 6 && f.received === f.requested - f.cached)).toBe(true);

  // nginx's side: each extension is a Range from the cached end with If-Range carrying the strong ETag it sent, answered 206.
  const log = accessLog().filter((l) => l.port === port(served.data) && l.method === 'GET');
  const etagOf = (uri: string) => log.find((l) => l.uri === uri && l.range.startsWith('bytes=0-'))?.etag;
  for (const f of extended) {
    const uri = `/datasets/fashion-mnist-mini/${f.record}`;
    const line = log.find((l) => l.uri === uri && l.range === `bytes=${f.cached}-${f.requested - 1}`);
    expect(line, `${uri} bytes=${f.cached}-`).toBeDefined();
    expect(line!.ifRange).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
    expect(line!.ifRange).toBe(etagOf(uri));
    expect(line!.status).toBe(206);
  }
  // The If-Range header is not CORS-safelisted: the browser asked first, and the preflight was answered.
  expect(accessLog().some((l) => l.port === port(served.data) && l.method === 'OPTIONS' && l.status === 204)).toBe(true);
});
