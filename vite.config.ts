import { existsSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import sirv from 'sirv';
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

// The build copies public/ (the datasets) with new times. Their own times are kept, so a file's Last-Modified, the validator
// the pipeline's If-Range sends where the server's ETag is weak, stays the same across deploys of new builds: browsers'
// cached record prefixes go on being extended rather than read again from byte 0.
const keepPublicTimes = (): Plugin => {
  let publicDir = '';
  let outDir = '';
  return {
    name: 'bytelab-keep-public-times',
    apply: 'build',
    configResolved(config) {
      publicDir = config.build.copyPublicDir ? config.publicDir : ''; // `npm start` serves public/ as it is
      outDir = resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const keep = (from: string, to: string): void => {
        if (!existsSync(to)) return;
        if (statSync(from).isDirectory()) for (const name of readdirSync(from)) keep(join(from, name), join(to, name));
        else utimesSync(to, statSync(from).atime, statSync(from).mtime);
      };
      if (publicDir && existsSync(publicDir)) keep(publicDir, outDir);
    },
  };
};

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
    configurePreviewServer: (server) => {
      const { root, build, publicDir } = server.config;
      server.middlewares.use('/data/', listing(join(build.copyPublicDir ? resolve(root, build.outDir) : publicDir, 'data')));
    },
  };
};

// `npm start` (mode "lab") serves a build of the page and public/ as it is now, not a copy: datasets built while it runs
// (npm run data:*) are there at once, and their files keep their times (Last-Modified, the If-Range validator).
const publicLive = (): Plugin => ({
  name: 'bytelab-public-live',
  configurePreviewServer(server) {
    if (server.config.build.copyPublicDir) return;
    const setHeaders = (res: ServerResponse) => {
      for (const [k, v] of Object.entries(isolation)) res.setHeader(k, v);
    };
    // dev: files looked up on each request (new ones appear), with no-cache; no extensions: /x is not public/x.html.
    server.middlewares.use(sirv(server.config.publicDir, { dev: true, etag: true, extensions: [], setHeaders }));
  },
});

export default defineConfig(({ mode }) => ({
  plugins: [docs(), dataListing(), publicLive(), keepPublicTimes()],
  // A missing file is a 404, not index.html: the page reports a dataset that is not there as missing.
  appType: 'mpa',
  server: { headers: isolation, port: 5173, strictPort: false },
  // `npm start`: the lab's own build, on the dev server's port, so the browser's storage (saved runs, datasets built in it,
  // the prefix cache), kept per origin, is the same under both; a second one fails rather than open an empty origin.
  preview: { headers: isolation, ...(mode === 'lab' ? { port: 5173, strictPort: true } : { port: 4173 }) },
  worker: { format: 'es' },
  // Pre-bundle every dependency up front: otherwise the dev server discovers one
  // inside a worker mid-run and reloads the page.
  optimizeDeps: {
    include: ['@tensorflow/tfjs', '@tensorflow/tfjs-backend-webgpu', 'comlink', 'idb', 'fflate', 'fast-png', 'uplot'],
    entries: ['index.html', 'test/gpu/*.html', 'bench/gpu/*.html'],
  },
  // tfjs with its WebGPU backend is one chunk of about 1.1 MB, loaded at once whatever the split.
  build: {
    target: 'es2022',
    chunkSizeWarningLimit: 1500,
    // `npm start` builds the page alone, apart from dist/ (`npm run build`, the nginx tests): public/ is served as it is.
    ...(mode === 'lab' ? { outDir: 'node_modules/.cache/bytelab-lab', emptyOutDir: true, copyPublicDir: false } : {}),
  },
}));
