// The pipeline worker: exposes a Pipeline over comlink. Batches travel as
// transferables, so the page receives them without a copy.
import * as Comlink from 'comlink';
import { loadTurboJpeg } from '../jpeg/turbo-browser.js';
import type { PipelineApi } from './api.js';
import { Pipeline } from './pipeline.js';

let pipeline: Pipeline | undefined;

function current(): Pipeline {
  if (!pipeline) throw new Error('pipeline not opened');
  return pipeline;
}

const api: PipelineApi = {
  async open(options, onEvent) {
    pipeline?.close();
    pipeline = new Pipeline(await loadTurboJpeg(), onEvent);
    return pipeline.open(options);
  },
  async next() {
    const batch = await current().next();
    return batch ? Comlink.transfer(batch, [batch.x.buffer, batch.y.buffer]) : null;
  },
  setScanGroup: (group) => current().setScanGroup(group),
  setEchoFactor: (factor) => current().setEchoFactor(factor),
  stats: () => ({ ...current().stats }),
  async samples(n) {
    const s = current().samples(n);
    if (!s) throw new Error('no record decoded yet');
    return Comlink.transfer(s, [s.pixels.buffer]);
  },
  close() {
    pipeline?.close();
    pipeline = undefined;
  },
};

Comlink.expose(api);
