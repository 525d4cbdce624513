// The pipeline worker: opens the right pipeline for the dataset's manifest
// (PCR images or TOC tables) and exposes it over comlink. Batches travel as
// transferables, so the page receives them without a copy.
import * as Comlink from 'comlink';
import { loadTurboJpeg } from '../jpeg/turbo-browser.js';
import { batchTransferables, type PipelineApi, type PipelineEvent } from './api.js';
import { fetchManifest, type BasePipeline } from './base.js';
import { ImagePipeline } from './image-pipeline.js';
import { pcrRecords } from './pcr-records.js';
import { isReferenceIndexUrl, referenceRecords } from './reference-records.js';
import { TocPipeline } from './toc-pipeline.js';

let pipeline: BasePipeline<unknown> | undefined;
/**
 * The page's event callback, as comlink gives it here: each call resolves once the page has taken the event. 'flushed'
 * (flushEvents) asks nothing of the page: it only comes after every event sent before it.
 */
type EventPort = (event: PipelineEvent | { type: 'flushed' }) => Promise<void>;
let events: EventPort | undefined;
/** Aborts the open in progress (its manifest fetch and wasm load) when cancel() arrives. */
let opening: AbortController | undefined;

function current(): BasePipeline<unknown> {
  if (!pipeline) throw new Error('pipeline not opened');
  return pipeline;
}

const api: PipelineApi = {
  async open(options, onEvent) {
    pipeline?.close();
    pipeline = undefined;
    events = onEvent as unknown as EventPort;
    const abort = (opening = new AbortController());
    const cancelled = () => {
      if (abort.signal.aborted) throw new Error('cancelled while opening');
    };
    // A PCR_index.pb (the PCR reference implementation's format) is binary: its record source reads it itself.
    let next: BasePipeline<unknown>;
    let manifest: unknown;
    if (isReferenceIndexUrl(options.manifestUrl)) {
      next = new ImagePipeline(referenceRecords, await loadTurboJpeg(), onEvent);
    } else {
      manifest = await fetchManifest(options.manifestUrl, abort.signal);
      const format = (manifest as { format?: unknown }).format;
      next = format === 'bytelab-toc' ? new TocPipeline(onEvent) : new ImagePipeline(pcrRecords, await loadTurboJpeg(), onEvent);
    }
    cancelled();
    pipeline = next;
    abort.signal.addEventListener('abort', () => next.close(), { once: true });
    const info = await next.open(options, manifest);
    cancelled();
    return info;
  },
  async next() {
    const reader = current();
    const batch = await reader.next();
    if (!batch) return null;
    batch.stats = reader.statsNow();
    return Comlink.transfer(batch, batchTransferables(batch));
  },
  setFidelity: (level) => current().setFidelity(level),
  setEchoFactor: (factor) => current().setEchoFactor(factor),
  setEchoMode: (mode) => current().setEchoMode(mode),
  setShuffleBuffer: (size) => current().setShuffleBuffer(size),
  setRequestsInFlight: (n) => current().setRequestsInFlight(n),
  stats: () => current().statsNow(),
  async flushEvents() {
    await events?.({ type: 'flushed' });
  },
  tape: () => current().tapeState(),
  async samples(n) {
    // Only an image pipeline has samples; a table has no images to show.
    const p = current();
    const s = p instanceof ImagePipeline ? p.samples(n) : undefined;
    return s && Comlink.transfer(s, [s.pixels.buffer]);
  },
  cancel() {
    opening?.abort();
    pipeline?.close();
  },
  close() {
    opening?.abort();
    pipeline?.close();
    pipeline = undefined;
  },
};

Comlink.expose(api);
