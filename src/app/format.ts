// Numbers as the page shows them.

/** "1 step", "2 steps", "1,024 echoed copies": a count with its noun, one or many. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

/** A loss as the tiles and the runs table show it: 3 decimals, or 3 significant digits past 10,000 (1.94e+37 ran over its tile). */
export function formatLoss(x: number): string {
  return Math.abs(x) >= 1e4 ? x.toExponential(2) : x.toFixed(3);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 ** 2).toFixed(2)} MiB`;
}

/**
 * TOC's reuse on the batches read: the terms its first layer sums (resolved runs, docs/toc.md "Work model") against
 * the non-zeros a CSR first layer would multiply, per output column. What pays to cache depends on the model's first-layer
 * columns k as much as on the data: said, or logreg's 94% and the MLP's 100% on the same batches read as a contradiction.
 */
export function describeTocWork(terms: number, nonZeros: number, k?: number): string {
  const share = (100 * terms) / nonZeros;
  const width = k === undefined ? 'this model' : `this model's ${count(k, 'first-layer column')}`;
  const why =
    terms < nonZeros
      ? `prefixes shared by many rows are summed once for ${width}`
      : `for ${width} no prefix in these batches is shared by enough rows to pay for summing it once`;
  return `First layer on the compressed batches: ${share.toFixed(1)}% of the multiply-adds CSR would do (${why}).`;
}
