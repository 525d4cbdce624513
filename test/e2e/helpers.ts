// Shared by the end-to-end specs: read the lab's numbers through window.__lab.
import type { Page } from '@playwright/test';
import type { LabSnapshot } from '../../src/app/test-api.js';

export const snapshot = (page: Page) => page.evaluate(() => window.__lab!.snapshot()) as Promise<LabSnapshot>;

export async function waitFor(page: Page, what: string, ok: (s: LabSnapshot) => boolean, timeoutMs = 120_000): Promise<LabSnapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await snapshot(page);
    if (ok(s)) return s;
    if (s.state === 'failed') throw new Error(`training failed while waiting for ${what}: ${s.warnings.join('; ')}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; state ${s.state}, ${s.steps.length} steps`);
    await page.waitForTimeout(250);
  }
}

export const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
