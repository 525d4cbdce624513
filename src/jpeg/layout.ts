// Block geometry of a JPEG frame with arbitrary sampling factors (T.81 A.1.1,
// A.2). Shared by the coefficient decoder and the progressive writer.
//
// Coefficients of a component are stored for its real blocks only:
// ceil(xi/8) x ceil(yi/8) blocks, raster order, 64 zigzag-ordered values each.
// Interleaved scans also visit MCU padding blocks beyond the right and bottom
// edges (A.2.3); those have no storage and are marked -1 in a ScanOrder.

export interface Sampling {
  /** horizontal and vertical sampling factors, 1..4 */
  h: number;
  v: number;
}

export interface BlockGrid {
  /** blocks per row and per column of the component's own sample array */
  bw: number;
  bh: number;
}

/** T.81 A.1.1: xi = ceil(X * Hi / Hmax), yi = ceil(Y * Vi / Vmax); blocks cover them. */
export function componentGrid(width: number, height: number, s: Sampling, hmax: number, vmax: number): BlockGrid {
  const xi = Math.ceil((width * s.h) / hmax);
  const yi = Math.ceil((height * s.v) / vmax);
  return { bw: Math.ceil(xi / 8), bh: Math.ceil(yi / 8) };
}

/** The order in which one scan visits blocks, MCU by MCU. */
export interface ScanOrder {
  mcus: number;
  /** blocks of each scan component inside one MCU (Hi * Vi if interleaved, else 1) */
  perMcu: number[];
  /**
   * offsets[c][m * perMcu[c] + j] = index of the first coefficient of the j-th
   * block of scan component c in MCU m (block number * 64), or -1 for an MCU
   * padding block that lies outside the component.
   */
  offsets: Int32Array[];
}

/**
 * Block order of a scan over `scanComps` (indices into `comps`).
 * One component: non-interleaved, its own blocks in raster order (A.2.2).
 * Several: interleaved MCUs of Hi x Vi blocks per component, MCU grid
 * ceil(X / 8Hmax) x ceil(Y / 8Vmax), blocks left-to-right, top-to-bottom
 * inside each component's part of the MCU (A.2.3).
 */
export function scanOrder(width: number, height: number, comps: readonly Sampling[], scanComps: readonly number[]): ScanOrder {
  let hmax = 1;
  let vmax = 1;
  for (const c of comps) {
    hmax = Math.max(hmax, c.h);
    vmax = Math.max(vmax, c.v);
  }
  if (scanComps.length === 1) {
    const { bw, bh } = componentGrid(width, height, comps[scanComps[0]!]!, hmax, vmax);
    const offsets = new Int32Array(bw * bh);
    for (let b = 0; b < offsets.length; b++) offsets[b] = b * 64;
    return { mcus: offsets.length, perMcu: [1], offsets: [offsets] };
  }
  const mcusX = Math.ceil(width / (8 * hmax));
  const mcusY = Math.ceil(height / (8 * vmax));
  const mcus = mcusX * mcusY;
  const perMcu: number[] = [];
  const offsets: Int32Array[] = [];
  for (const ci of scanComps) {
    const s = comps[ci]!;
    const { bw, bh } = componentGrid(width, height, s, hmax, vmax);
    const n = s.h * s.v;
    const offs = new Int32Array(mcus * n);
    let i = 0;
    for (let my = 0; my < mcusY; my++) {
      for (let mx = 0; mx < mcusX; mx++) {
        for (let y = 0; y < s.v; y++) {
          for (let x = 0; x < s.h; x++) {
            const bx = mx * s.h + x;
            const by = my * s.v + y;
            offs[i++] = bx < bw && by < bh ? (by * bw + bx) * 64 : -1;
          }
        }
      }
    }
    perMcu.push(n);
    offsets.push(offs);
  }
  return { mcus, perMcu, offsets };
}
