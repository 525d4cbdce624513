// The tabular pipeline over TOC records: fetch a record (one Range request),
// cut and validate its batch frames, build the GPU index structures, echo
// batches, shuffle their order, hand them over. Batches stay compressed all the
// way to the GPU. A corrupt batch is reported (record, batch, byte offset) and
// skipped; the others train.
import { tocRunsLayout } from '../toc/gpu-runs.js';
import { toBatch } from '../toc/batch.js';
import { readTocFrame, tocRecordBytes, tocSplitRows, validateTocManifest, type TocManifest, type TocRecordEntry, type TocSplitEntry } from '../toc/dataset.js';
import { TocFormatError } from '../toc/types.js';
import type { Batch, DatasetInfo, TocBatchMessage } from './api.js';
import { BasePipeline, ServerGoneError } from './base.js';
import { echo, shuffleBuffer } from './stages.js';

/** Copies a view that shares its buffer, so transferring it cannot detach other batches' data. */
function owned<T extends Uint32Array | Float32Array | Int32Array>(a: T): T {
  return a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : (a.slice() as T);
}

/** A deep copy of a batch's typed arrays. */
function copyBatch(b: TocBatchMessage): TocBatchMessage {
  const copy = <T extends object>(o: T): T =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, ArrayBuffer.isView(v) ? (v as Uint32Array).slice() : v])) as T;
  return { ...b, batch: copy(b.batch), layout: copy(b.layout), y: b.y.slice() };
}

export class TocPipeline extends BasePipeline<TocManifest> {
  protected validate(json: unknown, where: string): TocManifest {
    return validateTocManifest(json, where);
  }

  private split(): TocSplitEntry {
    return (this.manifest.splits as Record<string, TocSplitEntry>)[this.options.split]!;
  }

  protected describe(): DatasetInfo {
    const m = this.manifest;
    return {
      kind: 'tabular',
      name: m.name,
      classes: m.classes,
      inputShape: [m.columns],
      featureNames: m.featureNames,
      fidelityLevels: 1,
      examples: tocSplitRows(this.split()),
      records: this.split().records.length,
      bytesPerLevel: [this.split().records.reduce((n, r) => n + tocRecordBytes(r), 0)],
      ...(m.attribution ? { attribution: m.attribution } : {}),
    };
  }

  /** TOC is lossless: there is one fidelity level. */
  setFidelity(): void {}

  protected async *batches(): AsyncGenerator<Batch> {
    const o = this.options;
    const batches = this.readEpochs(this.split().records, (r) => this.readRecord(r));
    // Batch echoing: the mini-batch is the unit the TOC format compresses. Batches
    // leave the worker as transferables (detached once sent), so echoed copies get arrays of their own.
    const echoed = echo(batches, {
      factor: () => this.options.echoFactor,
      random: this.random,
      clone: copyBatch,
      echoed: (b) => void (this.stats.examplesEchoed += b.size),
    });
    // The buffer holds batches: as many as hold about shuffleBuffer rows.
    const batchesHeld = () => Math.max(2, Math.round(this.options.shuffleBuffer / 250));
    const shuffled = o.shuffleBuffer > 1 ? shuffleBuffer(echoed, batchesHeld, this.random) : echoed;
    for await (const b of shuffled) yield { ...b, index: this.stats.batchesEmitted };
  }

  private async readRecord(entry: TocRecordEntry): Promise<TocBatchMessage[]> {
    const end = tocRecordBytes(entry);
    const rows = entry.batches.reduce((n, b) => n + b.rows, 0);
    let bytes: Uint8Array;
    try {
      bytes = await this.fetchCounted(entry.file, end, 1, rows);
    } catch (err) {
      if (err instanceof ServerGoneError) throw err;
      if (!this.abort.signal.aborted) this.skipRecord((err as Error).message);
      return [];
    }
    const start = performance.now();
    const out: TocBatchMessage[] = [];
    entry.batches.forEach((frame, i) => {
      if (frame.offset + frame.bytes > bytes.byteLength) {
        this.warn(`record ${entry.file}, batch ${i} (byte ${frame.offset}): truncated, the record ends at byte ${bytes.byteLength}; batch skipped`);
        return;
      }
      try {
        const { labels, logical } = readTocFrame(bytes, frame, entry.file, i, { classes: this.manifest.classes.length, columns: this.manifest.columns });
        const batch = toBatch(logical);
        const layout = tocRunsLayout(batch);
        for (const key of Object.keys(batch) as (keyof typeof batch)[]) {
          const v = batch[key];
          if (ArrayBuffer.isView(v)) (batch as unknown as Record<string, unknown>)[key] = owned(v as Uint32Array);
        }
        out.push({ kind: 'toc', batch, layout, y: Int32Array.from(labels), size: logical.rows, index: 0 });
      } catch (err) {
        if (!(err instanceof TocFormatError)) throw err;
        this.stats.examplesDropped += frame.rows;
        this.warn(`${err.message}; batch skipped`);
      }
    });
    this.stats.decodeMs += performance.now() - start;
    this.stats.examplesRead += out.reduce((n, b) => n + b.size, 0);
    return out;
  }
}
