// One Adam update of one variable (src/gpu/adam.ts): its new value and both
// moments from one invocation per element. tfjs's AdamOptimizer runs the same
// arithmetic as a dozen elementwise programs per variable (Multiply, Add, Square,
// RealDiv, Sqrt), each a dispatch with its own output; on SwiftShader those
// dispatches were much of a tabular step (docs/toc-kernels-log.md, "Session 13"). The order of
// operations is tfjs's, so the values agree with its to f32 rounding.

struct Params {
  n: u32, // elements of the variable
}

// The step's constants, the same for every variable: written once per step. (A storage buffer: with the four inputs
// and three outputs that is 8, the default limit per stage, which tfjs's device keeps.)
struct Step {
  beta1: f32,
  one_minus_beta1: f32,
  beta2: f32,
  one_minus_beta2: f32,
  one_minus_acc_beta1: f32, // 1 - beta1^t and 1 - beta2^t: the bias corrections at step t
  one_minus_acc_beta2: f32,
  epsilon: f32,
  neg_learning_rate: f32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> step: Step;
@group(0) @binding(2) var<storage, read> value: array<f32>;
@group(0) @binding(3) var<storage, read> first_moment: array<f32>;
@group(0) @binding(4) var<storage, read> second_moment: array<f32>;
@group(0) @binding(5) var<storage, read> gradient: array<f32>;
@group(0) @binding(6) var<storage, read_write> new_value: array<f32>;
@group(0) @binding(7) var<storage, read_write> new_first_moment: array<f32>;
@group(0) @binding(8) var<storage, read_write> new_second_moment: array<f32>;

// 'flat' layout: element i = id.x + id.y * (workgroups in x) * WG, as a large variable needs more than 65,535 workgroups
// in one dimension.
@compute @workgroup_size(WG)
fn adam(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let i = id.x + id.y * groups.x * WG;
  if (i >= params.n) {
    return;
  }
  let g = gradient[i];
  let m = first_moment[i] * step.beta1 + g * step.one_minus_beta1;
  let v = second_moment[i] * step.beta2 + (g * g) * step.one_minus_beta2;
  let m_hat = m / step.one_minus_acc_beta1;
  let v_hat = v / step.one_minus_acc_beta2;
  new_value[i] = (m_hat / (sqrt(v_hat) + step.epsilon)) * step.neg_learning_rate + value[i];
  new_first_moment[i] = m;
  new_second_moment[i] = v;
}
