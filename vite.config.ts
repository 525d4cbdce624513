import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
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

// GET /data/ answers the folders of the datasets built on demand (npm run data:*) as JSON, as nginx's
// autoindex_format json does in deploy/nginx: the page probes only those that are there, so a dataset
// not built costs no request and no 404 in the console.
const dataListing = (): Plugin => {
  const listing = (dir: string) => (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    if (req.url !== '/') return next(); // mounted at /data/: a file under it
    const folders = existsSync(dir) ? readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()) : [];
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'no-cache');
    res.end(JSON.stringify(folders.map((e) => ({ name: e.name, type: 'directory' }))));
  };
  return {
    name: 'bytelab-data-listing',
    configureServer: (server) => void server.middlewares.use('/data/', listing(join(server.config.publicDir, 'data'))),
    configurePreviewServer: (server) => void server.middlewares.use('/data/', listing(join(server.config.root, server.config.build.outDir, 'data'))),
  };
};

export default defineConfig({
  plugins: [docs(), dataListing()],
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
