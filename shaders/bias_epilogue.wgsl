// What a gather adds to each output as it stores it: a first layer's bias, then its ReLU
// (session 34). Prepended to toc_runs.wgsl and csr.wgsl by their TypeScript side; each of
// those declares `bias` and `bias4` at bindings of its own. The same f32 add and select
// as bias.wgsl's add_bias on the stored sum, so the same bits as the product then that pass.

override BIAS: bool = false; // out = sum + bias[j] (or bias4[j4] in the quad forms)
override RELU: bool = false; // with BIAS: then relu, as add_bias writes it (select, so NaN passes)

fn finish(sum: f32, j: u32) -> f32 {
  if (!BIAS) {
    return sum;
  }
  let z = sum + bias[j];
  return select(z, 0.0, RELU && z < 0.0);
}

fn finish4(sum: vec4<f32>, j4: u32) -> vec4<f32> {
  if (!BIAS) {
    return sum;
  }
  let z = sum + bias4[j4];
  return select(z, vec4<f32>(), vec4<bool>(RELU) & (z < vec4<f32>()));
}
