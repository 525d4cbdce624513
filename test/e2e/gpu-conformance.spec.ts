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
  expect(results.length).toBe(7 * (4 * 2 + 2));
  for (const r of results) {
    expect.soft(r.maxRelError, `${r.impl} ${r.op} on ${r.name}`).toBeLessThan(MAX_REL_ERROR);
    expect.soft(r.deterministic, `${r.impl} ${r.op} on ${r.name} deterministic`).toBe(true);
  }
  expect(new Set(results.map((r) => r.op))).toEqual(new Set(['A*v', 'v*A', 'A*M', 'M*A', 'tfjs A*W', 'tfjs dL/dW']));
});
