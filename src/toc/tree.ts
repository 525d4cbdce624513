// Algorithm 2 (BUILDPREFIXTREE): rebuilds the decoding tree C' from I and D,
// validating every index on the way so that later consumers (CPU ops, GPU
// kernels) never see an out-of-range index.

import { TocFormatError } from './types.js';
import type { DenseMatrix, TocLogical } from './types.js';

/** Parts of a batch that validation can point at. */
export type TocSection = 'firstLayerCol' | 'rowOffsets' | 'codes';

/** Maps element `index` of a section to its byte offset, or -1 when there are no bytes. */
export type Locator = (section: TocSection, index: number) => number;

const inMemory: Locator = () => -1;

/**
 * C' with implicit node numbering: node 0 is the root, nodes 1..|I| are the first
 * layer (node p + 1 has key I[p]), and every code after the first in a row creates
 * the next node. Hence parent[i] < i for every i >= 1.
 */
export interface PrefixTree {
  nodeCount: number;
  /** C'[i].parent (root: 0). */
  parent: Uint32Array;
  /** Index into I of C'[i].key (root: 0, unused). */
  keyPair: Uint32Array;
  /** F[i]: index into I of the first pair of C'[i].seq (root: 0, unused). */
  firstPair: Uint32Array;
}

export type TreeInput = Pick<TocLogical, 'rows' | 'cols' | 'firstLayerCol' | 'codes' | 'rowOffsets'> & {
  firstLayerVal?: ArrayLike<number>;
};

/**
 * Algorithm 2. Throws TocFormatError unless: first-layer columns are < cols, row
 * offsets run from exactly 0 to |D| without decreasing, every code is a node defined
 * before it is used (1 <= code < nodes so far), and columns strictly increase
 * along each row. The last check bounds every sequence by `cols` pairs and makes
 * each decoded row a proper sparse row (no column twice).
 */
export function buildPrefixTree(input: TreeInput, locate: Locator = inMemory): PrefixTree {
  const { rows, cols, firstLayerCol, codes, rowOffsets } = input;
  const fail = (problem: string, section: TocSection, index: number): never => {
    throw new TocFormatError(problem, locate(section, index));
  };
  const firstLayerSize = firstLayerCol.length;
  if (input.firstLayerVal && input.firstLayerVal.length !== firstLayerSize) {
    fail(`first layer has ${firstLayerSize} columns but ${input.firstLayerVal.length} values`, 'firstLayerCol', 0);
  }
  for (let p = 0; p < firstLayerSize; p++) {
    const col = firstLayerCol[p];
    if (col >= cols) fail(`first-layer pair ${p} has column ${col} >= cols ${cols}`, 'firstLayerCol', p);
  }

  if (rowOffsets.length !== rows + 1) {
    fail(`row offsets have ${rowOffsets.length} entries, expected ${rows + 1}`, 'rowOffsets', 0);
  }
  let createdNodes = 0;
  for (let r = 0; r <= rows; r++) {
    const start = rowOffsets[r];
    const prev = r > 0 ? rowOffsets[r - 1] : 0;
    const last = r > 0 ? codes.length : 0; // row 0 starts at 0: no code may sit outside a row
    if (start < prev || start > last) {
      fail(`row ${r} starts at code ${start}, outside [${prev}, ${last}]`, 'rowOffsets', r);
    }
    if (r > 0 && start > prev) createdNodes += start - prev - 1;
  }
  if (rowOffsets[rows] !== codes.length) {
    fail(`row offsets end at ${rowOffsets[rows]}, but there are ${codes.length} codes`, 'rowOffsets', rows);
  }

  // Phase I (lines 4-7): the first layer hangs off the root.
  const nodeCount = 1 + firstLayerSize + createdNodes;
  const parent = new Uint32Array(nodeCount);
  const keyPair = new Uint32Array(nodeCount);
  const firstPair = new Uint32Array(nodeCount);
  for (let p = 0; p < firstLayerSize; p++) {
    keyPair[p + 1] = p;
    firstPair[p + 1] = p;
  }

  // Phase II (lines 9-14): node `next` = D[r][j-1] extended by the first pair of D[r][j].
  let next = firstLayerSize + 1;
  for (let r = 0; r < rows; r++) {
    const start = rowOffsets[r];
    const end = rowOffsets[r + 1];
    for (let k = start; k < end; k++) {
      const code = codes[k];
      if (code === 0 || code >= next) {
        const where = code === 0 ? 'at the root' : `past the dictionary (${next} nodes defined so far)`;
        fail(`code ${code} in row ${r} points ${where}`, 'codes', k);
      }
      if (k === start) continue;
      const prevCode = codes[k - 1];
      const lastCol = firstLayerCol[keyPair[prevCode]];
      const nextCol = firstLayerCol[firstPair[code]];
      if (lastCol >= nextCol) {
        fail(`row ${r}: column ${nextCol} follows column ${lastCol} (must increase)`, 'codes', k);
      }
      parent[next] = prevCode;
      firstPair[next] = firstPair[prevCode];
      keyPair[next] = firstPair[code];
      next++;
    }
  }
  return { nodeCount, parent, keyPair, firstPair };
}

/** Decodes a logical batch to a dense matrix with the exact stored values (Alg 6 lines 5-15). */
export function decodeLogical(logical: TocLogical): DenseMatrix {
  const { rows, cols, firstLayerCol, firstLayerVal, codes, rowOffsets } = logical;
  const { parent, keyPair } = buildPrefixTree(logical);
  const data = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let k = rowOffsets[r]; k < rowOffsets[r + 1]; k++) {
      // Walk the sequence backwards; dense writes need no reversal.
      for (let node = codes[k]; node !== 0; node = parent[node]) {
        const p = keyPair[node];
        data[base + firstLayerCol[p]] = firstLayerVal[p];
      }
    }
  }
  return { rows, cols, data };
}
