// CSR baseline for the TOC kernels: the same two products on an uncompressed
// sparse batch. A^T * M reads the transposed copy (CSC), so both are gathers.

struct Params {
  k: u32,
  rows: u32,     // rows of the stored matrix (A for times, A^T for transpose_times)
  m_row: u32,
  m_col: u32,
  r_row: u32,
  r_col: u32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> col_index: array<u32>;
@group(0) @binding(3) var<storage, read> values: array<f32>;
@group(0) @binding(4) var<storage, read> m: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

// out[i][j] = sum over stored entries (i, c, v) of v * M[c][j]
@compute @workgroup_size(WG)
fn csr_times(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.rows || j >= params.k) {
    return;
  }
  var sum = 0.0;
  for (var p = row_ptr[i]; p < row_ptr[i + 1u]; p++) {
    sum += values[p] * m[col_index[p] * params.m_row + j * params.m_col];
  }
  out[i * params.r_row + j * params.r_col] = sum;
}
