import { describe, expect, it } from 'vitest';
import { chartSummary, fidelityValueText, summaryDelay } from '../../../src/app/a11y.js';

describe('what a screen reader hears', () => {
  it('the fidelity slider: the group, and bytes per image once the dataset is open', () => {
    expect(fidelityValueText(6, 6)).toBe('scan group 6 of 6');
    const info = { kind: 'image' as const, bytesPerLevel: [800, 2000, 3330, 4570, 4700, 6150], examples: 10 };
    expect(fidelityValueText(3, 6, info)).toBe('scan group 3 of 6, 333 bytes per image');
    expect(fidelityValueText(1, 6, info)).toBe('scan group 1 of 6, 80 bytes per image');
    expect(fidelityValueText(1, 1, { kind: 'tabular', bytesPerLevel: [1234], examples: 100 })).toBe('one fidelity: TOC is lossless, 12.3 bytes per row');
  });

  it('a chart: its span and latest value, three significant digits', () => {
    expect(chartSummary('training loss', 'step', [], [])).toBe('training loss chart: no data yet');
    expect(chartSummary('training loss', 'step', [1, 2, 120], [2.3, 1.1, 0.42137])).toBe('training loss chart: step 1 to 120, latest 0.421');
    expect(chartSummary('examples / s', 'step', [5], [12345.6])).toBe('examples / s chart: step 5 to 5, latest 12300');
  });

  it('a chart that said “no data yet” is named at once when its points come (a continued run’s history), then at most every 2 s', () => {
    expect(summaryDelay(1000, true, 1000)).toBe(0);
    expect(summaryDelay(1000, false, 1500)).toBe(1500);
    expect(summaryDelay(1000, false, 4000)).toBe(0);
  });
});
