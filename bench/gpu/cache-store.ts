// Starts the prefix-cache store benchmark in a dedicated worker (where the data
// pipeline runs), shows its progress and puts its results on
// window.__cacheStoreBench. When a storage call in the worker never settles, the
// worker reports a stall; the page then stops it and starts a new worker on the
// same store pass, and the stall goes into the results. Opened by
// bench/prefix-cache-store.ts with ?mode=bench&entries=N&rounds=N, or
// ?mode=persist-write / persist-check.
import type { CacheStoreConfig, CacheStoreResults, PersistResults, Stall, StoreRun, WorkerMessage } from './cache-store-worker.js';

declare global {
  interface Window {
    __cacheStoreBench?: CacheStoreResults | PersistResults | { error: string };
  }
}

const MAX_STALLS = 6;
const q = new URLSearchParams(location.search);
const config: CacheStoreConfig = {
  mode: (q.get('mode') ?? 'bench') as CacheStoreConfig['mode'],
  entries: Number(q.get('entries') ?? 200),
  rounds: Number(q.get('rounds') ?? 5),
  warmup: 1,
  manifestUrl: new URL('/datasets/fashion-mnist-mini/manifest.json', location.href).href,
  resumeFrom: 0,
};
const out = document.getElementById('out')!;
const runs: StoreRun[] = [];
const stalls: Stall[] = [];
const say = (text: string) => {
  out.textContent += `\n${text}`;
  console.log(text);
};

function start(resumeFrom: number): void {
  const worker = new Worker(new URL('./cache-store-worker.ts', import.meta.url), { type: 'module', name: 'cache-store-bench' });
  const finish = (result: NonNullable<Window['__cacheStoreBench']>) => {
    worker.terminate();
    window.__cacheStoreBench = result;
  };
  worker.onerror = (e) => finish({ error: `worker failed: ${e.message || 'could not start'}` });
  worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
    const m = event.data;
    if (m.type === 'progress') say(m.text);
    else if (m.type === 'run') runs.push(m.run);
    else if (m.type === 'stall') {
      worker.terminate();
      stalls.push(m.stall);
      const s = m.stall;
      say(`STALL in round ${s.round} ${s.sizeClass} ${s.store}: ${s.at}; ${s.probe}`);
      if (config.mode !== 'bench') finish({ error: `${config.mode}: ${s.store} stalled at ${s.at}` });
      else if (stalls.length > MAX_STALLS) finish({ error: `${stalls.length} stalls, the last: ${s.store} at ${s.at}; ${s.probe}` });
      else start(s.pass); // a new worker runs the stalled pass again
    } else if (m.type === 'error') finish({ error: m.message });
    else finish('runs' in m.results ? { ...m.results, runs, stalls } : m.results);
  };
  worker.postMessage({ ...config, resumeFrom });
}

start(0);
