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
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const spread = (xs: number[], f: (x: number) => string) => {
  const o = sorted(xs);
  return `${f(o[0]!)} / ${f(o[Math.floor((o.length - 1) / 2)]!)} / ${f(o.at(-1)!)}`;
};

/** Images/s of one pass over every JPEG: decode (full, or scaled in the DCT domain) then resize to target. */
function pass(target: number, scaled: boolean): number {
  const t0 = performance.now();
  for (const j of jpegs) {
    const img = scaled ? turbo.decode(j, 3, undefined, { width: target, height: target }) : turbo.decode(j, 3);
    resize(img, target, target);
  }
  return (COUNT * 1000) / (performance.now() - t0);
}

const TARGETS = [128, 64, 32];
const results = new Map(TARGETS.map((t) => [t, { full: [] as number[], scaled: [] as number[] }]));
// Round 0 warms up. In each round every size runs both variants back to back,
// alternating which goes first, so drift in machine load hits both alike.
for (let r = 0; r <= ROUNDS; r++) {
  for (const target of TARGETS) {
    const order = r % 2 ? [true, false] : [false, true];
    for (const scaled of order) {
      const ips = pass(target, scaled);
      if (r > 0) results.get(target)![scaled ? 'scaled' : 'full'].push(ips);
    }
  }
}

const lines = [
  `# DCT-domain scaling: decode + resize to the model input`,
  '',
  `${new Date().toISOString().slice(0, 10)}, ${cpus()[0]?.model ?? 'cpu'} (${cpus().length} cores), Node ${process.version}, wasm libjpeg-turbo ` +
    `(@cwasm/jpeg-turbo), \`npx tsx bench/dct-scaling.ts\`.`,
  `${COUNT} progressive ${SIZE}x${SIZE} colour JPEGs (quality 90, synthetic photo-like images), ${ROUNDS} rounds after a warm-up round; ` +
    'in each round the two variants run back to back on the same files, alternating which goes first.',
  '',
  '| model input | full decode + resize, images/s (min / median / max) | scaled decode + resize, images/s | speed-up per round (min / median / max) |',
  '|---:|---:|---:|---:|',
];
for (const target of TARGETS) {
  const { full, scaled } = results.get(target)!;
  const ratios = scaled.map((x, i) => x / full[i]!);
  lines.push(
    `| ${target}x${target} | ${spread(full, (x) => x.toFixed(0))} | ${spread(scaled, (x) => x.toFixed(0))} | ${spread(ratios, (x) => `${x.toFixed(2)}x`)} |`,
  );
}
lines.push(
  '',
  'The scaled decode picks the smallest factor M/8 whose output still covers the input size (1/2, 1/4, 1/8 here), then the box filter finishes the resize.',
);
console.log(lines.join('\n'));
writeFileSync('bench/results/dct-scaling.md', `${lines.join('\n')}\n`);
