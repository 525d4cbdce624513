// CSR baseline for the TOC kernels: the same two products on an uncompressed
// sparse batch. A^T * M reads the transposed copy (CSC), so both are gathers.
// It is given the same two kernel choices as the TOC runs kernels
// (shaders/toc_runs.wgsl), so that a comparison measures the formats, not the
// effort spent on one kernel: a quad entry point (4 output columns per
// invocation, item-major, vec4 loads and stores) for row-major operands with k a
// multiple of 4, and no value loads when every stored value is 1.

struct Params {
  k: u32,
  rows: u32,     // rows of the stored matrix (A for times, A^T for transpose_times)
  m_row: u32,
  m_col: u32,
  r_row: u32,
  r_col: u32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize
override UNIT: bool = false; // every stored value is 1.0: no value loads (1 * x is x, bit for bit)

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> row_ptr: array<u32>;
@group(0) @binding(2) var<storage, read> col_index: array<u32>;
@group(0) @binding(3) var<storage, read> values: array<f32>;
@group(0) @binding(4) var<storage, read> m: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<storage, read> m4: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> out4: array<vec4<f32>>;
// The first layer's bias, added as outputs are stored (finish, finish4: bias_epilogue.wgsl, prepended); a 16-byte
// stand-in is bound when BIAS is off.
@group(0) @binding(8) var<storage, read> bias: array<f32>;
@group(0) @binding(9) var<storage, read> bias4: array<vec4<f32>>;

// out[i][j] = sum over stored entries (i, c, v) of v * M[c][j]
@compute @workgroup_size(WG)
fn csr_times(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.rows || j >= params.k) {
    return;
  }
  var sum = 0.0;
  // The end bound loaded once, not per term (SwiftShader re-reads it otherwise; the runs gather does the same).
  let end = row_ptr[i + 1u];
  for (var p = row_ptr[i]; p < end; p++) {
    let x = m[col_index[p] * params.m_row + j * params.m_col];
    if (UNIT) {
      sum += x;
    } else {
      sum += values[p] * x;
    }
  }
  out[i * params.r_row + j * params.r_col] = finish(sum, j);
}

// The same, 4 output columns per invocation; invocations numbered item-major (see quad_of in toc_runs.wgsl).
@compute @workgroup_size(WG)
fn csr_times4(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let flat = id.x + id.y * groups.x * WG;
  let k4 = params.k >> 2u;
  let i = flat / k4;
  if (i >= params.rows) {
    return;
  }
  let j4 = flat - i * k4;
  let m_row4 = params.m_row >> 2u;
  var sum = vec4<f32>();
  let end = row_ptr[i + 1u];
  for (var p = row_ptr[i]; p < end; p++) {
    let x = m4[col_index[p] * m_row4 + j4];
    if (UNIT) {
      sum += x;
    } else {
      sum += values[p] * x;
    }
  }
  out4[i * (params.r_row >> 2u) + j4] = finish4(sum, j4);
}
