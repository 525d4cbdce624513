// Frame-level progressive JPEG writer: turns quantised coefficients plus a
// scan script into one byte chunk per scan (marker segments + entropy data).
// Kept separate from encoder.ts so tests can drive arbitrary scan scripts and
// hand-made coefficients; encoder.ts fixes the script for the public API.

import { CHROMA_QUANT, LUMA_QUANT, ZIGZAG, forwardDctQuantize, grayPlane, scaleQuantTable, ycbcrPlanes } from './dct.js';
import type { RawImage } from './encoder.js';
import { encodeAcFirst, encodeAcRefine, encodeDcFirst, encodeDcRefine, lastNonZero } from './encscan.js';
import { ByteWriter, SymbolStream, buildOptimalTable } from './huffman.js';
import type { HuffTable } from './huffman.js';
import { componentGrid, scanOrder } from './layout.js';
import type { ScanOrder } from './layout.js';

/** One scan of a progressive script (T.81 B.2.3 parameters). */
export interface ScanSpec {
  /** indices into Frame.components, in scan order */
  comps: readonly number[];
  ss: number;
  se: number;
  ah: number;
  al: number;
}

export interface FrameComponent {
  /** component identifier written in SOF/SOS (JFIF: 1 = Y, 2 = Cb, 3 = Cr) */
  id: number;
  /** quantisation table index (into Frame.quantTables) */
  quantTable: number;
  /** Huffman table id (0..3) used for both its DC and AC scans */
  huffTable: number;
  /** sampling factors 1..4 (T.81 A.1.1); default 1 */
  h?: number;
  v?: number;
  /**
   * quantised coefficients: 64 per block, zigzag inside, blocks in raster
   * order over the component's own ceil(xi/8) x ceil(yi/8) grid (layout.ts);
   * MCU padding blocks are not stored
   */
  coefs: Int16Array;
}

export interface Frame {
  width: number;
  height: number;
  /** natural (row-major) order, values 1..65535 (above 255 written with 16-bit DQT precision) */
  quantTables: Uint16Array[];
  /**
   * Components with their sampling factors. With all factors 1 (what
   * frameFromImage makes: 4:4:4) every component has the ceil(w/8) x
   * ceil(h/8) grid and an interleaved MCU is one block per component; other
   * factors (transcoded files) give MCUs of Hi x Vi blocks per component.
   */
  components: FrameComponent[];
}

/** Colour conversion + DCT + quantisation of a raw image (channels 3 -> YCbCr). */
export function frameFromImage(img: RawImage, quality: number): Frame {
  const { width, height } = img;
  const npix = width * height;
  const luma = scaleQuantTable(LUMA_QUANT, quality);
  if (img.channels === 1) {
    const coefs = forwardDctQuantize(grayPlane(img.data, npix), width, height, luma);
    return { width, height, quantTables: [luma], components: [{ id: 1, quantTable: 0, huffTable: 0, coefs }] };
  }
  const chroma = scaleQuantTable(CHROMA_QUANT, quality);
  const [y, cb, cr] = ycbcrPlanes(img.data, npix);
  return {
    width,
    height,
    quantTables: [luma, chroma],
    components: [
      { id: 1, quantTable: 0, huffTable: 0, coefs: forwardDctQuantize(y, width, height, luma) },
      { id: 2, quantTable: 1, huffTable: 1, coefs: forwardDctQuantize(cb, width, height, chroma) },
      { id: 3, quantTable: 1, huffTable: 1, coefs: forwardDctQuantize(cr, width, height, chroma) },
    ],
  };
}

// Shared across calls: encoding is synchronous, nothing escapes but take()'s copies.
const writer = new ByteWriter();
const stream = new SymbolStream();
const freqs = [new Uint32Array(256), new Uint32Array(256), new Uint32Array(256), new Uint32Array(256)];

/**
 * Encodes a frame as a progressive (SOF2) Huffman JPEG.
 * Returns one chunk per scan; chunk 0 also carries SOI, APP0, DQT and SOF2.
 * No EOI is written: concat(chunks[0..g)) + FF D9 is a complete file.
 */
export function encodeFrame(frame: Frame, script: readonly ScanSpec[]): Uint8Array[] {
  const sampling = frame.components.map((c) => ({ h: c.h ?? 1, v: c.v ?? 1 }));
  if (sampling.some((s) => !(s.h >= 1 && s.h <= 4 && s.v >= 1 && s.v <= 4))) throw new Error('sampling factors must be 1..4');
  const hmax = Math.max(...sampling.map((s) => s.h));
  const vmax = Math.max(...sampling.map((s) => s.v));
  const nBlocks = sampling.map((s) => {
    const { bw, bh } = componentGrid(frame.width, frame.height, s, hmax, vmax);
    return bw * bh;
  });
  frame.components.forEach((c, i) => {
    if (c.coefs.length < nBlocks[i]! * 64) throw new Error(`component ${c.id}: ${c.coefs.length} coefficients, ${nBlocks[i]! * 64} needed`);
  });
  for (const scan of script) {
    const ok =
      scan.comps.length >= 1 &&
      scan.comps.every((i) => frame.components[i] !== undefined) &&
      (scan.ss === 0 ? scan.se === 0 && scan.comps.length <= 4 : scan.comps.length === 1 && scan.ss <= scan.se && scan.se <= 63) &&
      scan.al >= 0 &&
      scan.al <= 13 &&
      (scan.ah === 0 || scan.ah === scan.al + 1) &&
      // T.81 B.2.3: at most 10 blocks in an interleaved MCU
      (scan.comps.length === 1 || scan.comps.reduce((n, i) => n + sampling[i]!.h * sampling[i]!.v, 0) <= 10);
    if (!ok) throw new Error(`invalid progressive scan ${JSON.stringify(scan)}`);
  }
  // Per-block end of the non-zero coefficients, shared by a component's AC scans.
  const lastNz = new Map<number, Uint8Array>();
  const lastNzOf = (c: number): Uint8Array => {
    let last = lastNz.get(c);
    if (!last) lastNz.set(c, (last = lastNonZero(frame.components[c]!.coefs, nBlocks[c]!)));
    return last;
  };
  // DC scans walk MCUs; the first and refinement pass over the same components share one order.
  const orders = new Map<string, ScanOrder>();
  const orderOf = (comps: readonly number[]): ScanOrder => {
    const key = comps.join(',');
    let order = orders.get(key);
    if (!order) orders.set(key, (order = scanOrder(frame.width, frame.height, sampling, comps)));
    return order;
  };

  const chunks: Uint8Array[] = [];
  writer.reset(); // drop anything left by a call that threw
  writeHeader(frame);

  for (const scan of script) {
    const comps = scan.comps.map((i) => frame.components[i]!);
    const coefs = comps.map((c) => c.coefs);
    const tableIds = comps.map((c) => c.huffTable);
    const usedIds = [...new Set(tableIds)];
    const isDc = scan.ss === 0;

    stream.reset();
    // AC scans are never interleaved: they cover the component's own blocks (A.2.2).
    const acBlocks = nBlocks[scan.comps[0]!]!;
    if (isDc && scan.ah === 0) encodeDcFirst(coefs, tableIds, orderOf(scan.comps), scan.al, stream);
    else if (isDc) encodeDcRefine(coefs, orderOf(scan.comps), scan.al, stream);
    else if (scan.ah === 0) encodeAcFirst(coefs[0]!, tableIds[0]!, acBlocks, scan.ss, scan.se, scan.al, stream, lastNzOf(scan.comps[0]!));
    else encodeAcRefine(coefs[0]!, tableIds[0]!, acBlocks, scan.ss, scan.se, scan.al, stream, lastNzOf(scan.comps[0]!));

    // Optimal tables for exactly this scan (DC refinement has no Huffman codes).
    const tables: (HuffTable | undefined)[] = [];
    if (!(isDc && scan.ah > 0)) {
      for (const id of usedIds) freqs[id]!.fill(0);
      stream.countFrequencies(freqs);
      for (const id of usedIds) tables[id] = buildOptimalTable(freqs[id]!);
      writeDht(tables, isDc ? 0 : 1);
    }
    writeSos(comps, scan);
    writer.writeScan(stream, tables);
    chunks.push(writer.take());
  }
  return chunks;
}

function writeHeader(frame: Frame): void {
  writer.u16(0xffd8); // SOI
  // APP0 JFIF 1.01, no density units (aspect 1:1), no thumbnail.
  writer.u16(0xffe0);
  writer.u16(16);
  writer.bytes([0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  // DQT, zigzag order: 8-bit precision unless an entry needs 16 bits (B.2.4.1).
  const wide = frame.quantTables.map((q) => q.some((v) => v > 255));
  writer.u16(0xffdb);
  writer.u16(2 + frame.quantTables.reduce((n, _, id) => n + (wide[id] ? 129 : 65), 0));
  frame.quantTables.forEach((q, id) => {
    writer.byte(wide[id] ? 0x10 | id : id);
    for (let k = 0; k < 64; k++) {
      const v = q[ZIGZAG[k]!]!;
      if (wide[id]) writer.u16(v);
      else writer.byte(v);
    }
  });
  // SOF2: progressive DCT, Huffman coding, 8-bit samples.
  const n = frame.components.length;
  writer.u16(0xffc2);
  writer.u16(8 + 3 * n);
  writer.byte(8);
  writer.u16(frame.height);
  writer.u16(frame.width);
  writer.byte(n);
  for (const c of frame.components) {
    writer.byte(c.id);
    writer.byte(((c.h ?? 1) << 4) | (c.v ?? 1));
    writer.byte(c.quantTable);
  }
}

/** One DHT segment with every table the scan uses; tableClass 0 = DC, 1 = AC. */
function writeDht(tables: readonly (HuffTable | undefined)[], tableClass: number): void {
  let len = 2;
  for (const t of tables) if (t) len += 17 + t.values.length;
  writer.u16(0xffc4);
  writer.u16(len);
  tables.forEach((t, id) => {
    if (!t) return;
    writer.byte((tableClass << 4) | id);
    for (let i = 1; i <= 16; i++) writer.byte(t.counts[i]!);
    writer.bytes(t.values);
  });
}

function writeSos(comps: readonly FrameComponent[], scan: ScanSpec): void {
  writer.u16(0xffda);
  writer.u16(6 + 2 * comps.length);
  writer.byte(comps.length);
  for (const c of comps) {
    writer.byte(c.id);
    // Only the selector the scan actually uses is filled in (as libjpeg does):
    // DC first -> Td, AC -> Ta, DC refinement -> neither.
    const td = scan.ss === 0 && scan.ah === 0 ? c.huffTable : 0;
    const ta = scan.ss === 0 ? 0 : c.huffTable;
    writer.byte((td << 4) | ta);
  }
  writer.byte(scan.ss);
  writer.byte(scan.se);
  writer.byte((scan.ah << 4) | scan.al);
}
