// Fidelity per scan group: MS-SSIM of each group's decode against the full
// decode, averaged over a sample of images. Shown beside the lab's slider.
import type { TurboJpeg } from '../jpeg/turbo.js';
import type { PcrManifest } from './manifest.js';
import { msssim, msssimScales } from './mssim.js';
import { RecordPrefix } from './record.js';

export interface GroupFidelity {
  group: number;
  /** Mean MS-SSIM against the top group's decode; 1 for the top group. */
  msssim: number;
  /** Images the mean is over. */
  sample: number;
  /** MS-SSIM scales that fit the image size (5 for 176x176 and larger). */
  scales: number;
}

/**
 * Measures every group on up to `sample` images taken evenly from the given
 * records (full records: every group must be present). Images the decoder
 * refuses are left out of the mean.
 */
export function measureFidelity(records: RecordPrefix[], decoder: TurboJpeg, channels: 1 | 3, sample: number): GroupFidelity[] {
  const groups = records[0]?.header.groups ?? 0;
  const total = records.reduce((n, r) => n + r.header.images, 0);
  const stride = Math.max(1, Math.floor(total / Math.max(1, sample)));
  const sums = new Float64Array(groups + 1);
  let used = 0;
  let scales = 0;
  let index = 0;
  for (const record of records) {
    for (let i = 0; i < record.header.images; i++, index++) {
      if (index % stride !== 0 || used >= sample) continue;
      try {
        const full = decoder.decode(record.image(i, groups), channels);
        scales = msssimScales(full.width, full.height);
        const scores = [];
        for (let g = 1; g <= groups; g++)
          scores.push(g === groups ? 1 : msssim(decoder.decode(record.image(i, g), channels).data, full.data, full.width, full.height, channels));
        scores.forEach((s, g) => (sums[g + 1]! += s));
        used++;
      } catch {
        // A bad image says nothing about the fidelity of the others.
      }
    }
  }
  return Array.from({ length: groups }, (_, g) => ({ group: g + 1, msssim: used ? sums[g + 1]! / used : NaN, sample: used, scales }));
}

/**
 * MS-SSIM per group over a sample of the first split's images. Whole records
 * are read through `read` (from disk in the CLI), only as many as the sample needs.
 */
export async function datasetFidelity(
  m: PcrManifest,
  read: (file: string) => Promise<Uint8Array>,
  decoder: TurboJpeg,
  sample: number,
): Promise<GroupFidelity[]> {
  const records: RecordPrefix[] = [];
  let images = 0;
  for (const r of Object.values(m.splits)[0]?.records ?? []) {
    records.push(new RecordPrefix(new Uint8Array(await read(r.file)), r.file));
    images += r.images;
    if (images >= sample * 4) break; // enough to sample from without reading the whole dataset
  }
  return measureFidelity(records, decoder, m.image.channels, sample);
}
