// Loads the libjpeg-turbo wasm module in a page or worker; Vite serves the file.
import wasmUrl from '@cwasm/jpeg-turbo/jpeg-turbo.wasm?url';
import { TurboJpeg } from './turbo.js';

let module: Promise<WebAssembly.Module> | undefined;

export async function loadTurboJpeg(): Promise<TurboJpeg> {
  module ??= fetch(wasmUrl).then(async (res) => {
    if (!res.ok) throw new Error(`could not load the JPEG decoder from ${wasmUrl}: HTTP ${res.status}`);
    return WebAssembly.compile(await res.arrayBuffer());
  });
  return new TurboJpeg(await module);
}
