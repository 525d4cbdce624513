import { defineConfig } from 'vite';

// Cross-origin isolation: full-resolution timers now, SharedArrayBuffer when a
// zero-copy batch path needs it (docs/architecture.md says why it is kept).
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
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
