// Softmax cross-entropy of logits (rows x classes) against integer labels, the
// lab's loss (src/gpu/softmax-ce.ts). tfjs builds it from a log-sum-exp, a
// one-hot product and a mean: a Max and three or four Sums over [rows, classes],
// each a workgroup reduction of 256 invocations per row. With a few classes that
// is almost all of a tabular step on SwiftShader (bench/results/toc-kernels-s12-*.md).
// Here a row is one invocation's loop over its classes, and the mean over rows is
// summed in a fixed order, so the bits are the same every run.

struct Params {
  rows: u32,
  classes: u32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> labels: array<i32>;
@group(0) @binding(3) var<storage, read> upstream: array<f32>;       // logits_gradient: dL/dloss, one value
@group(0) @binding(4) var<storage, read_write> out: array<f32>;      // mean_loss: one value; logits_gradient: rows x classes

// The row's largest logit and the sum of exp(logit - largest): log(sum) + largest is its log-sum-exp.
fn row_max(row: u32) -> f32 {
  var largest = logits[row * params.classes];
  for (var j = 1u; j < params.classes; j++) {
    largest = max(largest, logits[row * params.classes + j]);
  }
  return largest;
}

fn row_exp_sum(row: u32, largest: f32) -> f32 {
  var sum = 0.0;
  for (var j = 0u; j < params.classes; j++) {
    sum += exp(logits[row * params.classes + j] - largest);
  }
  return sum;
}

var<workgroup> partial: array<f32, WG>;

// The mean over rows of log-sum-exp(row) - logit[row][label]: one workgroup; invocation t takes rows t, t + WG, ...
// in order, then invocation 0 adds the WG partial sums in order. A label outside 0..classes-1 contributes
// -0 * log p for every class, as tfjs's one-hot product does: the row's loss is 0.
@compute @workgroup_size(WG)
fn mean_loss(@builtin(local_invocation_id) local: vec3<u32>) {
  var sum = 0.0;
  for (var row = local.x; row < params.rows; row += WG) {
    let label = labels[row];
    if (label >= 0 && u32(label) < params.classes) {
      let largest = row_max(row);
      sum += log(row_exp_sum(row, largest)) + largest - logits[row * params.classes + u32(label)];
    }
  }
  partial[local.x] = sum;
  workgroupBarrier();
  if (local.x == 0u) {
    var total = 0.0;
    for (var t = 0u; t < WG; t++) {
      total += partial[t];
    }
    out[0] = total / f32(params.rows);
  }
}

// dL/dlogits = (softmax(row) - onehot(label)) * dL/dloss / rows, one invocation per row ('grid' layout, k = 1).
@compute @workgroup_size(WG)
fn logits_gradient(@builtin(global_invocation_id) id: vec3<u32>) {
  let row = id.x;
  if (row >= params.rows) {
    return;
  }
  let largest = row_max(row);
  let scale = upstream[0] / f32(params.rows);
  let norm = scale / row_exp_sum(row, largest);
  let label = labels[row];
  for (var j = 0u; j < params.classes; j++) {
    let at = row * params.classes + j;
    var g = exp(logits[at] - largest) * norm;
    if (i32(j) == label) {
      g -= scale;
    }
    out[at] = g;
  }
}
