// Decoding at a reduced DCT scale (libjpeg-turbo's M/8 scaling) when the model's
// input is smaller than the stored image: images/s of a full decode + resize
// against a scaled decode + resize, same files, same run.
// Run: npx tsx bench/dct-scaling.ts
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { encodeProgressiveScans } from '../src/jpeg/encoder.js';
import { loadTurboJpegNode } from '../src/jpeg/turbo-node.js';
import { resize } from '../src/pcr/pixels.js';

const SIZE = 256;
const COUNT = 200;
const ROUNDS = 5;

function photoLike(seed: number): Uint8Array {
  const data = new Uint8Array(SIZE * SIZE * 3);
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      const i = (y * SIZE + x) * 3;
      data[i] = 128 + 100 * Math.sin((x + seed) / 17) * Math.cos(y / 23);
      data[i + 1] = (x * y + seed * 31) % 256;
      data[i + 2] = 128 + 90 * Math.sin((x - y + seed) / 9);
    }
  }
  return data;
}

const jpegs = Array.from({ length: COUNT }, (_, s) => {
  const chunks = encodeProgressiveScans({ width: SIZE, height: SIZE, channels: 3, data: photoLike(s) }, { quality: 90 });
  const total = chunks.reduce((n, c) => n + c.length, 2);
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) out.set(c, (at += c.length) - c.length);
  out.set([0xff, 0xd9], total - 2);
  return out;
});

const turbo = await loadTurboJpegNode();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function rate(target: number, scaled: boolean): number {
  const times: number[] = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const t0 = performance.now();
    for (const j of jpegs) {
      const img = scaled ? turbo.decode(j, 3, undefined, { width: target, height: target }) : turbo.decode(j, 3);
      resize(img, target, target);
    }
    if (r > 0) times.push(performance.now() - t0); // round 0 warms up
  }
  return (COUNT * 1000) / median(times);
}

const lines = [
  `# DCT-domain scaling: decode + resize to the model input`,
  '',
  `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} (${cpus().length} cores), Node ${process.version}, wasm libjpeg-turbo ` +
    `(@cwasm/jpeg-turbo).`,
  `${COUNT} progressive ${SIZE}x${SIZE} colour JPEGs (quality 90), median of ${ROUNDS} rounds.`,
  '',
  '| model input | full decode + resize, images/s | scaled decode + resize, images/s | speed-up |',
  '|---:|---:|---:|---:|',
];
for (const target of [128, 64, 32]) {
  const full = rate(target, false);
  const scaled = rate(target, true);
  lines.push(`| ${target}x${target} | ${full.toFixed(0)} | ${scaled.toFixed(0)} | ${(scaled / full).toFixed(2)}x |`);
}
lines.push(
  '',
  'The scaled decode picks the smallest factor M/8 whose output still covers the input size (1/2, 1/4, 1/8 here), then the box filter finishes the resize.',
);
console.log(lines.join('\n'));
writeFileSync('bench/results/dct-scaling.md', `${lines.join('\n')}\n`);
