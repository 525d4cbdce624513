// R = A * M on a TOC batch (paper Algorithms 4 and 7), M given with strides so
// one program serves A*v (k = 1) and A*M. Two passes:
//   node_values: H[n][j] = H[parent(n)][j] + keyVal(n) * M[keyCol(n)][j], level by
//                level from the root; one workgroup per output column j. H is
//                stored column by column (h[j * N + n]) so a workgroup's reads
//                and writes stay inside its own contiguous column.
//   row_sums:    R[r][j] = sum of H[code][j] over the codes of row r.
// Every value is written by exactly one invocation, in a fixed order: no atomics,
// deterministic results.

struct Params {
  k: u32,          // columns of M and R
  levels: u32,     // depth of the prefix tree
  rows: u32,
  node_count: u32,
  m_row: u32,      // M[c][j] = m[c * m_row + j * m_col]
  m_col: u32,
  r_row: u32,      // R[r][j] = r[r * r_row + j * r_col]
  r_col: u32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> node_parent: array<u32>;
@group(0) @binding(2) var<storage, read> node_key_col: array<u32>;
@group(0) @binding(3) var<storage, read> node_key_val: array<f32>;
@group(0) @binding(4) var<storage, read> level_nodes: array<u32>;
@group(0) @binding(5) var<storage, read> level_offsets: array<u32>;
@group(0) @binding(6) var<storage, read> m: array<f32>;
@group(0) @binding(7) var<storage, read_write> h: array<f32>;
@group(0) @binding(8) var<storage, read> codes: array<u32>;
@group(0) @binding(9) var<storage, read> row_offsets: array<u32>;
@group(0) @binding(10) var<storage, read_write> r: array<f32>;

@compute @workgroup_size(WG)
fn node_values(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let j = wg.x;
  let column = j * params.node_count;
  if (lid == 0u) {
    h[column] = 0.0; // the root's sequence is empty
  }
  storageBarrier();
  // Level d holds nodes whose parents are all on level d - 1, finished last round.
  for (var d = 0u; d < params.levels; d++) {
    let start = level_offsets[d];
    let end = level_offsets[d + 1u];
    for (var i = start + lid; i < end; i += WG) {
      let n = level_nodes[i];
      h[column + n] = h[column + node_parent[n]] + node_key_val[n] * m[node_key_col[n] * params.m_row + j * params.m_col];
    }
    storageBarrier();
  }
}

@compute @workgroup_size(WG)
fn row_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let row = id.x;
  let j = id.y;
  if (row >= params.rows || j >= params.k) {
    return;
  }
  let column = j * params.node_count;
  var sum = 0.0;
  for (var p = row_offsets[row]; p < row_offsets[row + 1u]; p++) {
    sum += h[column + codes[p]];
  }
  r[row * params.r_row + j * params.r_col] = sum;
}
