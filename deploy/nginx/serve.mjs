#!/usr/bin/env node
// Serves the built lab and the datasets from nginx (Debian's /usr/sbin/nginx),
// without root and without touching /etc/nginx: renders deploy/nginx/bytelab.conf
// into a prefix folder and runs nginx in the foreground until Ctrl-C.
//
//   npm run build && node deploy/nginx/serve.mjs [--lab-port 8080] [--data-port 8081]
//     [--lab-root dist] [--data-root public] [--rate 0|500k|2m] [--prefix DIR]
//
// NGINX_PATH picks another nginx binary. A port of 0 takes any free port. Once both ports answer it prints the URLs,
// and one line `bytelab-nginx {json}` for programs (test/e2e/nginx.spec.ts).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: opt } = parseArgs({
  options: {
    'lab-port': { type: 'string', default: '8080' },
    'data-port': { type: 'string', default: '8081' },
    'lab-root': { type: 'string', default: join(repo, 'dist') },
    'data-root': { type: 'string', default: join(repo, 'public') },
    rate: { type: 'string', default: '0' },
    prefix: { type: 'string' },
    // For programs that start it: their end (stdin closes) stops nginx, even when they are killed.
    'stop-on-stdin-end': { type: 'boolean', default: false },
  },
});

const fail = (message) => {
  console.error(`serve: ${message}`);
  process.exit(1);
};
const nginx = process.env.NGINX_PATH || (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx');
if (!/^\d+[km]?$/.test(opt.rate)) fail(`--rate ${opt.rate}: bytes per second, nginx style (0 = no limit, 500k, 2m)`);
const labRoot = resolve(opt['lab-root']);
const dataRoot = resolve(opt['data-root']);
if (!existsSync(join(labRoot, 'index.html'))) fail(`${labRoot}/index.html is missing: build the lab first (npm run build)`);

/** A port the system says is free now (another program may take it before nginx does; then nginx says so and exits). */
function freePort() {
  return new Promise((ok, no) => {
    const server = createServer().once('error', no);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}
const port = async (value) => (Number(value) === 0 ? freePort() : Number(value));
const labPort = await port(opt['lab-port']);
const dataPort = await port(opt['data-port']);

const prefix = resolve(opt.prefix ?? mkdtempSync(join(tmpdir(), 'bytelab-nginx-')));
mkdirSync(join(prefix, 'logs'), { recursive: true });
mkdirSync(join(prefix, 'temp'), { recursive: true });
const values = { LAB_PORT: labPort, DATA_PORT: dataPort, LAB_ROOT: labRoot, DATA_ROOT: dataRoot, RATE: opt.rate };
let conf = readFileSync(join(repo, 'deploy/nginx/bytelab.conf'), 'utf8').replace(/@([A-Z_]+)@/g, (all, name) => String(values[name] ?? all));
// As root, nginx would run its worker as `nobody`, which may not read a checkout under /root.
if (process.getuid?.() === 0) conf = `user root;\n${conf}`;
writeFileSync(join(prefix, 'nginx.conf'), conf);

const child = spawn(nginx, ['-p', `${prefix}/`, '-c', 'nginx.conf', '-e', 'stderr', '-g', 'daemon off;'], { stdio: ['ignore', 'inherit', 'inherit'] });
child.on('error', (err) => fail(`${nginx}: ${err.message} (Debian: apt-get install nginx)`));
child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1)));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill('SIGTERM'));
if (opt['stop-on-stdin-end']) process.stdin.on('end', () => child.kill('SIGTERM')).resume();

const answers = (p) =>
  new Promise((ok) => {
    const socket = connect(p, '127.0.0.1', () => {
      socket.end();
      ok(true);
    }).once('error', () => ok(false));
  });
for (const p of [labPort, dataPort]) {
  while (!(await answers(p))) await new Promise((ok) => setTimeout(ok, 50));
}
const info = { lab: `http://localhost:${labPort}`, data: `http://localhost:${dataPort}`, prefix, log: join(prefix, 'logs/access.log'), rate: opt.rate };
console.log(`lab:      ${info.lab}/  (datasets same-origin under /datasets/ and /data/)`);
console.log(`datasets: ${info.data}/datasets/...  (CORS + CORP), e.g.`);
console.log(`          ${info.lab}/?manifest=${info.data}/datasets/fashion-mnist-mini/manifest.json`);
console.log(`log:      ${info.log}${opt.rate === '0' ? '' : `\nrate:     ${opt.rate} bytes/s per response (limit_rate)`}`);
console.log(`bytelab-nginx ${JSON.stringify(info)}`);
