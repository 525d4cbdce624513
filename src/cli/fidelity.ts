// MS-SSIM per scan group of a PCR dataset on disk, for `pcr build`, `generate`,
// `import` and `inspect --mssim`. A leaf module, so the commands import it
// without importing each other.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadTurboJpegNode } from '../jpeg/turbo-node.js';
import { datasetFidelity, type GroupFidelity } from '../pcr/fidelity.js';
import type { PcrManifest } from '../pcr/manifest.js';

export async function fidelityOnDisk(dir: string, m: PcrManifest, sample: number): Promise<GroupFidelity[]> {
  return datasetFidelity(m, (file) => readFile(join(dir, file)), await loadTurboJpegNode(), sample);
}
