// A thin dense layer, Z = X * W + b with X (rows x inner), W (inner x units) and few
// units: the TOC MLP's output layer (src/gpu/dense.ts). tfjs's matmul programs tile
// for large square products; at units = 2..10 most of each tile is idle, and on
// SwiftShader the layer's forward and backward products cost more than the sparse
// first layer (bench/results/toc-kernels-s12-*.md). Here every output element (or
// quad of them) is one invocation's sum, in a fixed order, so the bits are the same
// every run. When the inner size is a multiple of 4 (the TOC MLP's 64 hidden units),
// the quad entry points read X and write dX as vec4: a quarter of the terms, each a
// vec4 load and a dot or vec4 multiply-add, 1.8-2.9x faster than the scalar ones on
// SwiftShader (session 32, 2000 x 64 to 6 and 250 x 64 to 2; docs/toc-kernels-log.md).

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
// The quad entry points' vec4 views: X (forward4, weight_gradient4) and dX (input_gradient4).
@group(0) @binding(5) var<storage, read> a4: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> out4: array<vec4<f32>>;

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

// ---------------------------------------------------------------- quad: inner a multiple of 4, inner4 = inner / 4

// W[t..t+3][j], a column quad of W (inner x units, row-major).
fn w_quad(t4: u32, j: u32) -> vec4<f32> {
  let u = params.units;
  let w = 4u * t4 * u + j;
  return vec4<f32>(b[w], b[w + u], b[w + 2u * u], b[w + 3u * u]);
}

// Z[i][j] = b[j] + sum over quads t4 of X[i][4 t4 .. 4 t4 + 3] . W[4 t4 .. 4 t4 + 3][j]: one invocation per (row i, unit j).
@compute @workgroup_size(WG)
fn forward4(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.rows || j >= params.units) {
    return;
  }
  let inner4 = params.inner >> 2u;
  var sum = bias[j];
  for (var t4 = 0u; t4 < inner4; t4++) {
    sum += dot(a4[i * inner4 + t4], w_quad(t4, j));
  }
  out[i * params.units + j] = sum;
}

// dX[i][4 t4 .. 4 t4 + 3] = sum over j of dZ[i][j] * W[4 t4 .. 4 t4 + 3][j]: one invocation per (row i, quad t4).
@compute @workgroup_size(WG)
fn input_gradient4(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let t4 = id.y;
  let inner4 = params.inner >> 2u;
  if (i >= params.rows || t4 >= inner4) {
    return;
  }
  var sum = vec4<f32>();
  for (var j = 0u; j < params.units; j++) {
    sum += a[i * params.units + j] * w_quad(t4, j);
  }
  out4[i * inner4 + t4] = sum;
}

// dW[4 t4 .. 4 t4 + 3][j] = sum over rows i of X[i][4 t4 .. 4 t4 + 3] * dZ[i][j], rows in order: one invocation per (quad t4, unit j).
@compute @workgroup_size(WG)
fn weight_gradient4(@builtin(global_invocation_id) id: vec3<u32>) {
  let t4 = id.x;
  let j = id.y;
  let inner4 = params.inner >> 2u;
  if (t4 >= inner4 || j >= params.units) {
    return;
  }
  let u = params.units;
  var sum = vec4<f32>();
  for (var i = 0u; i < params.rows; i++) {
    sum += a4[i * inner4 + t4] * b[i * u + j];
  }
  let w = 4u * t4 * u + j;
  out[w] = sum.x;
  out[w + u] = sum.y;
  out[w + 2u * u] = sum.z;
  out[w + 3u * u] = sum.w;
}
