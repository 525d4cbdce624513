// TOC products on the resolved-runs layout (src/toc/gpu-runs.ts, docs/toc.md
// "Kernel design"). Every code a batch reuses enough is *cached*: its partial sum
// over its run of first-layer pairs is computed once per output column and read
// by every row that uses it, as one more row of the operand: X = [M; H] (A * M)
// or X = [M; G] (A^T * M), row-major with row stride x_row. Then each product is
// one gather over X, shaped like CSR's: R[i][j] = sum of val(p) * X[hi][j] over
// item i's (hi, pair) items. Each output is summed by one invocation in a fixed
// order: no atomics, no barriers, deterministic results.
//   load_m          X[i][j] = M[i][j]               (when M cannot be copied in as it is)
//   run_sums        X[base + q][j] = H[q][j] = sum of val * X[col][j] over the run of q
//   occurrence_sums X[base + q][j] = G[q][j] = sum of X[r][j] over the rows r using q
//   gather          R[i][j] = sum of val(pair) * X[hi][j] over the items of row (or column) i (+ bias[j], relu: BIAS, RELU)
// Two forms of each: scalar, one invocation per (item, output column j), any
// strides of M and R; and quad (name ending in 4), one invocation per (item, 4
// output columns) for row-major X and R with k and the row strides multiples of
// 4: one item load and one value load serve 4 outputs, X and R move as vec4, and
// the invocations of one item are neighbours (item-major), so a SIMD group shares
// one item's trip count and index loads instead of diverging over items of
// different lengths.
// Loops load their end bound once (as csr.wgsl): SwiftShader re-reads it per term otherwise.
// A side that caches nothing can have *plain* items (PLAIN, session 11; by default in unit batches): an item is its row of X alone and its value
// item_values[t] lies beside it, so gather is CSR's loop load for load (no unpacking, no value load that waits on it).
// (Session 6 tried M and H / G as two bindings with no copy of M: slower overall, measured; docs/toc-kernels-log.md,
// "Session 6: M and H / G as two bindings, tried and reverted".)

struct Params {
  k: u32,
  items: u32,      // rows of X to fill (load_m), cached codes (run_sums, occurrence_sums), rows or columns (gather)
  base: u32,       // rows of M: H or G starts at X row base
  x_row: u32,      // X[i][j] = x[i * x_row + j]
  m_row: u32,      // M[i][j] = m[i * m_row + j * m_col] (load_m)
  m_col: u32,
  r_row: u32,      // R[i][j] = out[i * r_row + j * r_col]
  r_col: u32,
}

override WG: u32 = 64u;        // invocations per workgroup
override IDX16: bool = true;   // occurrence lists hold two u16 per word (low half first)
override PAIR_BITS: u32 = 16u; // items: hi << PAIR_BITS | pair
override WIDE: bool = false;   // items: two words each instead
override UNIT: bool = false;   // every value is 1.0 (one-hot tables): no value loads
override PLAIN: bool = false;  // items are hi alone; item t's value is item_values[t] (gather of a side with nothing cached)

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> values: array<f32>;      // pair values, then 1.0 (the unit pair)
@group(0) @binding(2) var<storage, read> m: array<f32>;           // load_m's input
@group(0) @binding(3) var<storage, read_write> ext: array<f32>;   // X while it is being filled
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> bounds: array<u32>;      // rowBounds, runOffsets or colBounds
@group(0) @binding(6) var<storage, read> items: array<u32>;       // rowItems, runItems or colItems (see item_at)
@group(0) @binding(7) var<storage, read> list_offsets: array<u32>; // occurrenceOffsets
@group(0) @binding(8) var<storage, read> list: array<u32>;        // occurrenceRows
@group(0) @binding(9) var<storage, read> x: array<f32>;           // X for gather: M itself when nothing is cached
// The quad entry points' vec4 views of the same buffers.
@group(0) @binding(10) var<storage, read_write> out4: array<vec4<f32>>;
@group(0) @binding(11) var<storage, read_write> ext4: array<vec4<f32>>;
@group(0) @binding(12) var<storage, read> x4: array<vec4<f32>>;
@group(0) @binding(13) var<storage, read> item_values: array<f32>; // PLAIN: each item's value (rowValues or colValues)
// gather's bias, added as it stores (finish, finish4: bias_epilogue.wgsl, prepended); a 16-byte stand-in when BIAS is off.
@group(0) @binding(14) var<storage, read> bias: array<f32>;
@group(0) @binding(15) var<storage, read> bias4: array<vec4<f32>>;

fn list_at(i: u32) -> u32 {
  if (IDX16) {
    return (list[i >> 1u] >> ((i & 1u) << 4u)) & 0xffffu;
  }
  return list[i];
}

// Item i as (hi, pair): hi is the row of X the term reads, so that read waits on
// one load, as in CSR, and the value load (if any) runs beside it.
// With PLAIN the second half is the item's own index, which scaled() reads item_values at.
fn item_at(i: u32) -> vec2<u32> {
  if (PLAIN) {
    return vec2<u32>(items[i], i);
  }
  if (WIDE) {
    return vec2<u32>(items[2u * i], items[2u * i + 1u]);
  }
  let w = items[i];
  return vec2<u32>(w >> PAIR_BITS, w & ((1u << PAIR_BITS) - 1u));
}

// val(p) * a, with no load when every value is 1 (1 * a is a, bit for bit).
fn scaled(p: u32, a: f32) -> f32 {
  if (UNIT) {
    return a;
  }
  if (PLAIN) {
    return item_values[p] * a;
  }
  return values[p] * a;
}

fn scaled4(p: u32, a: vec4<f32>) -> vec4<f32> {
  if (UNIT) {
    return a;
  }
  if (PLAIN) {
    return item_values[p] * a;
  }
  return values[p] * a;
}

// ---------------------------------------------------------------- scalar

@compute @workgroup_size(WG)
fn load_m(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.items || j >= params.k) {
    return;
  }
  ext[i * params.x_row + j] = m[i * params.m_row + j * params.m_col];
}

@compute @workgroup_size(WG)
fn run_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let q = id.x;
  let j = id.y;
  if (q >= params.items || j >= params.k) {
    return;
  }
  var sum = 0.0;
  let end = bounds[q + 1u];
  for (var t = bounds[q]; t < end; t++) {
    let it = item_at(t);
    sum += scaled(it.y, ext[it.x * params.x_row + j]);
  }
  ext[(params.base + q) * params.x_row + j] = sum;
}

@compute @workgroup_size(WG)
fn occurrence_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let q = id.x;
  let j = id.y;
  if (q >= params.items || j >= params.k) {
    return;
  }
  var sum = 0.0;
  let end = list_offsets[q + 1u];
  for (var t = list_offsets[q]; t < end; t++) {
    sum += ext[list_at(t) * params.x_row + j];
  }
  ext[(params.base + q) * params.x_row + j] = sum;
}

@compute @workgroup_size(WG)
fn gather(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.items || j >= params.k) {
    return;
  }
  var sum = 0.0;
  let end = bounds[i + 1u];
  for (var t = bounds[i]; t < end; t++) {
    let it = item_at(t);
    sum += scaled(it.y, x[it.x * params.x_row + j]);
  }
  out[i * params.r_row + j * params.r_col] = finish(sum, j);
}

// ---------------------------------------------------------------- quad

// (item, quad of output columns) of a flat, item-major invocation index; params.items
// means "out of range". The grid is 2-D only because one dimension holds at most 65,535 workgroups.
fn quad_of(id: vec3<u32>, groups: vec3<u32>) -> vec2<u32> {
  let flat = id.x + id.y * groups.x * WG;
  let k4 = params.k >> 2u;
  let item = flat / k4;
  return vec2<u32>(min(item, params.items), flat - item * k4);
}

@compute @workgroup_size(WG)
fn run_sums4(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let at = quad_of(id, groups);
  let q = at.x;
  if (q >= params.items) {
    return;
  }
  let x_row4 = params.x_row >> 2u;
  var sum = vec4<f32>();
  let end = bounds[q + 1u];
  for (var t = bounds[q]; t < end; t++) {
    let it = item_at(t);
    sum += scaled4(it.y, ext4[it.x * x_row4 + at.y]);
  }
  ext4[(params.base + q) * x_row4 + at.y] = sum;
}

@compute @workgroup_size(WG)
fn occurrence_sums4(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let at = quad_of(id, groups);
  let q = at.x;
  if (q >= params.items) {
    return;
  }
  let x_row4 = params.x_row >> 2u;
  var sum = vec4<f32>();
  let end = list_offsets[q + 1u];
  for (var t = list_offsets[q]; t < end; t++) {
    sum += ext4[list_at(t) * x_row4 + at.y];
  }
  ext4[(params.base + q) * x_row4 + at.y] = sum;
}

@compute @workgroup_size(WG)
fn gather4(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let at = quad_of(id, groups);
  let i = at.x;
  if (i >= params.items) {
    return;
  }
  let x_row4 = params.x_row >> 2u;
  var sum = vec4<f32>();
  let end = bounds[i + 1u];
  for (var t = bounds[i]; t < end; t++) {
    let it = item_at(t);
    sum += scaled4(it.y, x4[it.x * x_row4 + at.y]);
  }
  out4[i * (params.r_row >> 2u) + at.y] = finish4(sum, at.y);
}
