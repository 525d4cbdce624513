// R = A^T * M on a TOC batch (paper Algorithms 5 and 8, transposed so that the
// weight gradient dZ^T A comes out in the layout of the weights). M is rows x k,
// R is cols x k, both given with strides, so v*A and M*A are the same program.
// Three passes, each a gather (no atomics, deterministic):
//   occurrence_sums: G[n][j] = sum of M[r][j] over the rows r whose D holds node n.
//   subtree_sums:    W[n][j] = G[n][j] + sum of W[child][j], deepest level first,
//                    in place; one workgroup per column j.
// G/W are stored column by column (g[j * N + n]), so each workgroup stays in its own column.
//   column_sums:     R[c][j] = sum over nodes n with key column c of keyVal(n) * W[n][j].

struct Params {
  k: u32,
  levels: u32,
  cols: u32,
  node_count: u32,
  m_row: u32,      // M[r][j] = m[r * m_row + j * m_col]
  m_col: u32,
  r_row: u32,      // R[c][j] = out[c * r_row + j * r_col]
  r_col: u32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> occurrence_offsets: array<u32>;
@group(0) @binding(2) var<storage, read> occurrence_rows: array<u32>;
@group(0) @binding(3) var<storage, read> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> g: array<f32>;
@group(0) @binding(5) var<storage, read> level_nodes: array<u32>;
@group(0) @binding(6) var<storage, read> level_offsets: array<u32>;
@group(0) @binding(7) var<storage, read> child_offsets: array<u32>;
@group(0) @binding(8) var<storage, read> child_nodes: array<u32>;
@group(0) @binding(9) var<storage, read> column_offsets: array<u32>;
@group(0) @binding(10) var<storage, read> column_nodes: array<u32>;
@group(0) @binding(11) var<storage, read> node_key_val: array<f32>;
@group(0) @binding(12) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(WG)
fn occurrence_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let n = id.x;
  let j = id.y;
  if (n >= params.node_count || j >= params.k) {
    return;
  }
  var sum = 0.0;
  for (var q = occurrence_offsets[n]; q < occurrence_offsets[n + 1u]; q++) {
    sum += m[occurrence_rows[q] * params.m_row + j * params.m_col];
  }
  g[j * params.node_count + n] = sum;
}

@compute @workgroup_size(WG)
fn subtree_sums(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let column = wg.x * params.node_count;
  // Children are one level deeper, so they were finished in the round before.
  for (var level = params.levels; level > 0u; level--) {
    let start = level_offsets[level - 1u];
    let end = level_offsets[level];
    for (var i = start + lid; i < end; i += WG) {
      let n = level_nodes[i];
      var sum = g[column + n];
      for (var c = child_offsets[n]; c < child_offsets[n + 1u]; c++) {
        sum += g[column + child_nodes[c]];
      }
      g[column + n] = sum;
    }
    storageBarrier();
  }
}

@compute @workgroup_size(WG)
fn column_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let c = id.x;
  let j = id.y;
  if (c >= params.cols || j >= params.k) {
    return;
  }
  let column = j * params.node_count;
  var sum = 0.0;
  for (var q = column_offsets[c]; q < column_offsets[c + 1u]; q++) {
    let n = column_nodes[q];
    sum += node_key_val[n] * g[column + n];
  }
  out[c * params.r_row + j * params.r_col] = sum;
}
