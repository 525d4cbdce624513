// Loads the libjpeg-turbo wasm module from node_modules (Node only).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { TurboJpeg } from './turbo.js';

let module: Promise<WebAssembly.Module> | undefined;

export async function loadTurboJpegNode(): Promise<TurboJpeg> {
  module ??= readFile(createRequire(import.meta.url).resolve('@cwasm/jpeg-turbo/jpeg-turbo.wasm')).then((bytes) => WebAssembly.compile(bytes));
  return new TurboJpeg(await module);
}
