// Runs test/gpu/conformance.ts in Chromium on WebGPU: every TOC kernel and the
// CSR baseline must agree with the CPU reference and be deterministic.
import { expect, test } from '@playwright/test';
import type { CaseResult } from '../gpu/conformance.js';

/** f32 accumulation against the f64 reference: sums of up to 784 terms of magnitude <= 10. */
const MAX_REL_ERROR = 1e-4;

test("TOC and CSR kernels, the TOC op and its gradient, the lab's loss, dense layer and Adam agree with references on WebGPU", async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto('/test/gpu/conformance.html');
  const results = (await page.evaluate(() => window.__conformance!)) as CaseResult[];
  expect(errors).toEqual([]);
  expect(await page.evaluate(() => window.__gpuErrors)).toEqual([]);
  // 10 matrices x (6 products x 4 implementations + 2 layout notes); 9 of them small enough for the tfjs op
  // (8 results each: A*W and dL/dW; with a bias A*W+b, dL/dW and dL/db; and relu(A*W+b), dL/dW and dL/db through it;
  // on the tree form with k = 7, on the runs form with k = 7 and k = 8).
  // And the lab's loss against tfjs's on 5 shapes (the mean and dL/dlogits), the thin dense layer on 4 (Z, dX, dW, db),
  // and Adam on 4 (value and both moments).
  // And the forward products A*v, A*M and A*M k=8 with the bias (and with the ReLU) added as they store, on the runs (both
  // layouts) and CSR batches, against the product and then bias.wgsl's pass.
  expect(results.length).toBe(10 * (6 * 4 + 2) + 10 * 3 * 2 * 3 + 9 * 3 * 8 + 5 * 2 + 4 * 4 + 4 * 3);
  // The bias added in the product's pass changes no bit of the forward (session 34).
  for (const r of results.filter((x) => x.op.endsWith(' fused'))) expect.soft(r.maxRelError, `${r.impl} ${r.op} on ${r.name}: the same bits`).toBe(0);
  const layouts = results.filter((r) => r.op.startsWith('layout')).map((r) => r.op);
  // The runs kernels' paths: cached codes, 16-bit and 32-bit indexes, two-word column items, unit values (no value loads),
  // plain sides (session 11) with values beside the items and without (unit values).
  for (const path of ['cached=true', 'idx16', 'idx32', 'wide=true', 'unit=true', 'unit=false', 'unit=true plain=true', 'unit=false plain=true'])
    expect(
      layouts.some((l) => l.includes(path)),
      path,
    ).toBe(true);
  for (const r of results) {
    expect.soft(r.maxRelError, `${r.impl} ${r.op} on ${r.name}`).toBeLessThan(MAX_REL_ERROR);
    expect.soft(r.deterministic, `${r.impl} ${r.op} on ${r.name} deterministic`).toBe(true);
  }
  expect(new Set(results.filter((r) => !r.op.startsWith('layout')).map((r) => r.op))).toEqual(
    new Set([
      ...['A*v', 'v*A', 'A*M', 'M*A', 'A*M k=8', 'AT*M k=8'],
      ...['A*v', 'A*M', 'A*M k=8'].flatMap((op) => [`${op}+b fused`, `relu(${op}+b) fused`]),
      ...[7, 8].flatMap((k) => [
        `tfjs A*W k=${k}`,
        `tfjs dL/dW k=${k}`,
        `tfjs A*W+b k=${k}`,
        `tfjs dL/dW with b k=${k}`,
        `tfjs dL/db k=${k}`,
        `tfjs relu(A*W+b) k=${k}`,
        `tfjs dL/dW through relu k=${k}`,
        `tfjs dL/db through relu k=${k}`,
      ]),
      ...['softmax CE', 'dL/dlogits'],
      ...['X*W+b', 'dL/dX', 'dL/dW', 'dL/db'],
      ...['Adam value', 'Adam m', 'Adam v'],
    ]),
  );
  expect(new Set(results.map((r) => r.impl))).toEqual(
    new Set(['toc', 'toc-runs', 'toc-runs-packed', 'csr', 'tfjs-op', 'tfjs-op-runs', 'loss', 'dense', 'adam']),
  );
});
