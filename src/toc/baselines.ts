// Byte sizes of one mini-batch in the formats compared in §5 of the paper.
// Payload bytes only (no per-array headers), as the paper defines each format:
//   DEN  dense, row by row, IEEE-754 float64
//   CSR  float64 non-zero values + int32 column indexes + int32 row pointers (rows + 1)
//   CVI  CSR with value indexing (§3.2): unique non-zero values as float64, and each
//        value replaced by an index of ceil(log2(V) / 8) bytes
//   DVI  DEN with value indexing: unique values (zero included when present) as
//        float64 plus one index of ceil(log2(V) / 8) bytes per cell
//   GZIP fflate gzipSync (default level) of the DEN bytes
//   TOC  encodeToc with float64 values, as the other formats store float64;
//        tocNative keeps the batch's own value type (float32 for Float32Array input)

import { gzipSync } from 'fflate';
import { bitsFor } from './bits.js';
import { ValueDictionary } from './hash.js';
import { encodeToc } from './physical.js';
import { decodeLogical } from './tree.js';
import type { TocLogical } from './types.js';

export interface FormatSizes {
  den: number;
  csr: number;
  cvi: number;
  dvi: number;
  gzip: number;
  toc: number;
  tocNative: number;
}

/** Byte width of a value index among `count` values, per §3.2 of the paper. */
function indexBytes(count: number): number {
  return Math.ceil(bitsFor(count) / 8);
}

/** Sizes in bytes of the batch in every compared format. */
export function formatSizes(logical: TocLogical): FormatSizes {
  const { rows, cols, data } = decodeLogical(logical);
  const cells = rows * cols;
  const nonZeroValues = new ValueDictionary();
  const allValues = new ValueDictionary();
  let nnz = 0;
  for (let i = 0; i < cells; i++) {
    const v = data[i];
    allValues.idOf(v);
    if (v !== 0) {
      nnz++;
      nonZeroValues.idOf(v);
    }
  }
  const distinctNonZero = nonZeroValues.values.length;
  const distinctAll = allValues.values.length;

  const den = 8 * cells;
  const denBytes = new Uint8Array(den);
  const view = new DataView(denBytes.buffer);
  for (let i = 0; i < cells; i++) view.setFloat64(8 * i, data[i], true);

  const rowPointers = 4 * (rows + 1);
  return {
    den,
    csr: 12 * nnz + rowPointers,
    cvi: 8 * distinctNonZero + nnz * (indexBytes(distinctNonZero) + 4) + rowPointers,
    dvi: 8 * distinctAll + cells * indexBytes(distinctAll),
    gzip: gzipSync(denBytes).length,
    toc: encodeToc(logical, { valueType: 'f64' }).length,
    tocNative: encodeToc(logical).length,
  };
}

/** Compression ratio of each format: DEN bytes / format bytes (as in Figure 5). */
export function compressionRatios(sizes: FormatSizes): Record<keyof FormatSizes, number> {
  const ratio = (bytes: number) => (bytes === 0 ? Infinity : sizes.den / bytes);
  return {
    den: 1,
    csr: ratio(sizes.csr),
    cvi: ratio(sizes.cvi),
    dvi: ratio(sizes.dvi),
    gzip: ratio(sizes.gzip),
    toc: ratio(sizes.toc),
    tocNative: ratio(sizes.tocNative),
  };
}
