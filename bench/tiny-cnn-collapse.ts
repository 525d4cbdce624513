// How often tiny-cnn collapses to one class (test accuracy 10.0%) on
// synthetic-coarse at 32x32, in Node on the tfjs CPU backend: the training
// split decoded at scan group --group the lab's way (decodeToShape, x / 255),
// the test split at full fidelity, Adam --lr, batch 32, reshuffled each epoch,
// random flips; the model's initial weights from the seed. Per evaluation it
// prints test accuracy (* = one class predicted) and the share of conv filters
// negative before the activation on every pixel of every test image (for
// ReLU: dead filters, which get no gradient). Variants run interleaved per seed.
// Usage: npx tsx bench/tiny-cnn-collapse.ts [--seeds 20] [--first 1] [--steps 150] [--group 3] [--eval-every 30]
//   [--variants relu,tiny-cnn] (also elu, leaky, he, f8, lr2, center: see VARIANTS)
// Needs public/data/synthetic-coarse (node scripts/datasets.mjs synthetic-coarse); decoded splits are cached in /tmp.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as tf from '@tensorflow/tfjs';
import { loadTurboJpegNode } from '../src/jpeg/turbo-node.js';
import { validateManifest } from '../src/pcr/manifest.js';
import { RecordPrefix } from '../src/pcr/record.js';
import { decodeToShape } from '../src/pipeline/image-stages.js';
import type { DatasetInfo } from '../src/pipeline/api.js';
import { seededRandom, shuffleInPlace } from '../src/shared/random.js';
import { imageModel } from '../src/train/models/layers.js';
import { tinyCnn } from '../src/train/models/cnn.js';
import type { Model } from '../src/train/models/registry.js';
import { useFastConvGrad } from '../test/support/fast-conv-grad.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '20' },
    first: { type: 'string', default: '1' },
    steps: { type: 'string', default: '150' },
    group: { type: 'string', default: '3' },
    size: { type: 'string', default: '32' },
    lr: { type: 'string', default: '0.005' },
    'eval-every': { type: 'string', default: '30' },
    variants: { type: 'string', default: 'relu,tiny-cnn' },
  },
});
const SEEDS = Number(values.seeds);
const FIRST = Number(values.first);
const STEPS = Number(values.steps);
const GROUP = Number(values.group);
const SIZE = Number(values.size);
const LR = Number(values.lr);
const EVAL_EVERY = Number(values['eval-every']);
const BATCH = 32;
const DIR = 'public/data/synthetic-coarse';

interface Split {
  x: Float32Array;
  y: Int32Array;
  n: number;
}

async function decodeSplit(split: string, group: number): Promise<Split> {
  const cache = `/tmp/collapse-${split}-g${group}-s${SIZE}.bin`;
  const manifest = validateManifest(JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8')), DIR);
  const per = SIZE * SIZE * 3;
  if (existsSync(cache)) {
    const buf = readFileSync(cache);
    const n = buf.byteLength / (per + 4);
    const px = new Uint8Array(buf.buffer, buf.byteOffset, n * per);
    const y = new Int32Array(buf.buffer.slice(buf.byteOffset + n * per, buf.byteOffset + n * per + 4 * n));
    return { x: Float32Array.from(px, (v) => v / 255), y, n };
  }
  const decoder = await loadTurboJpegNode();
  const pixels: number[] = [];
  const labels: number[] = [];
  for (const r of manifest.splits[split]!.records) {
    const prefix = new RecordPrefix(new Uint8Array(readFileSync(join(DIR, r.file))), r.file);
    for (let i = 0; i < prefix.header.images; i++) {
      const img = decodeToShape(decoder, prefix.image(i, group), { width: SIZE, height: SIZE, channels: 3 });
      for (const v of img.data) pixels.push(v);
      labels.push(prefix.header.labels[i]!);
    }
  }
  const px = Uint8Array.from(pixels);
  const y = Int32Array.from(labels);
  writeFileSync(cache, Buffer.concat([Buffer.from(px), Buffer.from(y.buffer)]));
  return { x: Float32Array.from(px, (v) => v / 255), y, n: labels.length };
}

type Build = (info: DatasetInfo) => Model;
const conv = (extra: Partial<Parameters<typeof tf.layers.conv2d>[0]>, act = 'relu') =>
  ((info: DatasetInfo) =>
    imageModel(info, undefined, (input, classes) => {
      const layers: tf.layers.Layer[] = [
        tf.layers.conv2d({ inputShape: input, filters: 4, kernelSize: 3, strides: 2, activation: act === 'leaky' ? 'linear' : (act as 'relu'), ...extra }),
      ];
      if (act === 'leaky') layers.push(tf.layers.leakyReLU({ alpha: 0.1 }));
      layers.push(tf.layers.flatten(), tf.layers.dense({ units: classes }));
      return tf.sequential({ layers });
    })) as Build;
type Variant = { build: Build; lr?: number; convInput?: (x: tf.Tensor4D) => tf.Tensor4D };
const CENTRED: Variant = { build: (info) => tinyCnn.create(info), convInput: (x) => x.mul(2).sub(1) };
const VARIANTS: Record<string, Variant> = {
  // tiny-cnn as it was until its input was centred (the 'center' variant is tiny-cnn now).
  relu: { build: conv({}) },
  leaky: { build: conv({}, 'leaky') },
  elu: { build: conv({}, 'elu') },
  he: { build: conv({ kernelInitializer: 'heNormal', biasInitializer: tf.initializers.constant({ value: 0.01 }) }) },
  f8: { build: conv({ filters: 8 }) },
  // tiny-cnn now (also under its own name): the input moved to [-1, 1] before the ReLU conv; dead filters are read after it.
  center: CENTRED,
  'tiny-cnn': CENTRED,
  lr2: { build: conv({}), lr: 0.002 },
};

function flipBatch(x: Float32Array, flip: boolean[]): Float32Array {
  const per = SIZE * SIZE * 3;
  const row = SIZE * 3;
  const out = new Float32Array(x.length);
  flip.forEach((f, i) => {
    const base = i * per;
    if (!f) out.set(x.subarray(base, base + per), base);
    else
      for (let r = 0; r < SIZE; r++)
        for (let c = 0; c < SIZE; c++) for (let k = 0; k < 3; k++) out[base + r * row + (SIZE - 1 - c) * 3 + k] = x[base + r * row + c * 3 + k]!;
  });
  return out;
}

interface RunResult {
  acc: number[];
  classesPredicted: number[];
  deadShare: number[];
  ms: number;
  /** Share of dead filters before the first step. */
  dead0: number;
}

function evaluate(model: Model, test: Split, info: DatasetInfo, convInput = (x: tf.Tensor4D) => x): { acc: number; predicted: number; dead: number } {
  return tf.tidy(() => {
    const input = model.prepare({ kind: 'image', x: test.x, y: test.y, ids: new Int32Array(test.n), size: test.n, index: 0 });
    const pred = (model.logits(input).argMax(1) as tf.Tensor1D).dataSync();
    input.dispose();
    let right = 0;
    const seen = new Set<number>();
    for (let i = 0; i < test.n; i++) {
      if (pred[i] === test.y[i]) right++;
      seen.add(pred[i]!);
    }
    // Dead filters: conv + bias (before the activation) never above 0 on any test image at any place.
    const [kernel, bias] = model.variables();
    const x = convInput(tf.tensor4d(test.x, [test.n, ...(info.inputShape as [number, number, number])]));
    const pre = tf.conv2d(x, kernel as tf.Tensor4D, 2, 'valid').add(bias!);
    const maxPer = pre.max([0, 1, 2]).dataSync();
    const dead = Array.from(maxPer).filter((v) => v <= 0).length / maxPer.length;
    return { acc: right / test.n, predicted: seen.size, dead };
  });
}

async function run(variant: string, seed: number, train: Split, test: Split, info: DatasetInfo): Promise<RunResult> {
  const v = VARIANTS[variant]!;
  const realRandom = Math.random;
  Math.random = seededRandom(1000 + seed); // tfjs's initialisers draw their seeds from Math.random
  const model = v.build(info);
  Math.random = realRandom;
  const optimizer = tf.train.adam(v.lr ?? LR);
  const random = seededRandom(seed);
  const order = Array.from({ length: train.n }, (_, i) => i);
  let at = train.n;
  const per = SIZE * SIZE * 3;
  const result: RunResult = { acc: [], classesPredicted: [], deadShare: [], ms: 0, dead0: evaluate(model, test, info, v.convInput).dead };
  const t0 = performance.now();
  for (let step = 1; step <= STEPS; step++) {
    if (at + BATCH > train.n) {
      shuffleInPlace(order, random);
      at = 0;
    }
    const ids = order.slice(at, at + BATCH);
    at += BATCH;
    const raw = new Float32Array(BATCH * per);
    ids.forEach((id, i) => raw.set(train.x.subarray(id * per, (id + 1) * per), i * per));
    const x = flipBatch(
      raw,
      ids.map(() => random() < 0.5),
    );
    const y = Int32Array.from(ids, (id) => train.y[id]!);
    const input = model.prepare({ kind: 'image', x, y, ids: Int32Array.from(ids), size: BATCH, index: 0 });
    tf.tidy(() => void optimizer.minimize(() => model.loss(model.logits(input), input, 10)));
    input.dispose();
    if (step % EVAL_EVERY === 0) {
      const e = evaluate(model, test, info, v.convInput);
      result.acc.push(e.acc);
      result.classesPredicted.push(e.predicted);
      result.deadShare.push(e.dead);
    }
  }
  result.ms = performance.now() - t0;
  model.dispose();
  optimizer.dispose();
  return result;
}

await tf.setBackend('cpu');
await tf.ready();
useFastConvGrad();
const train = await decodeSplit('train', GROUP);
const test = await decodeSplit('test', 10);
const info: DatasetInfo = {
  kind: 'image',
  name: 'synthetic-coarse',
  classes: Array.from({ length: 10 }, (_, i) => String(i)),
  inputShape: [SIZE, SIZE, 3],
  fidelityLevels: 10,
  examples: train.n,
  records: 16,
  bytesPerLevel: [],
};
const variants = values.variants!.split(',');
const all: Record<string, RunResult[]> = Object.fromEntries(variants.map((v) => [v, []]));
for (let seed = FIRST; seed < FIRST + SEEDS; seed++) {
  for (const v of variants) {
    const r = await run(v, seed, train, test, info);
    all[v]!.push(r);
    const fmt = r.acc.map((a, i) => `${(100 * a).toFixed(1)}${r.classesPredicted[i] === 1 ? '*' : ''}/${(100 * r.deadShare[i]!).toFixed(0)}`);
    console.log(
      `seed ${seed} ${v.padEnd(6)} ${(r.ms / 1000).toFixed(1)} s  dead at init ${(100 * r.dead0).toFixed(0)}%, acc%/dead% per eval: ${fmt.join(' ')}`,
    );
  }
}
for (const v of variants) {
  const rs = all[v]!;
  const collapsed = rs.filter((r) => r.acc.at(-1)! <= 0.11).length;
  const everOne = rs.filter((r) => r.classesPredicted.some((c) => c === 1)).length;
  const finals = rs.map((r) => r.acc.at(-1)!).sort((a, b) => a - b);
  const mean = finals.reduce((s, a) => s + a, 0) / finals.length;
  const ok = finals.filter((a) => a > 0.11);
  const okMean = ok.reduce((s, a) => s + a, 0) / Math.max(1, ok.length);
  const dead0 = rs.reduce((s, r) => s + r.dead0, 0) / rs.length;
  const deadEnd = rs.reduce((s, r) => s + r.deadShare.at(-1)!, 0) / rs.length;
  const ms = rs.map((r) => r.ms).sort((a, b) => a - b)[rs.length >> 1]!;
  console.log(
    `${v}: collapsed at the end ${collapsed}/${rs.length}, one class at some eval ${everOne}/${rs.length}, final acc mean ${(100 * mean).toFixed(1)}% ` +
      `(non-collapsed ${(100 * okMean).toFixed(1)}%), median ${(100 * finals[finals.length >> 1]!).toFixed(1)}%, median run ${(ms / 1000).toFixed(1)} s, ` +
      `dead filters at init ${(100 * dead0).toFixed(0)}%, at the end ${(100 * deadEnd).toFixed(0)}%`,
  );
}
