// A thin dense layer, Z = X * W + b with X (rows x inner), W (inner x units) and few
// units: the TOC MLP's output layer (src/gpu/dense.ts). tfjs's matmul programs tile
// for large square products; at units = 2..10 most of each tile is idle, and on
// SwiftShader the layer's forward and backward products cost more than the sparse
// first layer (bench/results/toc-kernels-s12-*.md). Here every output element is
// one invocation's dot product, summed in order, so the bits are the same every run.

struct Params {
  rows: u32,
  inner: u32,
  units: u32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

// Z[i][j] = sum over t of X[i][t] * W[t][j], plus b[j]: a = X, b = W, one invocation per (row i, unit j), the 'grid' layout.
@compute @workgroup_size(WG)
fn forward(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.rows || j >= params.units) {
    return;
  }
  var sum = bias[j];
  for (var t = 0u; t < params.inner; t++) {
    sum += a[i * params.inner + t] * b[t * params.units + j];
  }
  out[i * params.units + j] = sum;
}

// dX[i][t] = sum over j of dZ[i][j] * W[t][j]: a = dZ, b = W, one invocation per (row i, inner t).
@compute @workgroup_size(WG)
fn input_gradient(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let t = id.y;
  if (i >= params.rows || t >= params.inner) {
    return;
  }
  var sum = 0.0;
  for (var j = 0u; j < params.units; j++) {
    sum += a[i * params.units + j] * b[t * params.units + j];
  }
  out[i * params.inner + t] = sum;
}

// dW[t][j] = sum over rows i of X[i][t] * dZ[i][j], rows in order: a = X, b = dZ, one invocation per (inner t, unit j).
@compute @workgroup_size(WG)
fn weight_gradient(@builtin(global_invocation_id) id: vec3<u32>) {
  let t = id.x;
  let j = id.y;
  if (t >= params.inner || j >= params.units) {
    return;
  }
  var sum = 0.0;
  for (var i = 0u; i < params.rows; i++) {
    sum += a[i * params.inner + t] * b[i * params.units + j];
  }
  out[t * params.units + j] = sum;
}
