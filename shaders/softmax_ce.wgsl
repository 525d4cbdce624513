// Softmax cross-entropy of logits (rows x classes) against integer labels, the
// lab's loss (src/gpu/softmax-ce.ts). tfjs builds it from a log-sum-exp, a
// one-hot product and a mean: a Max and three or four Sums over [rows, classes],
// each a workgroup reduction of 256 invocations per row. With a few classes that
// is almost all of a tabular step on SwiftShader (bench/results/toc-kernels-s12-*.md).
// Here a row is one invocation's loop over its classes, which also writes the row's
// gradient (the backward pass only scales it), and the mean over rows is summed in
// a fixed order, so the bits are the same every run.

struct Params {
  rows: u32,
  classes: u32,
}

override WG: u32 = 64u; // invocations per workgroup, set per pipeline from its program's workgroupSize

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> labels: array<i32>;
@group(0) @binding(3) var<storage, read_write> row_loss: array<f32>; // rows: written by row_losses, summed by mean_loss
@group(0) @binding(4) var<storage, read_write> gradient: array<f32>; // rows x classes: dL/dlogits for dL/dloss = 1
@group(0) @binding(5) var<storage, read_write> loss: array<f32>;     // one value: the mean

// Row i's loss, log-sum-exp(row) - logit[label], and its gradient row (softmax(row) - onehot(label)) / rows, one
// invocation per row ('grid' layout, k = 1). A label outside 0..classes-1 is a zero one-hot row, as in tfjs's
// product: the row's loss is 0 and its gradient softmax(row) / rows. The largest logit is subtracted before exp.
@compute @workgroup_size(WG)
fn row_losses(@builtin(global_invocation_id) id: vec3<u32>) {
  let row = id.x;
  if (row >= params.rows) {
    return;
  }
  let first = row * params.classes;
  var largest = logits[first];
  for (var j = 1u; j < params.classes; j++) {
    largest = max(largest, logits[first + j]);
  }
  var sum = 0.0;
  for (var j = 0u; j < params.classes; j++) {
    sum += exp(logits[first + j] - largest);
  }
  let label = labels[row];
  let inside = label >= 0 && u32(label) < params.classes;
  let scale = 1.0 / f32(params.rows);
  let norm = scale / sum;
  for (var j = 0u; j < params.classes; j++) {
    var g = exp(logits[first + j] - largest) * norm;
    if (i32(j) == label) {
      g -= scale;
    }
    gradient[first + j] = g;
  }
  var own = 0.0;
  if (inside) {
    own = log(sum) + largest - logits[first + u32(label)];
  }
  row_loss[row] = own;
}

var<workgroup> partial: array<f32, WG>;

// The mean of the row losses: one workgroup; invocation t adds rows t, t + WG, ... in order, then invocation 0 adds
// the WG partial sums in order.
@compute @workgroup_size(WG)
fn mean_loss(@builtin(local_invocation_id) local: vec3<u32>) {
  var sum = 0.0;
  for (var row = local.x; row < params.rows; row += WG) {
    sum += row_loss[row];
  }
  partial[local.x] = sum;
  workgroupBarrier();
  if (local.x == 0u) {
    var total = 0.0;
    for (var t = 0u; t < WG; t++) {
      total += partial[t];
    }
    loss[0] = total / f32(params.rows);
  }
}
