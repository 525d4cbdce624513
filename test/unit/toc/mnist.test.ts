// Real-looking data: one 250-row mini-batch of MNIST-like 28x28 digits.
// Compression ratios vs DEN on an MNIST-like batch (the paper's Figure 5 setup).
// Encode speed is measured by bench/toc.ts, not asserted here.
import { describe, expect, it } from 'vitest';
import { compressionRatios, decodeLogical, decodeToc, encodeDense, encodeToc, formatSizes } from '../../../src/toc/index.js';
import { mnistLike } from './generators.js';

const ROWS = 250;
const COLS = 784;
describe('TOC on an MNIST-like mini-batch', () => {
  const data = mnistLike(ROWS, 2019);
  const logical = encodeDense(data, ROWS, COLS);

  it('looks like MNIST: mostly zeros, few distinct values', () => {
    const nnz = data.reduce((n, v) => n + (v !== 0 ? 1 : 0), 0);
    const density = nnz / data.length;
    console.log(
      `MNIST-like batch: density ${density.toFixed(3)}, ${new Set(data).size} distinct values, ` +
        `|I| = ${logical.firstLayerCol.length}, |D| = ${logical.codes.length}, nnz = ${nnz}`,
    );
    expect(density).toBeGreaterThan(0.1);
    expect(density).toBeLessThan(0.35);
  });

  it('round trips exactly through bytes', () => {
    expect(Array.from(decodeLogical(decodeToc(encodeToc(logical))).data)).toEqual(Array.from(data));
  });

  it('reports compression ratios vs DEN', () => {
    const sizes = formatSizes(logical);
    const ratios = compressionRatios(sizes);
    const line = (Object.keys(sizes) as Array<keyof typeof sizes>).map((k) => `${k} ${sizes[k]} B (${ratios[k].toFixed(2)}x)`).join(', ');
    console.log(`compression vs DEN: ${line}`);
    expect(sizes.den).toBe(ROWS * COLS * 8);
    // Figure 5 on Mnist: TOC beats the light-weight formats.
    expect(ratios.toc).toBeGreaterThan(ratios.csr);
    expect(ratios.toc).toBeGreaterThan(ratios.cvi);
    expect(ratios.toc).toBeGreaterThan(ratios.dvi);
  });
});
