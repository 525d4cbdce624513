#!/usr/bin/env node
// Biome wraps code at the configured width but never breaks a string or a
// comment: this names any source line still over it. Part of `npm run lint`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const WIDTH = JSON.parse(readFileSync('biome.jsonc', 'utf8').replace(/^\s*\/\/.*$/gm, '')).formatter.lineWidth;
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.ts', '*.mjs', '*.css', '*.wgsl'], { encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);
let over = 0;
for (const file of files) {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if ([...line].length > WIDTH) {
        over++;
        console.log(`${file}:${i + 1}: ${[...line].length} characters (width ${WIDTH})`);
      }
    });
}
if (over) process.exit(1);
