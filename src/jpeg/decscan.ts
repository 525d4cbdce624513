// Scan decoders: Huffman entropy-coded data to quantised DCT coefficients.
// Sequential scans follow T.81 F.2.2, progressive ones G.2 (same decisions as
// libjpeg's jdphuff.c, the reference every encoder is tested against).
// Coefficient layout as in encscan.ts: 64 per block, zigzag order, blocks in
// the component's raster order; ScanOrder (layout.ts) maps MCUs to blocks.

import type { BitReader, HuffDecodeTable } from './bitreader.js';
import type { ScanOrder } from './layout.js';
import { TranscodeError } from './transcode-error.js';

/** One component of a scan: its coefficients and the tables the scan selected. */
export interface ScanComponent {
  coefs: Int16Array;
  dc: HuffDecodeTable | undefined;
  ac: HuffDecodeTable | undefined;
}

/** Largest DC difference category for 8-bit samples (T.81 F.1.2.1, Table F.1). */
const MAX_DC_CATEGORY = 11;

// MCU padding blocks of interleaved scans are decoded here and dropped.
const padding = new Int16Array(64);

const corrupt = (what: string, label: string): TranscodeError => new TranscodeError(`corrupt JPEG: ${what} in ${label}`);

function dcDiff(r: BitReader, t: HuffDecodeTable, label: string): number {
  const s = r.decode(t);
  if (s > MAX_DC_CATEGORY) throw corrupt(`DC difference category ${s}`, label);
  return r.receiveExtend(s);
}

/** Sequential scan (SOF0/SOF1): each block's DC difference then its 63 AC coefficients (F.2.2.1-2). */
export function decodeSequential(r: BitReader, comps: readonly ScanComponent[], order: ScanOrder, restartInterval: number, label: string): void {
  const pred = new Int32Array(comps.length);
  for (let m = 0; m < order.mcus; m++) {
    if (restartInterval > 0 && m > 0 && m % restartInterval === 0) {
      r.restart();
      pred.fill(0);
    }
    for (let c = 0; c < comps.length; c++) {
      const { dc, ac } = comps[c]!;
      const n = order.perMcu[c]!;
      const offs = order.offsets[c]!;
      for (let j = m * n, end = j + n; j < end; j++) {
        const off = offs[j]!;
        const coefs = off >= 0 ? comps[c]!.coefs : padding;
        const base = Math.max(off, 0);
        pred[c] = pred[c]! + dcDiff(r, dc!, label);
        coefs[base] = pred[c]!;
        for (let k = 1; k < 64; k++) {
          const rs = r.decode(ac!);
          const run = rs >> 4;
          const s = rs & 15;
          if (s === 0) {
            if (run !== 15) break; // EOB
            k += 15; // ZRL: 16 zeros
            continue;
          }
          k += run;
          if (k > 63) throw corrupt('AC run past coefficient 63', label);
          coefs[base + k] = r.receiveExtend(s);
        }
      }
    }
  }
}

/** Progressive DC first scan (G.1.2.1): differences of DC >> Al, possibly interleaved. */
export function decodeDcFirst(r: BitReader, comps: readonly ScanComponent[], order: ScanOrder, al: number, restartInterval: number, label: string): void {
  const pred = new Int32Array(comps.length);
  for (let m = 0; m < order.mcus; m++) {
    if (restartInterval > 0 && m > 0 && m % restartInterval === 0) {
      r.restart();
      pred.fill(0);
    }
    for (let c = 0; c < comps.length; c++) {
      const n = order.perMcu[c]!;
      const offs = order.offsets[c]!;
      const coefs = comps[c]!.coefs;
      const dc = comps[c]!.dc!;
      for (let j = m * n, end = j + n; j < end; j++) {
        pred[c] = pred[c]! + dcDiff(r, dc, label);
        const off = offs[j]!;
        if (off >= 0) coefs[off] = pred[c]! << al;
      }
    }
  }
}

/** Progressive DC refinement scan (G.1.2.1): one raw bit per block. */
export function decodeDcRefine(r: BitReader, comps: readonly ScanComponent[], order: ScanOrder, al: number, restartInterval: number): void {
  const bit = 1 << al;
  for (let m = 0; m < order.mcus; m++) {
    if (restartInterval > 0 && m > 0 && m % restartInterval === 0) r.restart();
    for (let c = 0; c < comps.length; c++) {
      const n = order.perMcu[c]!;
      const offs = order.offsets[c]!;
      const coefs = comps[c]!.coefs;
      for (let j = m * n, end = j + n; j < end; j++) {
        const off = offs[j]!;
        if (r.bit() && off >= 0) coefs[off] = coefs[off]! | bit;
      }
    }
  }
}

/** Progressive AC first scan (G.1.2.2) of one component's band ss..se, with EOB runs. */
export function decodeAcFirst(
  r: BitReader,
  comp: ScanComponent,
  nBlocks: number,
  ss: number,
  se: number,
  al: number,
  restartInterval: number,
  label: string,
): void {
  const { coefs } = comp;
  const ac = comp.ac!;
  let eobrun = 0;
  for (let b = 0; b < nBlocks; b++) {
    if (restartInterval > 0 && b > 0 && b % restartInterval === 0) {
      r.restart();
      eobrun = 0;
    }
    if (eobrun > 0) {
      eobrun--;
      continue;
    }
    const base = b * 64;
    for (let k = ss; k <= se; k++) {
      const rs = r.decode(ac);
      const run = rs >> 4;
      const s = rs & 15;
      if (s === 0) {
        if (run === 15) {
          k += 15; // ZRL
          continue;
        }
        // EOBn: this block and 2^n - 1 + (n extra bits) more end here (G.1.2.2).
        eobrun = (1 << run) - 1;
        if (run > 0) eobrun += r.bits(run);
        break;
      }
      k += run;
      if (k > se) throw corrupt(`AC run past coefficient ${se}`, label);
      coefs[base + k] = r.receiveExtend(s) << al;
    }
  }
}

/**
 * Progressive AC refinement scan (G.1.2.3): newly non-zero coefficients come
 * as run/size-1 symbols plus a sign bit; every coefficient that was already
 * non-zero and is passed over gets one correction bit.
 */
export function decodeAcRefine(
  r: BitReader,
  comp: ScanComponent,
  nBlocks: number,
  ss: number,
  se: number,
  al: number,
  restartInterval: number,
  label: string,
): void {
  const { coefs } = comp;
  const ac = comp.ac!;
  const p1 = 1 << al;
  const m1 = -1 << al;
  let eobrun = 0;
  for (let b = 0; b < nBlocks; b++) {
    if (restartInterval > 0 && b > 0 && b % restartInterval === 0) {
      r.restart();
      eobrun = 0;
    }
    const base = b * 64;
    let k = ss;
    if (eobrun === 0) {
      for (; k <= se; k++) {
        const rs = r.decode(ac);
        let run = rs >> 4;
        const s = rs & 15;
        let value = 0;
        if (s !== 0) {
          if (s !== 1) throw corrupt(`AC refinement size ${s} (must be 1)`, label);
          value = r.bit() ? p1 : m1;
        } else if (run !== 15) {
          eobrun = 1 << run;
          if (run > 0) eobrun += r.bits(run);
          break; // the rest of the block goes with the EOB run below
        }
        // Skip `run` zero coefficients; refine the non-zero ones passed on the way.
        for (; k <= se; k++) {
          const c = coefs[base + k]!;
          if (c !== 0) {
            if (r.bit() && (c & p1) === 0) coefs[base + k] = c >= 0 ? c + p1 : c + m1;
          } else if (run-- === 0) {
            break;
          }
        }
        if (value !== 0) {
          if (k > se) throw corrupt(`AC run past coefficient ${se}`, label);
          coefs[base + k] = value;
        }
      }
    }
    if (eobrun > 0) {
      // Inside an EOB run only correction bits remain.
      for (; k <= se; k++) {
        const c = coefs[base + k]!;
        if (c !== 0 && r.bit() && (c & p1) === 0) coefs[base + k] = c >= 0 ? c + p1 : c + m1;
      }
      eobrun--;
    }
  }
}
