import { describe, expect, it } from 'vitest';
import { describeTocWork, formatBytes } from '../../../src/app/format.js';

describe('the page’s numbers', () => {
  it('bytes in B, KiB, MiB', () => {
    expect([formatBytes(512), formatBytes(1536), formatBytes(3 * 1024 ** 2)]).toEqual(['512 B', '1.5 KiB', '3.00 MiB']);
  });

  it('TOC work: the share of CSR’s multiply-adds, and why', () => {
    expect(describeTocWork(60_832, 77_704)).toBe(
      'First layer on the compressed batches: 78.3% of the multiply-adds CSR would do (prefixes shared by many rows are summed once).',
    );
    expect(describeTocWork(50_000, 50_000)).toMatch(/100\.0% of the multiply-adds CSR would do \(no prefix is shared enough to cache/);
    expect(describeTocWork(49_990, 50_000)).toMatch(/100\.0% .*\(prefixes shared by many rows are summed once\)/);
  });
});
