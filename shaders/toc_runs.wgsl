// TOC products on the resolved-runs layout (src/toc/gpu-runs.ts, docs/toc.md
// "Kernel design"). Every code a batch reuses enough is *cached*: its partial sum
// over its run of first-layer pairs is computed once per output column, into a
// buffer of its own, H (A * M) or G (A^T * M), row-major with k columns. Then each
// product is one gather, shaped like CSR's: R[i][j] = sum of val(p) * X[hi][j] over
// item i's (hi, pair) items, where X[hi] is M's row hi for hi < base and H's (G's)
// row hi - base after it. M is read where it lies, never copied: the items of a row
// (or column) list M's rows before the cached ones, and the layout says where the
// cached ones start (splits), so the gather switches buffers once per row with no
// test per term. Each output is summed by one invocation in a fixed order: no
// atomics, no barriers, deterministic results.
//   run_sums        H[q][j] = sum of val * M[col][j] over the run of q
//   occurrence_sums G[q][j] = sum of M[r][j] over the rows r using q
//   gather          R[i][j] = sum of val(pair) * X[hi][j] over the items of row (or column) i
// Two forms of each: scalar, one invocation per (item, output column j), any
// strides of M and R; and quad (name ending in 4), one invocation per (item, 4
// output columns) for row-major M and R with k and the row strides multiples of
// 4: one item load and one value load serve 4 outputs, M, H and R move as vec4, and
// the invocations of one item are neighbours (item-major), so a SIMD group shares
// one item's trip count and index loads instead of diverging over items of
// different lengths.

struct Params {
  k: u32,          // output columns; H and G are row-major with k columns
  items: u32,      // cached codes (run_sums, occurrence_sums), rows or columns (gather)
  base: u32,       // rows of M: item row hi >= base reads H or G row hi - base
  _pad: u32,
  m_row: u32,      // M[i][j] = m[i * m_row + j * m_col]
  m_col: u32,
  r_row: u32,      // R[i][j] = out[i * r_row + j * r_col]
  r_col: u32,
}

override WG: u32 = 64u;        // invocations per workgroup
override IDX16: bool = true;   // occurrence lists hold two u16 per word (low half first)
override PAIR_BITS: u32 = 16u; // items: hi << PAIR_BITS | pair
override WIDE: bool = false;   // items: two words each instead
override UNIT: bool = false;   // every value is 1.0 (one-hot tables): no value loads
override CACHED: bool = true;  // the batch has cached codes: gather reads splits and H / G (else M alone, as CSR)

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> values: array<f32>;      // pair values, then 1.0 (the unit pair)
@group(0) @binding(2) var<storage, read> m: array<f32>;           // the operand M, where tfjs (or the caller) keeps it
@group(0) @binding(3) var<storage, read_write> fill: array<f32>;  // H or G while it is being filled
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read> bounds: array<u32>;      // rowBounds, runOffsets or colBounds
@group(0) @binding(6) var<storage, read> items: array<u32>;       // rowItems, runItems or colItems (see item_at)
@group(0) @binding(7) var<storage, read> list_offsets: array<u32>; // occurrenceOffsets
@group(0) @binding(8) var<storage, read> list: array<u32>;        // occurrenceRows
@group(0) @binding(9) var<storage, read> sums: array<f32>;        // H or G for gather (a dummy when nothing is cached)
// The quad entry points' vec4 views of the same buffers.
@group(0) @binding(10) var<storage, read_write> out4: array<vec4<f32>>;
@group(0) @binding(11) var<storage, read_write> fill4: array<vec4<f32>>;
@group(0) @binding(12) var<storage, read> m4: array<vec4<f32>>;
@group(0) @binding(13) var<storage, read> sums4: array<vec4<f32>>;
@group(0) @binding(14) var<storage, read> splits: array<u32>;     // rowSplit or colSplit: first cached item of each row

fn list_at(i: u32) -> u32 {
  if (IDX16) {
    return (list[i >> 1u] >> ((i & 1u) << 4u)) & 0xffffu;
  }
  return list[i];
}

// Item i as (hi, pair): hi is the row of M (or, from base on, of H or G) the term
// reads, so that read waits on one load, as in CSR, and the value load (if any)
// runs beside it.
fn item_at(i: u32) -> vec2<u32> {
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
  return values[p] * a;
}

fn scaled4(p: u32, a: vec4<f32>) -> vec4<f32> {
  if (UNIT) {
    return a;
  }
  return values[p] * a;
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
  let end = bounds[q + 1u];
  for (var t = bounds[q]; t < end; t++) {
    let it = item_at(t);
    sum += scaled(it.y, m[it.x * params.m_row + j * params.m_col]);
  }
  fill[q * params.k + j] = sum;
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
    sum += m[list_at(t) * params.m_row + j * params.m_col];
  }
  fill[q * params.k + j] = sum;
}

// The items of row i read M's rows first, then (from splits[i]) H's or G's: two
// loops, so each term's load has one source, and the order of the sum is the
// items' order, as with one buffer.
@compute @workgroup_size(WG)
fn gather(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  let j = id.y;
  if (i >= params.items || j >= params.k) {
    return;
  }
  let end = bounds[i + 1u];
  var split = end;
  if (CACHED) {
    split = splits[i];
  }
  var sum = 0.0;
  for (var t = bounds[i]; t < split; t++) {
    let it = item_at(t);
    sum += scaled(it.y, m[it.x * params.m_row + j * params.m_col]);
  }
  if (CACHED) {
    for (var t = split; t < end; t++) {
      let it = item_at(t);
      sum += scaled(it.y, sums[(it.x - params.base) * params.k + j]);
    }
  }
  out[i * params.r_row + j * params.r_col] = sum;
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
  let m_row4 = params.m_row >> 2u;
  var sum = vec4<f32>();
  let end = bounds[q + 1u];
  for (var t = bounds[q]; t < end; t++) {
    let it = item_at(t);
    sum += scaled4(it.y, m4[it.x * m_row4 + at.y]);
  }
  fill4[q * (params.k >> 2u) + at.y] = sum;
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
  let end = list_offsets[q + 1u];
  for (var t = list_offsets[q]; t < end; t++) {
    sum += m4[list_at(t) * m_row4 + at.y];
  }
  fill4[q * (params.k >> 2u) + at.y] = sum;
}

@compute @workgroup_size(WG)
fn gather4(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let at = quad_of(id, groups);
  let i = at.x;
  if (i >= params.items) {
    return;
  }
  let m_row4 = params.m_row >> 2u;
  let end = bounds[i + 1u];
  var split = end;
  if (CACHED) {
    split = splits[i];
  }
  var sum = vec4<f32>();
  for (var t = bounds[i]; t < split; t++) {
    let it = item_at(t);
    sum += scaled4(it.y, m4[it.x * m_row4 + at.y]);
  }
  if (CACHED) {
    let k4 = params.k >> 2u;
    for (var t = split; t < end; t++) {
      let it = item_at(t);
      sum += scaled4(it.y, sums4[(it.x - params.base) * k4 + at.y]);
    }
  }
  out4[i * (params.r_row >> 2u) + at.y] = sum;
}
