// The bias of a first layer on a compressed batch, fused with tocMatMul
// (src/gpu/toc/tfjs-op.ts): Z = A * W + b forward, db = the column sums of dZ
// backward. tfjs would broadcast a rank-1 bias with its shared-memory binary
// program and take db with a workgroup reduction; on SwiftShader each costs more
// than the sparse product itself (bench/results/toc-kernels-s12-*.md). Here every
// output element has one invocation and no barrier, so results are deterministic.
// A hidden layer's ReLU is fused the same way (add_bias with RELU forward,
// relu_mask backward), in place of tfjs's Relu, and its Step and Multiply for the gradient.

struct Params {
  rows: u32,
  units: u32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize
override RELU: bool = false; // add_bias: then relu in place, as tfjs writes it (select, so NaN passes)

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> input: array<f32>;      // add_bias: b (units); column_sums: dZ (rows x units); relu_mask: dY
@group(0) @binding(2) var<storage, read_write> out: array<f32>;  // add_bias: Z (rows x units); column_sums: db (units); relu_mask: dZ
@group(0) @binding(3) var<storage, read> activations: array<f32>; // relu_mask: Y = relu(Z) (rows x units)
// The quad entry points' vec4 views of the same buffers (units a multiple of 4; params.units then counts quads).
@group(0) @binding(4) var<storage, read> input4: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> out4: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> activations4: array<vec4<f32>>;

// Z[i][j] += b[j] (then relu'd with RELU), one invocation per (row i, column j): the 'grid' layout.
@compute @workgroup_size(WG)
fn add_bias(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.rows || j >= params.units) {
    return;
  }
  let at = i * params.units + j;
  let z = out[at] + input[j];
  out[at] = select(z, 0.0, RELU && z < 0.0);
}

// dZ = dY where Y > 0, else 0: the ReLU's gradient, read off its output (Y > 0 exactly where Z > 0).
@compute @workgroup_size(WG)
fn relu_mask(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.rows || j >= params.units) {
    return;
  }
  let at = i * params.units + j;
  out[at] = select(0.0, input[at], activations[at] > 0.0);
}

// add_bias and relu_mask 4 columns at a time, as vec4 loads and stores: one invocation per (row i, quad j).
// On SwiftShader 2.2-2.4x faster than the scalar ones (bench/results/dense.md).
@compute @workgroup_size(WG)
fn add_bias4(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.rows || j >= params.units) {
    return;
  }
  let at = i * params.units + j;
  let z = out4[at] + input4[j];
  out4[at] = select(z, vec4<f32>(), vec4<bool>(RELU) & (z < vec4<f32>()));
}

@compute @workgroup_size(WG)
fn relu_mask4(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.rows || j >= params.units) {
    return;
  }
  let at = i * params.units + j;
  out4[at] = select(vec4<f32>(), input4[at], activations4[at] > vec4<f32>());
}

// db[j] = sum over rows i of dZ[i][j], rows in order: one invocation per column.
@compute @workgroup_size(WG)
fn column_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let j = id.x;
  if (j >= params.units) {
    return;
  }
  var sum = 0.0;
  for (var i = 0u; i < params.rows; i++) {
    sum += input[i * params.units + j];
  }
  out[j] = sum;
}

// column_sums 4 columns at a time (vec4 loads), rows in the same order: the same bits as column_sums (1.7-1.9x faster).
@compute @workgroup_size(WG)
fn column_sums4(@builtin(global_invocation_id) id: vec3<u32>) {
  let j = id.x;
  if (j >= params.units) {
    return;
  }
  var sum = vec4<f32>();
  for (var i = 0u; i < params.rows; i++) {
    sum += input4[i * params.units + j];
  }
  out4[j] = sum;
}
