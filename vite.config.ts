import { defineConfig } from 'vite';

// Cross-origin isolation, so workers may share memory (SharedArrayBuffer).
const isolation = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

export default defineConfig({
  server: { headers: isolation, port: 5173, strictPort: false },
  preview: { headers: isolation, port: 4173 },
  worker: { format: 'es' },
  build: { target: 'es2022' },
});
