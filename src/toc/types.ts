// Shared types of the TOC (tuple-oriented compression) module.
// No DOM and no Node APIs here: this code runs in browser workers and in Node.

/** Width of the values a batch was built from; decides the physical value width. */
export type ValueType = 'f32' | 'f64';

/** Row-major dense matrix. Operations return Float64Array data. */
export interface DenseMatrix<T extends ArrayLike<number> = Float64Array> {
  rows: number;
  cols: number;
  data: T;
}

/**
 * Sparse encoding of a matrix (§3 of the paper): per row, the non-zero
 * column_index:value pairs in strictly increasing column order.
 */
export interface SparseRows {
  rows: number;
  cols: number;
  valueType: ValueType;
  /** rows + 1 offsets into colIndex / values. */
  rowPtr: Uint32Array;
  colIndex: Uint32Array;
  /** Float64 holds both f32 and f64 inputs exactly. */
  values: Float64Array;
}

/**
 * Output of the logical encoding (Algorithm 1): the first layer I of the prefix
 * tree and the encoded table D. Node k + 1 of the tree is I[k]; node 0 is the root.
 */
export interface TocLogical {
  rows: number;
  cols: number;
  valueType: ValueType;
  /** I: column index of each unique column:value pair, in first-appearance order. */
  firstLayerCol: Uint32Array;
  /** I: value of each unique pair (exact for both value types). */
  firstLayerVal: Float64Array;
  /** D, all rows concatenated: tree node indexes. */
  codes: Uint32Array;
  /** rows + 1 offsets into codes; row r is codes[rowOffsets[r] .. rowOffsets[r+1]). */
  rowOffsets: Uint32Array;
}

/**
 * Raised when bytes (or an in-memory structure) do not form a valid TOC batch.
 * `offset` is the byte offset of the bad field, or -1 for in-memory structures.
 */
export class TocFormatError extends Error {
  readonly offset: number;

  constructor(problem: string, offset: number) {
    super(offset >= 0 ? `${problem} (at byte ${offset})` : problem);
    this.name = 'TocFormatError';
    this.offset = offset;
  }
}
