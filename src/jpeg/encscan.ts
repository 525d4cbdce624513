// Progressive-mode scan models (ITU T.81 G.1.2), producing a SymbolStream.
// Coefficient layout everywhere: Int16Array, 64 per block, blocks in raster
// order, zigzag order inside a block. The behaviour mirrors libjpeg's
// jcphuff.c, which is what every decoder in the wild is tested against.

import type { SymbolStream } from './huffman.js';

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

/**
 * DC first scan (Ah = 0), possibly interleaved. With 1x1 sampling on every
 * component an MCU is one block of each component, in scan order.
 */
export function encodeDcFirst(
  comps: readonly Int16Array[],
  tables: readonly number[],
  nBlocks: number,
  al: number,
  out: SymbolStream,
): void {
  const pred = new Int32Array(comps.length); // DC predictors start at 0
  for (let b = 0, base = 0; b < nBlocks; b++, base += 64) {
    for (let c = 0; c < comps.length; c++) {
      const dc = comps[c]![base]! >> al; // arithmetic shift = point transform
      let diff = dc - pred[c]!;
      pred[c] = dc;
      const t = tables[c]!;
      if (diff === 0) {
        out.symbol(t, 0);
        continue;
      }
      const mag = diff < 0 ? -diff : diff;
      const nbits = bitLength(mag);
      if (diff < 0) diff -= 1; // negative values are sent as diff-1 (one's complement)
      out.symbol(t, nbits);
      out.bits(diff, nbits);
    }
  }
}

/** DC refinement scan: one raw bit per block, no Huffman coding. */
export function encodeDcRefine(comps: readonly Int16Array[], nBlocks: number, al: number, out: SymbolStream): void {
  for (let b = 0, base = 0; b < nBlocks; b++, base += 64) {
    for (let c = 0; c < comps.length; c++) out.bits((comps[c]![base]! >> al) & 1, 1);
  }
}

/** AC first scan (Ah = 0) over band ss..se of one component, with EOB runs. */
export function encodeAcFirst(
  coefs: Int16Array,
  table: number,
  nBlocks: number,
  ss: number,
  se: number,
  al: number,
  out: SymbolStream,
): void {
  let eobrun = 0;
  const flushEobrun = (): void => {
    if (eobrun === 0) return;
    const nbits = bitLength(eobrun) - 1;
    out.symbol(table, nbits << 4);
    if (nbits > 0) out.bits(eobrun, nbits); // bits() keeps the low nbits
    eobrun = 0;
  };

  for (let b = 0, base = 0; b < nBlocks; b++, base += 64) {
    let run = 0;
    for (let k = ss; k <= se; k++) {
      const v = coefs[base + k]!;
      // Point transform divides the magnitude (not the two's complement value).
      const mag = (v < 0 ? -v : v) >> al;
      if (mag === 0) {
        run++;
        continue;
      }
      flushEobrun();
      while (run > 15) {
        out.symbol(table, 0xf0); // ZRL
        run -= 16;
      }
      const nbits = bitLength(mag);
      out.symbol(table, (run << 4) | nbits);
      out.bits(v < 0 ? ~mag : mag, nbits);
      run = 0;
    }
    if (run > 0) {
      // Trailing zeros of this block join the current end-of-band run.
      if (++eobrun === MAX_EOBRUN) flushEobrun();
    }
  }
  flushEobrun();
}

// Scratch for encodeAcRefine.
const refAbs = new Int32Array(64);
const blockCorr = new Uint8Array(64);
const pendingCorr = new Uint8Array(MAX_CORR_BITS + 64);

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
): void {
  const abs = refAbs;
  const corr = blockCorr; // correction bits of the current block not yet sent
  const pending = pendingCorr; // correction bits of blocks inside the EOB run
  let eobrun = 0;
  let npending = 0;

  // Correction bits go out in groups of up to 16 to keep the stream short.
  const emitCorr = (buf: Uint8Array, n: number): void => {
    for (let i = 0; i < n; ) {
      const len = Math.min(16, n - i);
      let v = 0;
      for (let j = 0; j < len; j++) v = (v << 1) | buf[i + j]!;
      out.bits(v, len);
      i += len;
    }
  };
  const flushEobrun = (): void => {
    if (eobrun === 0) return;
    const nbits = bitLength(eobrun) - 1;
    out.symbol(table, nbits << 4);
    if (nbits > 0) out.bits(eobrun, nbits);
    eobrun = 0;
    emitCorr(pending, npending);
    npending = 0;
  };

  for (let b = 0, base = 0; b < nBlocks; b++, base += 64) {
    // Pre-pass: magnitudes at this precision, the last index that becomes
    // newly non-zero (|v| >> al === 1; ZRLs are only worth sending before it)
    // and the last non-zero one (everything after it is plain EOB).
    let eob = 0;
    let last = ss - 1;
    for (let k = ss; k <= se; k++) {
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
        flushEobrun();
        out.symbol(table, 0xf0); // ZRL, followed by the bits it skipped over
        run -= 16;
        emitCorr(corr, ncorr);
        ncorr = 0;
      }
      if (m > 1) {
        // History coefficient: only its new low bit is sent, and later.
        corr[ncorr++] = m & 1;
        continue;
      }
      // Newly non-zero coefficient: RS symbol with size 1, sign, then the
      // correction bits collected since the previous symbol.
      flushEobrun();
      out.symbol(table, (run << 4) | 1);
      out.bits(coefs[base + k]! < 0 ? 0 : 1, 1);
      emitCorr(corr, ncorr);
      ncorr = 0;
      run = 0;
    }

    if (run > 0 || ncorr > 0 || last < se) {
      // Block ends in an EOB: its leftover correction bits ride on the EOBRUN.
      eobrun++;
      for (let i = 0; i < ncorr; i++) pending[npending++] = corr[i]!;
      if (eobrun === MAX_EOBRUN || npending > MAX_CORR_BITS - 64 + 1) flushEobrun();
    }
  }
  flushEobrun();
}
