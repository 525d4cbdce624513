// JPEG parser (T.81 Annex B) that decodes Huffman-coded baseline, extended
// 8-bit and progressive frames to their quantised DCT coefficients, without
// any inverse DCT: the input of lossless transcoding.
//
// Supported: SOF0, SOF1, SOF2; 1 or 3 components; sampling factors 1..4;
// restart intervals; APPn/COM and unknown segments are skipped. Everything
// else is a TranscodeError naming the reason (and the byte offset where it
// applies); corrupt data never reads out of bounds or loops without bound.

import { buildDecodeTable, BitReader } from './bitreader.js';
import type { HuffDecodeTable } from './bitreader.js';
import { ZIGZAG } from './dct.js';
import { decodeAcFirst, decodeAcRefine, decodeDcFirst, decodeDcRefine, decodeSequential } from './decscan.js';
import type { ScanComponent } from './decscan.js';
import { componentGrid, scanOrder } from './layout.js';
import type { BlockGrid, Sampling } from './layout.js';
import { TranscodeError } from './transcode-error.js';

export interface CoefComponent extends Sampling, BlockGrid {
  /** component identifier from SOF */
  id: number;
  /** quantisation table (natural order) in force when the component's first scan began */
  quant: Uint16Array;
  /** bw * bh blocks, 64 zigzag-ordered coefficients each */
  coefs: Int16Array;
}

export interface CoefImage {
  width: number;
  height: number;
  progressive: boolean;
  components: CoefComponent[];
  /** an APP0 JFIF segment was present */
  jfif: boolean;
  /** colour transform flag of an APP14 Adobe segment, -1 without one */
  adobeTransform: number;
}

/** Largest image accepted (pixels): bounds the coefficient memory of a bad header. */
const MAX_PIXELS = 1 << 26;

interface FrameState {
  width: number;
  height: number;
  progressive: boolean;
  comps: (Sampling & BlockGrid & { id: number; tq: number; quant: Uint16Array | undefined; coefs: Int16Array })[];
}

const hex = (m: number): string => `FF${m.toString(16).toUpperCase().padStart(2, '0')}`;

/** Why a SOF marker other than SOF0-2 cannot be transcoded. */
function unsupportedSof(marker: number): string | undefined {
  if (marker === 0xc3) return 'lossless JPEG (SOF3) unsupported';
  if (marker >= 0xc5 && marker <= 0xc7) return `hierarchical JPEG (SOF${marker - 0xc0}) unsupported`;
  if (marker >= 0xc9 && marker <= 0xcb) return `arithmetic-coded JPEG (SOF${marker - 0xc0}) unsupported`;
  if (marker >= 0xcd && marker <= 0xcf) return `arithmetic-coded hierarchical JPEG (SOF${marker - 0xc0}) unsupported`;
  if (marker === 0xde) return 'hierarchical JPEG (DHP marker) unsupported';
  return undefined;
}

export function decodeCoefficients(jpeg: Uint8Array): CoefImage {
  const len = jpeg.length;
  if (len < 2 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new TranscodeError('not a JPEG: no SOI marker at byte 0');

  const quant: (Uint16Array | undefined)[] = [undefined, undefined, undefined, undefined];
  const dcTables: (HuffDecodeTable | undefined)[] = [undefined, undefined, undefined, undefined];
  const acTables: (HuffDecodeTable | undefined)[] = [undefined, undefined, undefined, undefined];
  let frame: FrameState | undefined;
  let restartInterval = 0;
  let jfif = false;
  let adobeTransform = -1;
  let scans = 0;
  let pos = 2;

  for (;;) {
    // B.1.1.2: a marker is 0xFF (any number of fill 0xFFs) + code. Stray bytes
    // between segments are skipped, as libjpeg does after a warning.
    while (pos < len && jpeg[pos] !== 0xff) pos++;
    while (pos + 1 < len && jpeg[pos + 1] === 0xff) pos++;
    if (pos + 1 >= len) throw new TranscodeError(`truncated JPEG: file ends at byte ${len} before EOI`);
    const at = pos;
    const marker = jpeg[pos + 1]!;
    pos += 2;
    if (marker === 0xd9) break; // EOI
    if (marker === 0x00 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // no payload
    if (marker === 0xd8) throw new TranscodeError(`corrupt JPEG: second SOI at byte ${at}`);

    // Every other marker has a length field (B.1.1.4).
    if (pos + 2 > len) throw new TranscodeError(`truncated JPEG: ${hex(marker)} segment at byte ${at}, file ends at byte ${len}`);
    const segLen = (jpeg[pos]! << 8) | jpeg[pos + 1]!;
    if (segLen < 2) throw new TranscodeError(`corrupt JPEG: ${hex(marker)} segment at byte ${at} has length ${segLen}`);
    const end = pos + segLen;
    if (end > len) throw new TranscodeError(`truncated JPEG: ${hex(marker)} segment at byte ${at} needs ${segLen + 2} bytes, file ends at byte ${len}`);
    const body = jpeg.subarray(pos + 2, end);
    pos = end;

    const sofProblem = unsupportedSof(marker);
    if (sofProblem) throw new TranscodeError(sofProblem);
    switch (marker) {
      case 0xc0:
      case 0xc1:
      case 0xc2:
        if (frame) throw new TranscodeError(`corrupt JPEG: second SOF at byte ${at}`);
        frame = parseSof(body, marker === 0xc2, at);
        break;
      case 0xc4:
        parseDht(body, dcTables, acTables, at);
        break;
      case 0xdb:
        parseDqt(body, quant, at);
        break;
      case 0xdd:
        if (body.length !== 2) throw new TranscodeError(`corrupt JPEG: DRI segment at byte ${at} has length ${segLen}`);
        restartInterval = (body[0]! << 8) | body[1]!;
        break;
      case 0xda: {
        if (!frame) throw new TranscodeError(`corrupt JPEG: SOS at byte ${at} before any SOF`);
        scans++;
        pos = decodeScan(jpeg, pos, body, at, frame, quant, dcTables, acTables, restartInterval, scans);
        break;
      }
      case 0xdc:
        throw new TranscodeError('DNL marker (height defined after the first scan) unsupported');
      case 0xe0:
        if (body.length >= 5 && body[0] === 0x4a && body[1] === 0x46 && body[2] === 0x49 && body[3] === 0x46 && body[4] === 0) jfif = true;
        break;
      case 0xee:
        if (body.length >= 12 && String.fromCharCode(...body.subarray(0, 5)) === 'Adobe') adobeTransform = body[11]!;
        break;
      default:
        break; // APPn, COM, DAC of a Huffman file and unknown segments carry no image data
    }
  }

  if (!frame) throw new TranscodeError('corrupt JPEG: no SOF (frame header) before EOI');
  if (scans === 0) throw new TranscodeError('corrupt JPEG: no scan before EOI');
  const components = frame.comps.map((c): CoefComponent => {
    if (!c.quant) throw new TranscodeError(`corrupt JPEG: component ${c.id} appears in no scan`);
    return { id: c.id, h: c.h, v: c.v, bw: c.bw, bh: c.bh, quant: c.quant, coefs: c.coefs };
  });
  return { width: frame.width, height: frame.height, progressive: frame.progressive, components, jfif, adobeTransform };
}

/** B.2.2 frame header. */
function parseSof(body: Uint8Array, progressive: boolean, at: number): FrameState {
  if (body.length < 6) throw new TranscodeError(`corrupt JPEG: SOF segment at byte ${at} too short`);
  const precision = body[0]!;
  const height = (body[1]! << 8) | body[2]!;
  const width = (body[3]! << 8) | body[4]!;
  const n = body[5]!;
  if (precision !== 8) throw new TranscodeError(`${precision}-bit precision JPEG unsupported (only 8-bit samples)`);
  if (n === 4) throw new TranscodeError('CMYK JPEG: needs a lossy re-encode');
  if (n !== 1 && n !== 3) throw new TranscodeError(`${n}-component JPEG unsupported (only grayscale and YCbCr)`);
  if (body.length !== 6 + 3 * n) throw new TranscodeError(`corrupt JPEG: SOF segment at byte ${at} has length ${body.length + 2} for ${n} components`);
  if (height === 0) throw new TranscodeError('JPEG with height 0 in SOF (defined later by DNL) unsupported');
  if (width === 0) throw new TranscodeError(`corrupt JPEG: width 0 in SOF at byte ${at}`);
  if (width * height > MAX_PIXELS) throw new TranscodeError(`image too large: ${width}x${height} (limit ${MAX_PIXELS} pixels)`);

  const sampling: (Sampling & { id: number; tq: number })[] = [];
  for (let i = 0; i < n; i++) {
    const id = body[6 + 3 * i]!;
    const hv = body[7 + 3 * i]!;
    const tq = body[8 + 3 * i]!;
    const h = hv >> 4;
    const v = hv & 15;
    if (h < 1 || h > 4 || v < 1 || v > 4) throw new TranscodeError(`corrupt JPEG: component ${id} has sampling factors ${h}x${v} (SOF at byte ${at})`);
    if (tq > 3) throw new TranscodeError(`corrupt JPEG: component ${id} uses quantisation table ${tq}`);
    if (sampling.some((c) => c.id === id)) throw new TranscodeError(`corrupt JPEG: component id ${id} appears twice in SOF`);
    sampling.push({ id, h, v, tq });
  }
  const hmax = Math.max(...sampling.map((c) => c.h));
  const vmax = Math.max(...sampling.map((c) => c.v));
  const comps = sampling.map((c) => {
    const grid = componentGrid(width, height, c, hmax, vmax);
    return { ...c, ...grid, quant: undefined, coefs: new Int16Array(grid.bw * grid.bh * 64) };
  });
  return { width, height, progressive, comps };
}

/** B.2.4.1 quantisation tables, stored in natural order. */
function parseDqt(body: Uint8Array, quant: (Uint16Array | undefined)[], at: number): void {
  for (let p = 0; p < body.length; ) {
    const pq = body[p]! >> 4;
    const tq = body[p]! & 15;
    const size = pq === 0 ? 64 : 128;
    if (pq > 1 || tq > 3 || p + 1 + size > body.length) throw new TranscodeError(`corrupt JPEG: bad DQT segment at byte ${at}`);
    const table = new Uint16Array(64);
    for (let k = 0; k < 64; k++) {
      table[ZIGZAG[k]!] = pq === 0 ? body[p + 1 + k]! : (body[p + 1 + 2 * k]! << 8) | body[p + 2 + 2 * k]!;
    }
    quant[tq] = table;
    p += 1 + size;
  }
}

/** B.2.4.2 Huffman tables. */
function parseDht(body: Uint8Array, dc: (HuffDecodeTable | undefined)[], ac: (HuffDecodeTable | undefined)[], at: number): void {
  for (let p = 0; p < body.length; ) {
    const tc = body[p]! >> 4;
    const th = body[p]! & 15;
    if (tc > 1 || th > 3 || p + 17 > body.length) throw new TranscodeError(`corrupt JPEG: bad DHT segment at byte ${at}`);
    const counts = new Uint8Array(17);
    let total = 0;
    for (let l = 1; l <= 16; l++) total += counts[l] = body[p + l]!;
    if (total > 256 || p + 17 + total > body.length) throw new TranscodeError(`corrupt JPEG: bad DHT segment at byte ${at}`);
    const values = body.slice(p + 17, p + 17 + total);
    const name = `${tc === 0 ? 'DC' : 'AC'}${th}`;
    (tc === 0 ? dc : ac)[th] = buildDecodeTable(counts, values, name);
    p += 17 + total;
  }
}

/** B.2.3 scan header, then the scan's entropy-coded data; returns the offset of the next marker. */
function decodeScan(
  jpeg: Uint8Array,
  start: number,
  body: Uint8Array,
  at: number,
  frame: FrameState,
  quant: readonly (Uint16Array | undefined)[],
  dcTables: readonly (HuffDecodeTable | undefined)[],
  acTables: readonly (HuffDecodeTable | undefined)[],
  restartInterval: number,
  scanNo: number,
): number {
  const label = `scan ${scanNo} (SOS at byte ${at})`;
  const ns = body[0] ?? 0;
  if (ns < 1 || ns > 4 || body.length !== 4 + 2 * ns) throw new TranscodeError(`corrupt JPEG: bad SOS header in ${label}`);
  const ss = body[1 + 2 * ns]!;
  const se = body[2 + 2 * ns]!;
  const ah = body[3 + 2 * ns]! >> 4;
  const al = body[3 + 2 * ns]! & 15;
  const isDc = ss === 0;

  if (frame.progressive) {
    // Same checks as libjpeg's jdphuff.c start_pass_phuff_decoder (G.1.1.1.1).
    const ok = (isDc ? se === 0 : ss <= se && se <= 63 && ns === 1) && (ah === 0 || al === ah - 1) && al <= 13;
    if (!ok) throw new TranscodeError(`corrupt JPEG: invalid progressive parameters Ss=${ss} Se=${se} Ah=${ah} Al=${al} in ${label}`);
  }

  const indices: number[] = [];
  const comps: ScanComponent[] = [];
  let blocksPerMcu = 0;
  for (let i = 0; i < ns; i++) {
    const id = body[1 + 2 * i]!;
    const td = body[2 + 2 * i]! >> 4;
    const ta = body[2 + 2 * i]! & 15;
    const ci = frame.comps.findIndex((c) => c.id === id);
    if (ci < 0 || indices.includes(ci)) throw new TranscodeError(`corrupt JPEG: ${label} names component ${id} ${ci < 0 ? 'not in the frame' : 'twice'}`);
    const comp = frame.comps[ci]!;
    const needDc = frame.progressive ? isDc && ah === 0 : true;
    const needAc = frame.progressive ? !isDc : true;
    const dc = needDc ? dcTables[td] : undefined;
    const ac = needAc ? acTables[ta] : undefined;
    if (needDc && !dc) throw new TranscodeError(`corrupt JPEG: Huffman table DC${td} used by ${label} is not defined`);
    if (needAc && !ac) throw new TranscodeError(`corrupt JPEG: Huffman table AC${ta} used by ${label} is not defined`);
    // Latch the quantisation table at the component's first scan, as libjpeg does.
    if (!comp.quant) {
      const q = quant[comp.tq];
      if (!q) throw new TranscodeError(`corrupt JPEG: quantisation table ${comp.tq} of component ${id} is not defined before ${label}`);
      comp.quant = q.slice();
    }
    indices.push(ci);
    comps.push({ coefs: comp.coefs, dc, ac });
    blocksPerMcu += ns > 1 ? comp.h * comp.v : 1;
  }
  if (blocksPerMcu > 10) throw new TranscodeError(`corrupt JPEG: ${blocksPerMcu} blocks per MCU in ${label} (T.81 allows 10)`);

  const order = scanOrder(frame.width, frame.height, frame.comps, indices);
  const r = new BitReader(jpeg, start, label);
  if (!frame.progressive) decodeSequential(r, comps, order, restartInterval, label);
  else if (isDc && ah === 0) decodeDcFirst(r, comps, order, al, restartInterval, label);
  else if (isDc) decodeDcRefine(r, comps, order, al, restartInterval);
  else if (ah === 0) decodeAcFirst(r, comps[0]!, order.mcus, ss, se, al, restartInterval, label);
  else decodeAcRefine(r, comps[0]!, order.mcus, ss, se, al, restartInterval, label);
  return r.finish();
}
