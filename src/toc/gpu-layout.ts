// Index structures the TOC kernels need besides the batch itself, computed once
// per batch on the CPU (linear time). They let every GPU pass be a gather: no
// thread ever adds into memory another thread writes, so no float atomics are
// needed and results are deterministic.
import type { TocBatch } from './batch.js';

export interface TocGpuLayout {
  /** Nodes 1..N-1 sorted by depth; level d is levelNodes[levelOffsets[d-1] .. levelOffsets[d]). */
  levelNodes: Uint32Array;
  levelOffsets: Uint32Array;
  levels: number;
  /** Children of each node (CSR): childNodes[childOffsets[n] .. childOffsets[n+1]). */
  childOffsets: Uint32Array;
  childNodes: Uint32Array;
  /** Rows in which each node occurs in D (CSR, with repeats): occurrenceRows[occurrenceOffsets[n] ..]. */
  occurrenceOffsets: Uint32Array;
  occurrenceRows: Uint32Array;
  /** Nodes whose key has column c (CSR): columnNodes[columnOffsets[c] .. columnOffsets[c+1]). */
  columnOffsets: Uint32Array;
  columnNodes: Uint32Array;
}

/** Counting sort of `items` by `key` into CSR form. */
function groupBy(count: number, buckets: number, key: (i: number) => number, item: (i: number) => number): { offsets: Uint32Array; items: Uint32Array } {
  const offsets = new Uint32Array(buckets + 1);
  for (let i = 0; i < count; i++) offsets[key(i) + 1]!++;
  for (let b = 0; b < buckets; b++) offsets[b + 1]! += offsets[b]!;
  const fill = offsets.slice(0, buckets);
  const items = new Uint32Array(count);
  for (let i = 0; i < count; i++) items[fill[key(i)]!++] = item(i);
  return { offsets, items };
}

export function tocGpuLayout(batch: TocBatch): TocGpuLayout {
  const n = batch.nodeCount;
  // Parent index < child index, so one forward pass gives every depth.
  const depth = new Uint32Array(n);
  let levels = 0;
  for (let i = 1; i < n; i++) {
    depth[i] = depth[batch.nodeParent[i]!]! + 1;
    if (depth[i]! > levels) levels = depth[i]!;
  }
  const byLevel = groupBy(
    n - 1,
    levels,
    (i) => depth[i + 1]! - 1,
    (i) => i + 1,
  );
  const children = groupBy(
    n - 1,
    n,
    (i) => batch.nodeParent[i + 1]!,
    (i) => i + 1,
  );
  const rowOf = new Uint32Array(batch.codes.length);
  for (let r = 0; r < batch.rows; r++) rowOf.fill(r, batch.rowOffsets[r]!, batch.rowOffsets[r + 1]!);
  const occurrences = groupBy(
    batch.codes.length,
    n,
    (i) => batch.codes[i]!,
    (i) => rowOf[i]!,
  );
  const columns = groupBy(
    n - 1,
    batch.cols,
    (i) => batch.nodeKeyCol[i + 1]!,
    (i) => i + 1,
  );
  return {
    levelNodes: byLevel.items,
    levelOffsets: byLevel.offsets,
    levels,
    childOffsets: children.offsets,
    childNodes: children.items,
    occurrenceOffsets: occurrences.offsets,
    occurrenceRows: occurrences.items,
    columnOffsets: columns.offsets,
    columnNodes: columns.items,
  };
}
