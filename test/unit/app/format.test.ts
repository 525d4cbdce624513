import { describe, expect, it } from 'vitest';
import { count, describeTocWork, formatBytes, formatLoss } from '../../../src/app/format.js';

describe('the page’s numbers', () => {
  it('bytes in B, KiB, MiB', () => {
    expect([formatBytes(512), formatBytes(1536), formatBytes(3 * 1024 ** 2)]).toEqual(['512 B', '1.5 KiB', '3.00 MiB']);
  });

  it('a count with its noun, one or many (the counters read "1 repeats within a batch")', () => {
    expect([count(1, 'repeat'), count(0, 'repeat'), count(2048, 'SGD step'), count(1, 'echoed copy', 'echoed copies')]).toEqual([
      '1 repeat',
      '0 repeats',
      '2,048 SGD steps',
      '1 echoed copy',
    ]);
  });

  it('a loss keeps to its tile: 3 decimals, or 3 significant digits when large (1.9445230329550144e+37 ran over the next tile)', () => {
    expect(formatLoss(0.4567)).toBe('0.457');
    expect(formatLoss(9999.5)).toBe('9999.500');
    expect(formatLoss(1.9445230329550144e37)).toBe('1.94e+37');
    expect(formatLoss(Number.NaN)).toBe('NaN');
    expect(formatLoss(Number.POSITIVE_INFINITY)).toBe('Infinity');
  });

  it('TOC work: the share of CSR’s multiply-adds, and why', () => {
    expect(describeTocWork(60_832, 77_704, 2)).toBe(
      'First layer on the compressed batches: 78.3% of the multiply-adds CSR would do (prefixes shared by many rows are summed once for ' +
        "this model's 2 first-layer columns).",
    );
    // The same batches cache nothing for a wider layer: said as the model's, not the batches' alone.
    expect(describeTocWork(50_000, 50_000, 64)).toBe(
      'First layer on the compressed batches: 100.0% of the multiply-adds CSR would do (for ' +
        "this model's 64 first-layer columns no prefix in these batches is shared by enough rows to pay for summing it once).",
    );
    expect(describeTocWork(49_990, 50_000)).toMatch(/100\.0% .*\(prefixes shared by many rows are summed once for this model\)/);
  });
});
