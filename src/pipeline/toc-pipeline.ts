// The tabular pipeline over TOC records: fetch a record (one Range request),
// cut and validate its batch frames, build the GPU index structures, echo
// batches, shuffle their order, hand them over. Batches stay compressed all the
// way to the GPU. A corrupt batch is reported (record, batch, byte offset) and
// skipped; the others train.
import { TimeSlice } from '../shared/time-slice.js';
import { DEFAULT_RUNS_K, tocRunsLayout } from '../toc/gpu-runs.js';
import { toBatch } from '../toc/batch.js';
import { readTocFrame, tocRecordBytes, tocSplitRows, validateTocManifest, type TocManifest, type TocRecordEntry, type TocSplitEntry } from '../toc/dataset.js';
import { TocFormatError } from '../toc/types.js';
import type { DatasetInfo, PendingBatch, TocBatchMessage } from './api.js';
import { BasePipeline, ServerGoneError, startsOf } from './base.js';
import { echo, mapHeld, shuffleBuffer, type EchoHeld, type ShuffleHeld } from './stages.js';

/** Copies a view that shares its buffer, so transferring it cannot detach other batches' data. */
function owned<T extends Uint32Array | Float32Array | Int32Array>(a: T): T {
  return a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : (a.slice() as T);
}

/**
 * A batch on its way through the stages, or (while a resumed pipeline replays the earlier run's stream) a way to read it;
 * `position` is the stream position of its record's read, `index` the record's in the split, `frame` the batch's in the record.
 */
/** copy: an echoed copy (its rows are counted as echoed when it is trained on). */
type TocItem = { size: number; position: number; index: number; frame: number; copy?: boolean } & (
  | { batch: TocBatchMessage }
  | { load(): Promise<TocBatchMessage | undefined> }
);

/** A batch as a stream snapshot writes it down (copy 1: an echoed copy; snapshots from before the flag have 3 entries). */
type TocRef = [position: number, index: number, frame: number, copy?: 1];

/** What the stages hold between pulls. */
interface TocHeld<T> {
  echo: EchoHeld<T>;
  shuffle: ShuffleHeld<T>;
}

/** A record's batches; undefined where a batch was left out. */
type ParsedRecord = (TocBatchMessage | undefined)[];

/** A deep copy of a batch's typed arrays. */
function copyBatch(b: TocBatchMessage): TocBatchMessage {
  const copy = <T extends object>(o: T): T =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, ArrayBuffer.isView(v) ? (v as Uint32Array).slice() : v])) as T;
  return { ...b, batch: copy(b.batch), layout: copy(b.layout), y: b.y.slice(), ids: b.ids.slice() };
}

export class TocPipeline extends BasePipeline<TocManifest> {
  /** Each record's first row's index in the split. */
  private firstRows: number[] = [];
  /** What the stages hold between pulls; a restored stream's start with what its snapshot held. */
  private held: TocHeld<TocItem> = { echo: { left: 0 }, shuffle: { items: [], capacity: 0, draining: false } };

  protected validate(json: unknown, where: string): TocManifest {
    return validateTocManifest(json, where);
  }

  /** k the batches are laid out for: the model's first-layer columns (PipelineOptions.tocColumns). */
  private tocColumns(): number {
    const k = this.options.tocColumns ?? DEFAULT_RUNS_K;
    return k === 'classes' ? this.manifest.classes.length : k;
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

  protected async *batches(): AsyncGenerator<PendingBatch> {
    const records = this.split().records;
    this.firstRows = startsOf(records.map(tocRecordRows));
    if (this.startFrom) this.held = this.revive(this.startFrom.held as TocHeld<TocRef>);
    const batches = this.readEpochs(
      records,
      (r, position, index) => this.readRecord(r, position, index),
      (item) => item.size,
    );
    // Batch echoing: the mini-batch is the unit the TOC format compresses. Batches
    // leave the worker as transferables (detached once sent), so echoed copies get arrays of their own.
    const echoed = echo(
      batches,
      {
        factor: this.tape.channel('echoFactor', () => this.options.echoFactor),
        random: this.random,
        clone: (item) => ('batch' in item ? { ...item, batch: copyBatch(item.batch) } : item),
        echoed: (item) => void (this.stats.examplesEchoed += item.size),
        markCopy: (item) => ({ ...item, copy: true }),
      },
      this.held.echo,
    );
    const rows = this.tape.channel('shuffleBuffer', () => this.options.shuffleBuffer);
    const split = this.split();
    const shuffled = this.shuffles
      ? shuffleBuffer(echoed, () => shuffleBatches(rows(), split), this.random, this.held.shuffle, this.tape.shuffleWarmUp)
      : echoed;
    const made = (item: TocItem, b: TocBatchMessage | undefined): TocBatchMessage | undefined => b && { ...b, echoed: item.copy ? b.size : 0 };
    for await (const item of shuffled) yield { size: item.size, make: async () => made(item, 'batch' in item ? item.batch : await item.load()) };
  }

  protected heldNow(): TocHeld<TocRef> {
    const write = (item: TocItem): TocRef => (item.copy ? [item.position, item.index, item.frame, 1] : [item.position, item.index, item.frame]);
    const { echo: e, shuffle } = this.held;
    return {
      echo: mapHeld(e, write),
      shuffle: { ...shuffle, items: shuffle.items.map(write) },
    };
  }

  /** A snapshot's held batches as promises to read their records again. */
  private revive(written: TocHeld<TocRef>): TocHeld<TocItem> {
    const records = this.split().records;
    const read = ([position, index, frame, copy]: TocRef): TocItem => {
      const entry = records[index];
      if (!(entry && frame < entry.batches.length && position < this.tape.replayRecords)) {
        throw new Error(`the saved run's stream snapshot names batch ${frame} of record ${index} read ${position}, which its tape does not hold`);
      }
      const load = async () => ((b) => b && copyBatch(b))((await this.parseAgain(entry, position, index))?.[frame]);
      return { size: entry.batches[frame]!.rows, position, index, frame, ...(copy ? { copy: true } : {}), load };
    };
    const { echo: e, shuffle } = written;
    return {
      echo: mapHeld(e, read),
      shuffle: { ...shuffle, items: shuffle.items.map(read) },
    };
  }

  /** The batches of the record at `position` in the stream; where a resumed stream replays the earlier run, promises to read them. */
  private async readRecord(entry: TocRecordEntry, position: number, index: number): Promise<TocItem[]> {
    const frames = entry.batches.map((_, i) => i);
    if (position < this.tape.replayRecords) {
      const outcome = this.tape.outcome(position);
      const kept = outcome === undefined ? frames : (outcome ?? []);
      const load = () => this.parseAgain(entry, position, index);
      // Each batch is handed out (and its arrays transferred) once per echo copy: every load gets arrays of its own.
      return kept.map((i) => ({ size: entry.batches[i]!.rows, position, index, frame: i, load: async () => ((b) => b && copyBatch(b))((await load())?.[i]) }));
    }
    const parsed = await this.parseRecord(entry, index);
    const items: TocItem[] = [];
    parsed?.forEach((batch, frame) => batch && items.push({ size: batch.size, position, index, frame, batch }));
    if (!parsed) this.tape.noteOutcome(position, null);
    else if (items.length !== frames.length)
      this.tape.noteOutcome(
        position,
        frames.filter((i) => parsed[i]),
      );
    return items;
  }

  /** A replayed record, read once for all of its batches that are trained on. */
  private parseAgain(entry: TocRecordEntry, position: number, index: number): Promise<ParsedRecord | undefined> {
    return this.readAgain(position, () => this.parseRecord(entry, index, 'again'));
  }

  /** Fetches record `index` of the split and cuts it into batches (`again`: for a resumed run, see examplesReread); undefined when it cannot be read. */
  private async parseRecord(entry: TocRecordEntry, index: number, again?: 'again'): Promise<ParsedRecord | undefined> {
    const end = tocRecordBytes(entry);
    let bytes: Uint8Array;
    try {
      bytes = await this.fetchCounted(entry.file, end, 1, tocRecordRows(entry));
    } catch (err) {
      if (err instanceof ServerGoneError) throw err;
      if (!this.abort.signal.aborted) this.skipRecord((err as Error).message);
      return undefined;
    }
    const slice = new TimeSlice();
    let firstRow = this.firstRows[index]!;
    const out: ParsedRecord = [];
    for (const [i, frame] of entry.batches.entries()) {
      await slice.yieldIfDue(); // the worker answers the trainer between batches, not after the whole record
      if (this.abort.signal.aborted) return undefined; // closed meanwhile: the rest would only take the next run's time
      out.push(this.parseBatch(bytes, entry, i, firstRow));
      firstRow += frame.rows;
    }
    this.stats.decodeMs += slice.busyMs;
    this.stats[again ? 'examplesReread' : 'examplesRead'] += out.reduce((n, b) => n + (b?.size ?? 0), 0);
    return out;
  }

  /** Batch `i` of a fetched record, its rows numbered from `firstRow`; undefined (with a warning) when it is cut short or corrupt. */
  private parseBatch(bytes: Uint8Array, entry: TocRecordEntry, i: number, firstRow: number): TocBatchMessage | undefined {
    const frame = entry.batches[i]!;
    const ids = Int32Array.from({ length: frame.rows }, (_, r) => firstRow + r);
    if (frame.offset + frame.bytes > bytes.byteLength) {
      this.warn(`record ${entry.file}, batch ${i} (byte ${frame.offset}): truncated, the record ends at byte ${bytes.byteLength}; batch skipped`);
      return undefined;
    }
    try {
      const { labels, logical } = readTocFrame(bytes, frame, entry.file, i, { classes: this.manifest.classes.length, columns: this.manifest.columns });
      const batch = toBatch(logical);
      const layout = tocRunsLayout(batch, { k: this.tocColumns() });
      this.stats.tocNonZeros += layout.model.nnz;
      this.stats.tocTerms += layout.model.terms;
      for (const key of Object.keys(batch) as (keyof typeof batch)[]) {
        const v = batch[key];
        if (ArrayBuffer.isView(v)) (batch as unknown as Record<string, unknown>)[key] = owned(v as Uint32Array);
      }
      return { kind: 'toc', batch, layout, y: Int32Array.from(labels), ids, size: logical.rows, index: 0 };
    } catch (err) {
      if (!(err instanceof TocFormatError)) throw err;
      this.stats.examplesDropped += frame.rows;
      this.warn(`${err.message}; batch skipped`);
      return undefined;
    }
  }
}

const tocRecordRows = (entry: TocRecordEntry) => entry.batches.reduce((n, b) => n + b.rows, 0);

/**
 * The batches a TOC shuffle buffer holds: as many of the split's batches as hold about `rows` rows, and at least 2 (one
 * would not shuffle). Counted in the split's own batch size (a 2,000-row split took 512 rows as 2 batches of 250).
 */
export function shuffleBatches(rows: number, split: TocSplitEntry): number {
  const batches = split.records.reduce((n, r) => n + r.batches.length, 0);
  return Math.max(2, Math.round(rows / (tocSplitRows(split) / Math.max(1, batches))));
}
