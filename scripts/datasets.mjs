#!/usr/bin/env node
// Rebuilds the bundled default dataset (mini) or the full Fashion-MNIST set (full)
// from Debian's dataset-fashion-mnist package, installing it when missing (as root),
// or generates a synthetic colour dataset (synthetic-coarse, synthetic-fine).
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const SRC = '/usr/share/datasets/fashion-mnist';
const which = process.argv[2] ?? 'mini';
// --out DIR writes somewhere else (the unit test that checks the bundled set builds a copy to compare).
const outAt = process.argv.indexOf('--out');
const presets = {
  mini: { out: 'public/datasets/fashion-mnist-mini', name: 'Fashion-MNIST mini', args: '--limit 8192 --test-limit 1024 --record-size 256' },
  // The mini set in records of 64 images (fresh images come 4x finer): the time-to-accuracy bench's record-size comparison.
  'mini-64': {
    out: 'public/data/fashion-mnist-mini-64',
    name: 'Fashion-MNIST mini, records of 64',
    args: '--limit 8192 --test-limit 1024 --record-size 64',
  },
  full: { out: 'public/data/fashion-mnist', name: 'Fashion-MNIST', args: '--record-size 1024' },
  // Generated, no download (src/pcr/synthetic.ts): 4,000 + 800 colour images at 128x128, about 25 s of CPU each.
  'synthetic-coarse': { out: 'public/data/synthetic-coarse', generate: '--task coarse --size 128 --train 4000 --test 800 --seed 1 --record-size 250' },
  'synthetic-fine': { out: 'public/data/synthetic-fine', generate: '--task fine --size 128 --train 4000 --test 800 --seed 1 --record-size 250' },
};
const preset = presets[which];
if (!preset || (outAt > 0 && !process.argv[outAt + 1])) {
  console.error(`usage: node scripts/datasets.mjs ${Object.keys(presets).join('|')} [--out DIR]`);
  process.exit(1);
}
if (outAt > 0) preset.out = process.argv[outAt + 1];
const run = (cmd) => execSync(cmd, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });

if (preset.generate) {
  run(`node bin/bytelab.mjs pcr generate ${preset.generate} --out ${JSON.stringify(preset.out)}`);
  run(`node bin/bytelab.mjs pcr inspect ${JSON.stringify(preset.out)}`);
  process.exit(0);
}

if (!existsSync(`${SRC}/train-images-idx3-ubyte.gz`)) {
  if (process.getuid?.() !== 0) {
    console.error(`${SRC} is missing: install Debian's dataset-fashion-mnist package (apt-get install dataset-fashion-mnist) and run again`);
    process.exit(1);
  }
  run('apt-get update -qq && apt-get install -y -qq dataset-fashion-mnist');
}
run(
  `node bin/bytelab.mjs pcr build --idx ${SRC}/train-images-idx3-ubyte.gz --labels ${SRC}/train-labels-idx1-ubyte.gz ` +
    `--test-idx ${SRC}/t10k-images-idx3-ubyte.gz --test-labels ${SRC}/t10k-labels-idx1-ubyte.gz ${preset.args} --quality 90 --name "${preset.name}" --out ` +
    JSON.stringify(preset.out),
);
run(`node bin/bytelab.mjs pcr inspect ${JSON.stringify(preset.out)}`);
