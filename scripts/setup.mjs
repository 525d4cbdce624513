#!/usr/bin/env node
// Set-up that `npm start` and `npm test` run first, on a fresh machine too:
// installs npm dependencies when missing, and for tests the Debian packages the
// tests use (chromium, libjpeg-turbo-progs, nginx, dataset-fashion-mnist) when
// running as root.
// Uses Node built-ins only: it runs before node_modules exists.
import { execSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const forTests = process.argv.includes('--for-tests');
const run = (cmd) => execSync(cmd, { cwd: root, stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });

// npm dependencies: install when node_modules is missing or older than the lock file.
const lock = join(root, 'package-lock.json');
const marker = join(root, 'node_modules', '.package-lock.json');
if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
  console.log('setup: installing npm dependencies (npm ci)');
  run('npm ci --no-audit --no-fund');
}

if (forTests) {
  const chrome = process.env.CHROME_PATH || '/usr/bin/chromium';
  const needed = [];
  if (!existsSync(chrome)) needed.push('chromium');
  if (!existsSync('/usr/bin/djpeg') || !existsSync('/usr/bin/jpegtran')) needed.push('libjpeg-turbo-progs');
  // test/e2e/nginx.spec.ts serves the built lab and a second dataset origin from nginx (deploy/nginx/).
  if (!existsSync(process.env.NGINX_PATH || '/usr/sbin/nginx')) needed.push('nginx');
  // test/unit/cli/pcr-cli.test.ts rebuilds the bundled Fashion-MNIST mini from it and compares every byte.
  if (!existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz')) needed.push('dataset-fashion-mnist');
  if (needed.length) {
    const isRoot = process.getuid?.() === 0;
    const hasApt = spawnSync('which', ['apt-get']).status === 0;
    if (isRoot && hasApt) {
      console.log(`setup: installing Debian packages: ${needed.join(' ')}`);
      run('apt-get update -qq');
      run(`apt-get install -y -qq ${needed.join(' ')}`);
    } else {
      console.error(
        `setup: the tests need ${needed.join(' and ')}.\n` +
          `  As root on Debian: apt-get install ${needed.join(' ')}\n` +
          '  Or point the end-to-end tests at an installed Chrome: CHROME_PATH=/path/to/chrome npm test',
      );
      process.exit(1);
    }
  }
}
