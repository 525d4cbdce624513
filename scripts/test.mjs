#!/usr/bin/env node
// Runs every test: unit tests (vitest, Node) then end-to-end tests (Playwright,
// headless Chromium with WebGPU), and closes with one line `N passed, N failed`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';

mkdirSync('test-results', { recursive: true });
const env = { ...process.env, FORCE_COLOR: process.env.CI ? '0' : process.env.FORCE_COLOR };

function run(cmd, args) {
  console.log(`\n$ ${cmd} ${args.join(' ')}`);
  return spawnSync(cmd, args, { stdio: 'inherit', env }).status ?? 1;
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

const totals = { passed: 0, failed: 0, skipped: 0 };
let crashed = false;

// Types first: a type error fails the run even if every test passes.
const typesOk = run('npm', ['run', '-s', 'typecheck']) === 0;
if (!typesOk) console.log('typecheck failed (see above)');
// Format and lint (Biome): `npm run format` fixes what it can.
const lintOk = run('npm', ['run', '-s', 'lint']) === 0;
if (!lintOk) console.log('lint failed (see above; `npm run format` fixes formatting)');

// Unit tests.
const unitStatus = run('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', '--outputFile=test-results/unit.json']);
const unit = readJson('test-results/unit.json');
if (unit) {
  totals.passed += unit.numPassedTests;
  totals.failed += unit.numFailedTests;
  totals.skipped += unit.numPendingTests + (unit.numTodoTests ?? 0);
} else if (unitStatus !== 0) crashed = true;
if (unit && unitStatus !== 0 && unit.numFailedTests === 0) crashed = true; // e.g. a suite failed to load

// End-to-end tests.
const e2eStatus = run('npx', ['playwright', 'test']);
const e2e = existsSync('test-results/e2e.json') ? readJson('test-results/e2e.json') : undefined;
if (e2e?.stats) {
  totals.passed += e2e.stats.expected;
  totals.failed += e2e.stats.unexpected + e2e.stats.flaky;
  totals.skipped += e2e.stats.skipped;
  if (e2eStatus !== 0 && e2e.stats.unexpected === 0) crashed = true;
} else if (e2eStatus !== 0) crashed = true;

if (!typesOk || !lintOk) crashed = true;
if (crashed) {
  console.log('\nthe typecheck, the lint or a test runner failed outside the counted tests (see above)');
  totals.failed = Math.max(1, totals.failed);
}
console.log(`\n${totals.passed} passed, ${totals.failed} failed${totals.skipped ? `, ${totals.skipped} skipped` : ''}`);
process.exit(totals.failed > 0 ? 1 : 0);
