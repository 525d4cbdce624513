// TOC products on the resolved-runs layout (src/toc/gpu-runs.ts, docs/toc.md
// "Kernel design"). Every code a batch reuses enough is *cached*: its partial sum
// over its run of first-layer pairs is computed once per output column (dispatch
// 1) and read by every row that uses it (dispatch 2); all other codes are stored
// as their pairs, so such rows cost what CSR costs. Each output is summed by one
// invocation in a fixed order: no atomics, no barriers, deterministic results.
//   A * M:   run_sums        H[q][j] = sum of val * M[col][j] over the run of q
//            row_sums        R[r][j] = inline pairs of r + sum of H[q][j] over r's cached codes
//   A^T * M: occurrence_sums G[q][j] = sum of M[r][j] over the rows r using q
//            column_sums     R[c][j] = inline (r, pair) items of c + (q, pair) items of c
// Two forms of each entry point:
//   - scalar (run_sums, ...): one invocation per (item, output column j), any strides; the
//     scratch (H or G, |S| x k) is stored column by column (q + j * |S|);
//   - quad (run_sums4, ...): one invocation per (item, 4 output columns), for row-major M and R
//     with k a multiple of 4 (what the lab's first layer and its gradient use when k is): one
//     item load and one value load serve 4 outputs, M, R and the scratch (q * k + j) move as
//     vec4, and the invocations of one item are neighbours (item-major), so a SIMD group shares
//     one item's trip counts and index loads instead of diverging over rows of different shape.

struct Params {
  k: u32,
  items: u32,      // rows (row_sums), cols (column_sums) or cached codes (run_sums, occurrence_sums)
  cached: u32,     // |S|
  pad: u32,
  m_row: u32,      // M[i][j] = m[i * m_row + j * m_col]
  m_col: u32,
  r_row: u32,      // R[i][j] = out[i * r_row + j * r_col]
  r_col: u32,
}

override WG: u32 = 64u;        // invocations per workgroup
override IDX16: bool = true;   // occurrence lists hold two u16 per word (low half first)
override PAIR_BITS: u32 = 16u; // row, run and column items: hi << PAIR_BITS | pair
override WIDE: bool = false;   // items: two words each instead
override UNIT: bool = false;   // every pair's value is 1.0 (one-hot tables): no value loads

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> pairs: array<vec2<u32>>; // column, value bits
@group(0) @binding(2) var<storage, read> m: array<f32>;
@group(0) @binding(3) var<storage, read_write> scratch: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> bounds: array<u32>;  // rowBounds or colBounds
@group(0) @binding(6) var<storage, read> items: array<u32>;   // rowItems, runItems or colItems (see item_at)
@group(0) @binding(7) var<storage, read> list_offsets: array<u32>; // runOffsets or occurrenceOffsets
@group(0) @binding(8) var<storage, read> list: array<u32>;    // occurrenceRows
// The quad entry points' views of M, R and the scratch (the same buffers, bound in their place).
@group(0) @binding(9) var<storage, read> m4: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> out4: array<vec4<f32>>;
@group(0) @binding(11) var<storage, read_write> scratch4: array<vec4<f32>>;

fn list_at(i: u32) -> u32 {
  if (IDX16) {
    return (list[i >> 1u] >> ((i & 1u) << 4u)) & 0xffffu;
  }
  return list[i];
}

// Item i as (hi, pair). Row items: inline (column, pair), cached (code, 0); run items
// (column, pair); column items: inline (row, pair), cached (code, pair). The column of an
// inline row or run item is in the item itself, so the read of M depends on one load, as
// in CSR, not on the pair table too.
fn item_at(i: u32) -> vec2<u32> {
  if (WIDE) {
    return vec2<u32>(items[2u * i], items[2u * i + 1u]);
  }
  let w = items[i];
  return vec2<u32>(w >> PAIR_BITS, w & ((1u << PAIR_BITS) - 1u));
}

// val(p) * x, with no load when every value is 1 (1 * x is x, bit for bit).
fn scaled(p: u32, x: f32) -> f32 {
  if (UNIT) {
    return x;
  }
  return bitcast<f32>(pairs[p].y) * x;
}

fn scaled4(p: u32, x: vec4<f32>) -> vec4<f32> {
  if (UNIT) {
    return x;
  }
  return bitcast<f32>(pairs[p].y) * x;
}

// ---------------------------------------------------------------- scalar

@compute @workgroup_size(WG)
fn run_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let q = id.x;
  let j = id.y;
  if (q >= params.items || j >= params.k) {
    return;
  }
  var sum = 0.0;
  for (var t = list_offsets[q]; t < list_offsets[q + 1u]; t++) {
    let it = item_at(t);
    sum += scaled(it.y, m[it.x * params.m_row + j * params.m_col]);
  }
  scratch[q + j * params.cached] = sum;
}

@compute @workgroup_size(WG)
fn row_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let r = id.x;
  let j = id.y;
  if (r >= params.items || j >= params.k) {
    return;
  }
  var sum = 0.0;
  let split = bounds[2u * r + 1u];
  for (var t = bounds[2u * r]; t < split; t++) {
    let it = item_at(t);
    sum += scaled(it.y, m[it.x * params.m_row + j * params.m_col]);
  }
  let column = j * params.cached;
  for (var t = split; t < bounds[2u * r + 2u]; t++) {
    sum += scratch[item_at(t).x + column];
  }
  out[r * params.r_row + j * params.r_col] = sum;
}

@compute @workgroup_size(WG)
fn occurrence_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let q = id.x;
  let j = id.y;
  if (q >= params.items || j >= params.k) {
    return;
  }
  var sum = 0.0;
  for (var t = list_offsets[q]; t < list_offsets[q + 1u]; t++) {
    sum += m[list_at(t) * params.m_row + j * params.m_col];
  }
  scratch[q + j * params.cached] = sum;
}

@compute @workgroup_size(WG)
fn column_sums(@builtin(global_invocation_id) id: vec3<u32>) {
  let c = id.x;
  let j = id.y;
  if (c >= params.items || j >= params.k) {
    return;
  }
  var sum = 0.0;
  let split = bounds[2u * c + 1u];
  for (var t = bounds[2u * c]; t < split; t++) {
    let it = item_at(t);
    sum += scaled(it.y, m[it.x * params.m_row + j * params.m_col]);
  }
  let column = j * params.cached;
  for (var t = split; t < bounds[2u * c + 2u]; t++) {
    let it = item_at(t);
    sum += scaled(it.y, scratch[it.x + column]);
  }
  out[c * params.r_row + j * params.r_col] = sum;
}

// ---------------------------------------------------------------- quad

// (item, quad of output columns) of a flat, item-major invocation index; items = params.items
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
  let m_row4 = params.m_row >> 2u;
  var sum = vec4<f32>();
  for (var t = list_offsets[q]; t < list_offsets[q + 1u]; t++) {
    let it = item_at(t);
    sum += scaled4(it.y, m4[it.x * m_row4 + at.y]);
  }
  scratch4[q * (params.k >> 2u) + at.y] = sum;
}

@compute @workgroup_size(WG)
fn row_sums4(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let at = quad_of(id, groups);
  let r = at.x;
  if (r >= params.items) {
    return;
  }
  let m_row4 = params.m_row >> 2u;
  let k4 = params.k >> 2u;
  var sum = vec4<f32>();
  let split = bounds[2u * r + 1u];
  for (var t = bounds[2u * r]; t < split; t++) {
    let it = item_at(t);
    sum += scaled4(it.y, m4[it.x * m_row4 + at.y]);
  }
  for (var t = split; t < bounds[2u * r + 2u]; t++) {
    sum += scratch4[item_at(t).x * k4 + at.y];
  }
  out4[r * (params.r_row >> 2u) + at.y] = sum;
}

@compute @workgroup_size(WG)
fn occurrence_sums4(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let at = quad_of(id, groups);
  let q = at.x;
  if (q >= params.items) {
    return;
  }
  let m_row4 = params.m_row >> 2u;
  var sum = vec4<f32>();
  for (var t = list_offsets[q]; t < list_offsets[q + 1u]; t++) {
    sum += m4[list_at(t) * m_row4 + at.y];
  }
  scratch4[q * (params.k >> 2u) + at.y] = sum;
}

@compute @workgroup_size(WG)
fn column_sums4(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let at = quad_of(id, groups);
  let c = at.x;
  if (c >= params.items) {
    return;
  }
  let m_row4 = params.m_row >> 2u;
  let k4 = params.k >> 2u;
  var sum = vec4<f32>();
  let split = bounds[2u * c + 1u];
  for (var t = bounds[2u * c]; t < split; t++) {
    let it = item_at(t);
    sum += scaled4(it.y, m4[it.x * m_row4 + at.y]);
  }
  for (var t = split; t < bounds[2u * c + 2u]; t++) {
    let it = item_at(t);
    sum += scaled4(it.y, scratch4[it.x * k4 + at.y]);
  }
  out4[c * (params.r_row >> 2u) + at.y] = sum;
}
