// The wasm libjpeg-turbo decoder on progressive streams cut after each scan.
// Oracle: Debian's cjpeg makes the progressive files and djpeg decodes the same cuts.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JpegDecodeError, scaledSize } from '../../../src/jpeg/turbo.js';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';

const dir = mkdtempSync(join(tmpdir(), 'bytelab-dec-'));
/** Mean absolute difference allowed between our wasm decode and native djpeg on a cut stream
 *  (libjpeg-turbo 2.0 in wasm and Debian's 2.1 may smooth the blocks of partial scans differently). */
const CUT_SCAN_MAE = 3;

function makeProgressive(width: number, height: number, gray: boolean): Uint8Array {
  const c = gray ? 1 : 3;
  const px = Buffer.alloc(width * height * c);
  for (let i = 0; i < px.length; i++) px[i] = (i * 37 + ((i / width) | 0) * 11) % 256;
  const src = join(dir, `src.${gray ? 'pgm' : 'ppm'}`);
  writeFileSync(src, Buffer.concat([Buffer.from(`${gray ? 'P5' : 'P6'}\n${width} ${height}\n255\n`), px]));
  return new Uint8Array(execFileSync('cjpeg', ['-progressive', '-quality', '85', src]));
}

/** Native decode; the pixels are the last bytes of the PNM output, after its header. */
function djpeg(jpeg: Uint8Array, pixels: number, ...args: string[]): Uint8Array {
  const file = join(dir, 'in.jpg');
  writeFileSync(file, jpeg);
  const pnm = new Uint8Array(execFileSync('djpeg', ['-pnm', ...args, file]));
  return pnm.subarray(pnm.length - pixels);
}

/** Offsets of every SOS marker after the first: cutting there ends the stream after a whole scan. */
function scanCuts(jpeg: Uint8Array): number[] {
  const cuts: number[] = [];
  for (let i = 2; i + 1 < jpeg.length; i++) if (jpeg[i] === 0xff && jpeg[i + 1] === 0xda) cuts.push(i);
  return cuts.slice(1);
}

describe('wasm libjpeg-turbo decoder', () => {
  for (const gray of [true, false]) {
    it(`decodes a ${gray ? 'grayscale' : 'colour'} progressive JPEG cut after every scan and closed with EOI`, async () => {
      const turbo = await loadTurboJpegNode();
      const jpeg = makeProgressive(40, 24, gray);
      const cuts = scanCuts(jpeg);
      expect(cuts.length).toBe(gray ? 5 : 9); // cjpeg's simple progression: 6 and 10 scans
      for (const cut of [...cuts, jpeg.length - 2]) {
        const cutJpeg = new Uint8Array([...jpeg.subarray(0, cut), 0xff, 0xd9]);
        const ours = turbo.decode(cutJpeg, gray ? 1 : 3);
        expect([ours.width, ours.height]).toEqual([40, 24]);
        const native = djpeg(cutJpeg, ours.data.length);
        let diff = 0;
        for (let i = 0; i < native.length; i++) diff += Math.abs(native[i]! - ours.data[i]!);
        const mae = diff / native.length;
        if (cut === jpeg.length - 2) expect(mae).toBe(0);
        else expect(mae).toBeLessThan(CUT_SCAN_MAE);
      }
    });
  }

  it('reports garbage, corrupt scans and truncation as JpegDecodeError and keeps working', async () => {
    const turbo = await loadTurboJpegNode();
    const jpeg = makeProgressive(40, 24, true);
    expect(() => turbo.decode(new Uint8Array([1, 2, 3, 4, 5, 6]), 1)).toThrow(JpegDecodeError);
    const corrupt = jpeg.slice();
    const sos = scanCuts(jpeg)[2]!;
    corrupt.fill(0xaa, sos + 20, sos + 60); // scribble over a scan's entropy-coded data
    expect(() => turbo.decode(corrupt, 1)).toThrow(JpegDecodeError);
    expect(() => turbo.decode(jpeg.subarray(0, 100), 1)).toThrow(JpegDecodeError);
    // After the failures the decoder is still exact.
    expect(Array.from(turbo.decode(jpeg, 1).data)).toEqual(Array.from(djpeg(jpeg, 40 * 24)));
  });

  it('decodes at a reduced DCT scale when the target is smaller, as libjpeg-turbo scales', async () => {
    const turbo = await loadTurboJpegNode();
    const jpeg = makeProgressive(200, 120, false);
    expect(scaledSize({ width: 200, height: 120 }, { width: 64, height: 32 })).toEqual({ width: 75, height: 45 }); // 3/8
    expect(scaledSize({ width: 200, height: 120 }, { width: 20, height: 10 })).toEqual({ width: 25, height: 15 }); // 1/8
    expect(scaledSize({ width: 200, height: 120 }, { width: 300, height: 300 })).toEqual({ width: 200, height: 120 });
    const img = turbo.decode(jpeg, 3, undefined, { width: 48, height: 28 });
    expect([img.width, img.height]).toEqual([50, 30]); // 1/4
    const native = djpeg(jpeg, img.data.length, '-scale', '1/4');
    let diff = 0;
    for (let i = 0; i < native.length; i++) diff += Math.abs(native[i]! - img.data[i]!);
    expect(diff / native.length).toBeLessThan(1);
  });
});
