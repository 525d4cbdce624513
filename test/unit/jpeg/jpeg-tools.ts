// Helpers for the transcoder tests: synthetic images, libjpeg-turbo's command
// line tools (Debian package libjpeg-turbo-progs) as encoder and oracle, and a
// marker-level view of JPEG files. Not a test file itself.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '../../../src/shared/random.js';

export const CJPEG = '/usr/bin/cjpeg';
export const DJPEG = '/usr/bin/djpeg';
export const JPEGTRAN = '/usr/bin/jpegtran';

export const toolsPresent = (): boolean => [CJPEG, DJPEG, JPEGTRAN].every((p) => existsSync(p));

let tmp = '';
let fileNo = 0;

export function openTemp(): void {
  tmp = mkdtempSync(join(tmpdir(), 'bytelab-transcode-'));
}

export function closeTemp(): void {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}

function tempPath(ext: string): string {
  return join(tmp, `f${fileNo++}.${ext}`);
}

export interface Pixels {
  width: number;
  height: number;
  channels: 1 | 3;
  data: Uint8Array;
}

/** Gradients, a hard-edged disc of another colour and seeded noise: chroma with real detail. */
export function syntheticPixels(width: number, height: number, channels: 1 | 3, seed: number): Pixels {
  const rnd = seededRandom(seed);
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const dx = x - width * 0.6;
      const dy = y - height * 0.4;
      const inDisc = dx * dx + dy * dy < (Math.min(width, height) * 0.3) ** 2;
      for (let c = 0; c < channels; c++) {
        let v = 128 + 90 * Math.sin(x * (0.11 + 0.07 * c) + seed) * Math.cos(y * (0.09 + 0.05 * c));
        if (inDisc) v = [230, 40, 90][c]!;
        v += (rnd() - 0.5) * 30;
        data[(y * width + x) * channels + c] = Math.max(0, Math.min(255, Math.round(v)));
      }
    }
  }
  return { width, height, channels, data };
}

export function encodePnm(img: Pixels): Uint8Array {
  const header = new TextEncoder().encode(`${img.channels === 1 ? 'P5' : 'P6'}\n${img.width} ${img.height}\n255\n`);
  return concat([header, img.data]);
}

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let pos = 0;
  for (const p of parts) {
    out.set(p, pos);
    pos += p.length;
  }
  return out;
}

export const EOI = new Uint8Array([0xff, 0xd9]);

/** The first g chunks closed with EOI: a complete JPEG file. */
export const firstScans = (chunks: readonly Uint8Array[], g = chunks.length): Uint8Array => concat([...chunks.slice(0, g), EOI]);

function run(cmd: string, args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

/** cjpeg with the given switches on a synthetic image. */
export function cjpeg(img: Pixels, args: readonly string[], files: Record<string, string> = {}): Uint8Array {
  const input = tempPath(img.channels === 1 ? 'pgm' : 'ppm');
  writeFileSync(input, encodePnm(img));
  const fileArgs = args.map((a) => {
    if (!(a in files)) return a;
    const path = tempPath('txt');
    writeFileSync(path, files[a]!);
    return path;
  });
  const output = tempPath('jpg');
  const r = run(CJPEG, [...fileArgs, '-outfile', output, input]);
  if (r.status !== 0) throw new Error(`cjpeg ${args.join(' ')}: ${r.stderr}`);
  return new Uint8Array(readFileSync(output));
}

export interface Decoded {
  width: number;
  height: number;
  channels: number;
  pixels: Uint8Array;
  stderr: string;
}

function parsePnm(buf: Uint8Array): Omit<Decoded, 'stderr'> {
  const fields: string[] = [];
  let pos = 0;
  const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
  while (fields.length < 4) {
    while (isSpace(buf[pos]!)) pos++;
    let s = '';
    while (!isSpace(buf[pos]!)) s += String.fromCharCode(buf[pos++]!);
    fields.push(s);
  }
  pos++;
  const [magic, w, h] = fields;
  const channels = magic === 'P5' ? 1 : 3;
  const width = Number(w);
  const height = Number(h);
  return { width, height, channels, pixels: buf.subarray(pos, pos + width * height * channels) };
}

/** djpeg to PNM (status must be 0; warnings are returned in stderr). */
export function djpeg(jpeg: Uint8Array, args: readonly string[] = []): Decoded {
  const input = tempPath('jpg');
  writeFileSync(input, jpeg);
  const output = `${input}.pnm`;
  const r = run(DJPEG, [...args, '-pnm', '-outfile', output, input]);
  if (r.status !== 0) throw new Error(`djpeg failed: ${r.stderr}`);
  return { ...parsePnm(readFileSync(output)), stderr: r.stderr };
}

export function jpegtran(jpeg: Uint8Array, args: readonly string[]): Uint8Array {
  const input = tempPath('jpg');
  writeFileSync(input, jpeg);
  const output = `${input}.out.jpg`;
  const r = run(JPEGTRAN, [...args, '-copy', 'none', '-outfile', output, input]);
  if (r.status !== 0 || r.stderr !== '') throw new Error(`jpegtran ${args.join(' ')}: ${r.stderr}`);
  return new Uint8Array(readFileSync(output));
}

export interface Segment {
  marker: number;
  /** offset of the marker's 0xFF */
  at: number;
  body: Uint8Array;
}

/** Marker segments up to EOI; SOS bodies are followed by an 'ECS' pseudo-segment (marker 0) with the entropy-coded data. */
export function segments(jpeg: Uint8Array): Segment[] {
  const out: Segment[] = [{ marker: 0xd8, at: 0, body: new Uint8Array(0) }];
  let pos = 2;
  while (pos + 1 < jpeg.length) {
    const marker = jpeg[pos + 1]!;
    if (marker === 0xd9) break;
    if (marker >= 0xd0 && marker <= 0xd7) {
      out.push({ marker, at: pos, body: new Uint8Array(0) });
      pos += 2;
    } else {
      const len = (jpeg[pos + 2]! << 8) | jpeg[pos + 3]!;
      out.push({ marker, at: pos, body: jpeg.subarray(pos + 4, pos + 2 + len) });
      pos += 2 + len;
    }
    if (marker === 0xda || (marker >= 0xd0 && marker <= 0xd7)) {
      let end = pos;
      while (!(jpeg[end] === 0xff && jpeg[end + 1] !== 0)) end++; // stuffed FF00 is data
      out.push({ marker: 0, at: pos, body: jpeg.subarray(pos, end) });
      pos = end;
    }
  }
  return out;
}

/**
 * A file as a list of strings that two encoders writing the same tables and
 * the same entropy-coded bits agree on: APPn/COM dropped, DQT/DHT split into
 * one entry per table (libjpeg writes one table per segment, we group them).
 */
export function canonicalSegments(jpeg: Uint8Array): string[] {
  const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
  const out: string[] = [];
  for (const { marker, body } of segments(jpeg)) {
    if ((marker >= 0xe0 && marker <= 0xef) || marker === 0xfe) continue;
    if (marker === 0xdb) {
      for (let p = 0; p < body.length; ) {
        const size = body[p]! >> 4 ? 129 : 65;
        out.push(`DQT ${hex(body.subarray(p, p + size))}`);
        p += size;
      }
    } else if (marker === 0xc4) {
      for (let p = 0; p < body.length; ) {
        const n = body.subarray(p + 1, p + 17).reduce((a, b) => a + b, 0);
        out.push(`DHT ${hex(body.subarray(p, p + 17 + n))}`);
        p += 17 + n;
      }
    } else {
      out.push(`${marker.toString(16)} ${hex(body)}`);
    }
  }
  return out;
}

/** SOS parameters of a scan chunk: [Ss, Se, Ah, Al, component ids]. */
export function sosParams(chunk: Uint8Array): [number, number, number, number, number[]] {
  // Chunks after the first start with DHT/SOS, not SOI: give them one so segments() can walk them.
  const file = chunk[1] === 0xd8 ? chunk : concat([new Uint8Array([0xff, 0xd8]), chunk]);
  const sos = segments(concat([file, EOI])).find((s) => s.marker === 0xda)!.body;
  const ns = sos[0]!;
  const ids = Array.from({ length: ns }, (_, i) => sos[1 + 2 * i]!);
  const p = 1 + 2 * ns;
  return [sos[p]!, sos[p + 1]!, sos[p + 2]! >> 4, sos[p + 2]! & 15, ids];
}

/** SOF marker and its components as 'id:HxV:Tq'. */
export function sofInfo(jpeg: Uint8Array): { marker: number; comps: string[] } {
  const sof = segments(jpeg).find((s) => s.marker >= 0xc0 && s.marker <= 0xcf && s.marker !== 0xc4 && s.marker !== 0xcc)!;
  const n = sof.body[5]!;
  const comps = Array.from({ length: n }, (_, i) => {
    const b = sof.body.subarray(6 + 3 * i);
    return `${b[0]}:${b[1]! >> 4}x${b[1]! & 15}:${b[2]}`;
  });
  return { marker: sof.marker, comps };
}

/** Inserts a marker segment (marker + body, length added) right after SOI. */
export function spliceAfterSoi(jpeg: Uint8Array, marker: number, body: Uint8Array): Uint8Array {
  const len = body.length + 2;
  return concat([jpeg.subarray(0, 2), new Uint8Array([0xff, marker, len >> 8, len & 0xff]), body, jpeg.subarray(2)]);
}

/** A minimal EXIF APP1 body: big-endian TIFF header and one IFD entry (Orientation = 1). */
export function exifBody(): Uint8Array {
  return new Uint8Array([
    ...new TextEncoder().encode('Exif\0\0'),
    0x4d,
    0x4d,
    0x00,
    0x2a,
    0x00,
    0x00,
    0x00,
    0x08, // MM, 42, IFD0 at 8
    0x00,
    0x01, // one entry
    0x01,
    0x12,
    0x00,
    0x03,
    0x00,
    0x00,
    0x00,
    0x01,
    0x00,
    0x01,
    0x00,
    0x00, // Orientation SHORT 1 = 1
    0x00,
    0x00,
    0x00,
    0x00, // no next IFD
    0xff,
    0xff,
    0xd8,
    0xff, // bytes that look like markers must not confuse the parser
  ]);
}
