// Tiny deterministic datasets for tests: synthetic images a classifier can tell
// apart (class k = a bright bar at a class-specific place), built with the real encoder.
import { buildSplit, encodeImages, makeManifest, type LabeledImage } from '../../src/pcr/build.js';
import type { PcrManifest } from '../../src/pcr/manifest.js';
import { seededRandom } from '../../src/shared/random.js';

export function syntheticImages(count: number, size: number, classes: number, seed = 7): LabeledImage[] {
  const random = seededRandom(seed);
  const items: LabeledImage[] = [];
  for (let n = 0; n < count; n++) {
    const label = n % classes;
    const data = new Uint8Array(size * size);
    const bar = Math.floor(((label + 0.5) * size) / classes);
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const onBar = Math.abs(x - bar) <= 1;
        data[y * size + x] = Math.min(255, (onBar ? 200 : 30) + Math.floor(random() * 40) + ((x * y) % 13));
      }
    }
    items.push({ label, image: { width: size, height: size, channels: 1, data } });
  }
  return items;
}

/** Builds a dataset in memory: manifest.json plus record files. */
export async function buildFixture(opts: {
  train: number;
  test?: number;
  recordSize: number;
  size?: number;
  classes?: number;
}): Promise<{ manifest: PcrManifest; files: Map<string, Uint8Array> }> {
  const size = opts.size ?? 16;
  const classes = opts.classes ?? 4;
  const files = new Map<string, Uint8Array>();
  const write = async (name: string, bytes: Uint8Array) => void files.set(name, bytes);
  const shape = { width: size, height: size, channels: 1 as const };
  const split = (name: string, items: LabeledImage[]) => buildSplit(name, encodeImages(items, 90), 1, opts.recordSize, write);
  const splits: PcrManifest['splits'] = { train: { records: await split('train', syntheticImages(opts.train, size, classes)) } };
  if (opts.test) splits.test = { records: await split('test', syntheticImages(opts.test, size, classes, 99)) };
  const manifest = makeManifest({ name: 'fixture', classes: Array.from({ length: classes }, (_, i) => `class ${i}`), image: shape, quality: 90, splits });
  files.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest)));
  return { manifest, files };
}
