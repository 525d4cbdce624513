// Runs test/gpu/conformance.ts in Chromium on WebGPU: every TOC kernel and the
// CSR baseline must agree with the CPU reference and be deterministic.
import { expect, test } from '@playwright/test';
import type { CaseResult } from '../gpu/conformance.js';

/** f32 accumulation against the f64 reference: sums of up to 784 terms of magnitude <= 10. */
const MAX_REL_ERROR = 1e-4;

test('TOC and CSR kernels, and the TOC tfjs op with its gradient, agree with their references on the tfjs WebGPU device', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto('/test/gpu/conformance.html');
  const results = (await page.evaluate(() => window.__conformance!)) as CaseResult[];
  expect(errors).toEqual([]);
  expect(await page.evaluate(() => window.__gpuErrors)).toEqual([]);
  // 9 matrices x (4 products x 3 implementations + a layout note); 8 of them small enough for the tfjs op on both TOC forms.
  expect(results.length).toBe(9 * (4 * 3 + 1) + 8 * 2 * 2);
  const layouts = results.filter((r) => r.op.startsWith('layout')).map((r) => r.op);
  // The runs kernels' paths: cached codes, 16-bit and 32-bit indexes, two-word column items.
  for (const path of ['cached=true', 'idx16', 'idx32', 'wide=true'])
    expect(
      layouts.some((l) => l.includes(path)),
      path,
    ).toBe(true);
  for (const r of results) {
    expect.soft(r.maxRelError, `${r.impl} ${r.op} on ${r.name}`).toBeLessThan(MAX_REL_ERROR);
    expect.soft(r.deterministic, `${r.impl} ${r.op} on ${r.name} deterministic`).toBe(true);
  }
  expect(new Set(results.filter((r) => !r.op.startsWith('layout')).map((r) => r.op))).toEqual(new Set(['A*v', 'v*A', 'A*M', 'M*A', 'tfjs A*W', 'tfjs dL/dW']));
  expect(new Set(results.map((r) => r.impl))).toEqual(new Set(['toc', 'toc-runs', 'csr', 'tfjs-op', 'tfjs-op-runs']));
});
