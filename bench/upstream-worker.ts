// One reader of bench/upstream.ts, in its own worker thread: for each job it
// opens an ImagePipeline with the options it is given (its partition among them),
// reads until the stream ends and hands every batch to the main thread, its
// buffers transferred, as the lab's pipeline workers do. The decoder's wasm module
// is compiled once, when the thread starts, outside any timing.
import { parentPort } from 'node:worker_threads';
import { loadTurboJpegNode } from '../src/jpeg/turbo-node.js';
import type { PipelineOptions, PipelineStats } from '../src/pipeline/api.js';
import { ImagePipeline } from '../src/pipeline/image-pipeline.js';
import { pcrRecords } from '../src/pipeline/pcr-records.js';

export interface ReaderJob {
  options: PipelineOptions;
}

export type ReaderMessage =
  | { type: 'ready' }
  | { type: 'batch'; size: number; x: Float32Array; y: Int32Array }
  /** `ms`: this thread's own time from the call to open to next() answering null. */
  | { type: 'done'; stats: PipelineStats; warnings: string[]; ms: number; bytesPerLevel: number[] }
  | { type: 'error'; message: string };

const port = parentPort!;
await loadTurboJpegNode(); // compiles the module; each pipeline gets its own instance, as each lab worker does
port.on('message', (job: ReaderJob) => {
  void (async () => {
    const warnings: string[] = [];
    const pipeline = new ImagePipeline(pcrRecords, await loadTurboJpegNode(), (e) => {
      if (e.type === 'warning') warnings.push(e.message);
    });
    try {
      const start = performance.now();
      const info = await pipeline.open(job.options);
      for (let b = await pipeline.next(); b; b = await pipeline.next()) {
        if (b.kind !== 'image') throw new Error('not an image batch');
        port.postMessage({ type: 'batch', size: b.size, x: b.x, y: b.y } satisfies ReaderMessage, [b.x.buffer as ArrayBuffer, b.y.buffer as ArrayBuffer]);
      }
      const ms = performance.now() - start;
      port.postMessage({ type: 'done', stats: { ...pipeline.stats }, warnings, ms, bytesPerLevel: info.bytesPerLevel } satisfies ReaderMessage);
    } catch (err) {
      port.postMessage({ type: 'error', message: String((err as Error).stack ?? err) } satisfies ReaderMessage);
    } finally {
      pipeline.close();
    }
  })();
});
port.postMessage({ type: 'ready' } satisfies ReaderMessage);
