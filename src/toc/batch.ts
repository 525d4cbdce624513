// In-memory compressed batch in the flat layout GPU kernels consume.
//
// Layout (n = rows, |I| = first-layer size, |D| = code count, N = nodeCount):
//   firstLayerCol  Uint32Array  |I|    column of pair p (tree node p + 1)
//   firstLayerVal  Float32Array |I|    value of pair p
//   codes          Uint32Array  |D|    D: tree node indexes, rows concatenated
//   rowOffsets     Uint32Array  n + 1  row r = codes[rowOffsets[r] .. rowOffsets[r+1])
//   nodeParent     Uint32Array  N      C'[i].parent; parent < i for i >= 1
//   nodeKeyCol     Uint32Array  N      column of C'[i].key
//   nodeKeyVal     Float32Array N      value of C'[i].key
//   nodeFirstPair  Uint32Array  N      F[i]: index into I of the first pair of C'[i].seq
// Node 0 is the root: parent 0, key column 0, key value 0, first pair 0 (unused).
// A zero key lets kernels include the root in sums without a branch.
// Invariants (checked by buildPrefixTree): every code is in [1, N), every column
// is < cols, and each node's sequence has <= cols pairs with increasing columns.

import { buildPrefixTree } from './tree.js';
import type { TocLogical } from './types.js';

export interface TocBatch {
  rows: number;
  cols: number;
  firstLayerSize: number;
  nodeCount: number;
  firstLayerCol: Uint32Array;
  firstLayerVal: Float32Array;
  codes: Uint32Array;
  rowOffsets: Uint32Array;
  nodeParent: Uint32Array;
  nodeKeyCol: Uint32Array;
  nodeKeyVal: Float32Array;
  nodeFirstPair: Uint32Array;
}

/** Builds C' (Algorithm 2, validating) and the flat GPU layout. Values round to float32;
 * firstLayerCol, codes and rowOffsets are shared with `logical`, not copied. */
export function toBatch(logical: TocLogical): TocBatch {
  const tree = buildPrefixTree(logical);
  const firstLayerVal = Float32Array.from(logical.firstLayerVal);
  const nodeKeyCol = new Uint32Array(tree.nodeCount);
  const nodeKeyVal = new Float32Array(tree.nodeCount);
  for (let i = 1; i < tree.nodeCount; i++) {
    const p = tree.keyPair[i];
    nodeKeyCol[i] = logical.firstLayerCol[p];
    nodeKeyVal[i] = firstLayerVal[p];
  }
  return {
    rows: logical.rows,
    cols: logical.cols,
    firstLayerSize: logical.firstLayerCol.length,
    nodeCount: tree.nodeCount,
    firstLayerCol: logical.firstLayerCol,
    firstLayerVal,
    codes: logical.codes,
    rowOffsets: logical.rowOffsets,
    nodeParent: tree.parent,
    nodeKeyCol,
    nodeKeyVal,
    nodeFirstPair: tree.firstPair,
  };
}
