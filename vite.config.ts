import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig, type Plugin } from 'vite';

// Cross-origin isolation: full-resolution timers now, SharedArrayBuffer when a
// zero-copy batch path needs it (docs/architecture.md says why it is kept).
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

// The page's help links to docs/*.md: the dev server serves them from the
// project root, and the build ships them beside the page so the links resolve there too.
const docs = (): Plugin => ({
  name: 'bytelab-docs',
  apply: 'build',
  generateBundle() {
    for (const f of readdirSync('docs').filter((n) => n.endsWith('.md')))
      this.emitFile({ type: 'asset', fileName: `docs/${f}`, source: readFileSync(`docs/${f}`) });
  },
});

export default defineConfig({
  plugins: [docs()],
  // A missing file is a 404, not index.html: the page reports a dataset that is not there as missing.
  appType: 'mpa',
  server: { headers: isolation, port: 5173, strictPort: false },
  preview: { headers: isolation, port: 4173 },
  worker: { format: 'es' },
  // Pre-bundle every dependency up front: otherwise the dev server discovers one
  // inside a worker mid-run and reloads the page.
  optimizeDeps: {
    include: ['@tensorflow/tfjs', '@tensorflow/tfjs-backend-webgpu', 'comlink', 'idb', 'fflate', 'fast-png', 'uplot'],
    entries: ['index.html', 'test/gpu/*.html', 'bench/gpu/*.html'],
  },
  build: { target: 'es2022' },
});
