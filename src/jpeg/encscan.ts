// Progressive-mode scan models (ITU T.81 G.1.2), producing a SymbolStream.
// Coefficient layout everywhere: Int16Array, 64 per block, blocks in the
// component's raster order, zigzag order inside a block. AC scans walk that
// order; DC scans may interleave components and follow a ScanOrder (MCUs,
// layout.ts). The behaviour mirrors libjpeg's jcphuff.c (and jctrans.c for
// MCU padding blocks), which is what every decoder in the wild is tested against.

import type { SymbolStream } from './huffman.js';
import type { ScanOrder } from './layout.js';

/** EOBRUN is coded as 2^r + r extra bits with r <= 14 (T.81 G.1.2.2). */
const MAX_EOBRUN = 0x7fff;
/**
 * Correction bits buffered behind a pending EOBRUN (AC refinement). libjpeg
 * flushes once more than MAX_CORR_BITS - 63 are pending so the buffer of 1000
 * can always absorb one more block; we use the same bound.
 */
const MAX_CORR_BITS = 1000;

/** Number of bits needed for |v| (the JPEG "SSSS" magnitude category). */
function bitLength(v: number): number {
  return 32 - Math.clz32(v);
}

/** Largest magnitude categories for 8-bit samples (T.81 F.1.2.1-2, Tables F.1, F.2). */
const MAX_DC_BITS = 11;
const MAX_AC_BITS = 10;

function outOfRange(what: string, v: number): RangeError {
  return new RangeError(`${what} ${v} does not fit an 8-bit JPEG`);
}

/**
 * DC first scan (Ah = 0), possibly interleaved: MCU by MCU, each scan
 * component's blocks of that MCU in turn (`order`, see layout.ts). MCU
 * padding blocks (offset -1) repeat the DC of the block before them, as
 * libjpeg does, so their difference codes as a single 0 symbol.
 */
export function encodeDcFirst(comps: readonly Int16Array[], tables: readonly number[], order: ScanOrder, al: number, out: SymbolStream): void {
  const pred = new Int32Array(comps.length); // DC predictors start at 0
  const last = new Int32Array(comps.length); // offset of the last real block seen
  for (let m = 0; m < order.mcus; m++) {
    for (let c = 0; c < comps.length; c++) {
      const n = order.perMcu[c]!;
      const offs = order.offsets[c]!;
      const t = tables[c]!;
      for (let j = m * n, end = j + n; j < end; j++) {
        const off = offs[j]!;
        if (off >= 0) last[c] = off;
        const dc = comps[c]![last[c]!]! >> al; // arithmetic shift = point transform
        let diff = dc - pred[c]!;
        pred[c] = dc;
        if (diff === 0) {
          out.symbol(t, 0);
          continue;
        }
        const mag = diff < 0 ? -diff : diff;
        const nbits = bitLength(mag);
        if (nbits > MAX_DC_BITS) throw outOfRange('DC difference', diff);
        if (diff < 0) diff -= 1; // negative values are sent as diff-1 (one's complement)
        out.symbol(t, nbits);
        out.bits(diff, nbits);
      }
    }
  }
}

/** DC refinement scan: one raw bit per block, no Huffman coding; same block order as the DC first scan. */
export function encodeDcRefine(comps: readonly Int16Array[], order: ScanOrder, al: number, out: SymbolStream): void {
  const last = new Int32Array(comps.length);
  for (let m = 0; m < order.mcus; m++) {
    for (let c = 0; c < comps.length; c++) {
      const n = order.perMcu[c]!;
      const offs = order.offsets[c]!;
      for (let j = m * n, end = j + n; j < end; j++) {
        const off = offs[j]!;
        if (off >= 0) last[c] = off;
        out.bits((comps[c]![last[c]!]! >> al) & 1, 1);
      }
    }
  }
}

/**
 * Zigzag index of the last non-zero coefficient of each block (0 if none).
 * The AC scans stop there: everything after it is zero at any precision, and
 * typical blocks end in long zero runs.
 */
export function lastNonZero(coefs: Int16Array, nBlocks: number): Uint8Array {
  const last = new Uint8Array(nBlocks);
  for (let b = 0, base = 0; b < nBlocks; b++, base += 64) {
    let k = 63;
    while (k > 0 && coefs[base + k] === 0) k--;
    last[b] = k;
  }
  return last;
}

/** Emits an EOBRUN symbol (T.81 G.1.2.2): EOBn with n = floor(log2(run)), then the n low bits of run. */
function emitEobrun(out: SymbolStream, table: number, eobrun: number): void {
  const nbits = bitLength(eobrun) - 1;
  out.symbol(table, nbits << 4);
  if (nbits > 0) out.bits(eobrun, nbits); // bits() keeps the low nbits
}

// The scan loops below keep their state in plain locals and call only
// module-level helpers: closures over mutable locals would force V8 to keep
// that state in heap contexts, which made these hot loops several times slower.

/** AC first scan (Ah = 0) over band ss..se of one component, with EOB runs. */
export function encodeAcFirst(
  coefs: Int16Array,
  table: number,
  nBlocks: number,
  ss: number,
  se: number,
  al: number,
  out: SymbolStream,
  lastNz: Uint8Array = lastNonZero(coefs, nBlocks),
): void {
  let eobrun = 0;
  for (let b = 0, base = 0; b < nBlocks; b++, base += 64) {
    const end = Math.min(se, lastNz[b]!);
    let run = 0;
    for (let k = ss; k <= end; k++) {
      const v = coefs[base + k]!;
      // Point transform divides the magnitude (not the two's complement value).
      const mag = (v < 0 ? -v : v) >> al;
      if (mag === 0) {
        run++;
        continue;
      }
      if (eobrun > 0) {
        emitEobrun(out, table, eobrun);
        eobrun = 0;
      }
      while (run > 15) {
        out.symbol(table, 0xf0); // ZRL
        run -= 16;
      }
      const nbits = bitLength(mag);
      if (nbits > MAX_AC_BITS) throw outOfRange('AC coefficient', v);
      out.symbol(table, (run << 4) | nbits);
      out.bits(v < 0 ? ~mag : mag, nbits);
      run = 0;
    }
    if (run > 0 || end < se) {
      // Trailing zeros of this block join the current end-of-band run.
      if (++eobrun === MAX_EOBRUN) {
        emitEobrun(out, table, eobrun);
        eobrun = 0;
      }
    }
  }
  if (eobrun > 0) emitEobrun(out, table, eobrun);
}

// Scratch for encodeAcRefine.
const refAbs = new Int32Array(64);
const blockCorr = new Uint8Array(64);
const pendingCorr = new Uint8Array(MAX_CORR_BITS + 64);

/** Appends buffered correction bits, in groups of up to 16 to keep the stream short. */
function emitCorrectionBits(out: SymbolStream, buf: Uint8Array, n: number): void {
  for (let i = 0; i < n; ) {
    const len = Math.min(16, n - i);
    let v = 0;
    for (let j = 0; j < len; j++) v = (v << 1) | buf[i + j]!;
    out.bits(v, len);
    i += len;
  }
}

/**
 * AC refinement scan (Ah = Al + 1) over band ss..se of one component
 * (T.81 G.1.2.3; same decisions as libjpeg's encode_mcu_AC_refine).
 *
 * Coefficients already non-zero at the previous precision ("history") only
 * send one correction bit each; they do not count in zero runs. Those bits
 * follow the next coded symbol of the block: after a newly non-zero
 * coefficient's RS symbol and sign bit, after a ZRL, or, for bits at the end
 * of the block, after the EOBRUN symbol that eventually covers this block.
 */
export function encodeAcRefine(
  coefs: Int16Array,
  table: number,
  nBlocks: number,
  ss: number,
  se: number,
  al: number,
  out: SymbolStream,
  lastNz: Uint8Array = lastNonZero(coefs, nBlocks),
): void {
  const abs = refAbs;
  const corr = blockCorr; // correction bits of the current block not yet sent
  const pending = pendingCorr; // correction bits of blocks inside the EOB run
  let eobrun = 0;
  let npending = 0;

  for (let b = 0, base = 0; b < nBlocks; b++, base += 64) {
    // Pre-pass: magnitudes at this precision, the last index that becomes
    // newly non-zero (|v| >> al === 1; ZRLs are only worth sending before it)
    // and the last non-zero one (everything after it is plain EOB).
    let eob = 0;
    let last = ss - 1;
    for (let k = ss, end = Math.min(se, lastNz[b]!); k <= end; k++) {
      const v = coefs[base + k]!;
      const m = (v < 0 ? -v : v) >> al;
      abs[k] = m;
      if (m !== 0) {
        last = k;
        if (m === 1) eob = k;
      }
    }

    let run = 0;
    let ncorr = 0;
    for (let k = ss; k <= last; k++) {
      const m = abs[k]!;
      if (m === 0) {
        run++;
        continue;
      }
      while (run > 15 && k <= eob) {
        if (eobrun > 0) {
          emitEobrun(out, table, eobrun);
          emitCorrectionBits(out, pending, npending);
          eobrun = npending = 0;
        }
        out.symbol(table, 0xf0); // ZRL, followed by the bits it skipped over
        run -= 16;
        emitCorrectionBits(out, corr, ncorr);
        ncorr = 0;
      }
      if (m > 1) {
        // History coefficient: only its new low bit is sent, and later.
        corr[ncorr++] = m & 1;
        continue;
      }
      // Newly non-zero coefficient: RS symbol with size 1, sign, then the
      // correction bits collected since the previous symbol.
      if (eobrun > 0) {
        emitEobrun(out, table, eobrun);
        emitCorrectionBits(out, pending, npending);
        eobrun = npending = 0;
      }
      out.symbol(table, (run << 4) | 1);
      out.bits(coefs[base + k]! < 0 ? 0 : 1, 1);
      emitCorrectionBits(out, corr, ncorr);
      ncorr = 0;
      run = 0;
    }

    if (run > 0 || ncorr > 0 || last < se) {
      // Block ends in an EOB: its leftover correction bits ride on the EOBRUN.
      eobrun++;
      for (let i = 0; i < ncorr; i++) pending[npending++] = corr[i]!;
      if (eobrun === MAX_EOBRUN || npending > MAX_CORR_BITS - 64 + 1) {
        emitEobrun(out, table, eobrun);
        emitCorrectionBits(out, pending, npending);
        eobrun = npending = 0;
      }
    }
  }
  if (eobrun > 0) {
    emitEobrun(out, table, eobrun);
    emitCorrectionBits(out, pending, npending);
  }
}
