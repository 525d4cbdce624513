// Exact resume: a pipeline's stream of batches is a function of the seed, the
// data, and where in the stream each live control took effect. The seed and the
// data are known again after a reload; the tape keeps the third. Every place
// that reads a live control (the echo stages per example, the shuffle buffer,
// the fidelity per record) reads it through a channel that counts its reads and
// notes each read whose value differs from the one before. A record that did
// not yield all of its examples (a skipped record, a dropped image) is noted by
// its position in the stream. A pipeline reopened with the tape reads every
// control as the tape says up to the read count the tape holds, then live, and
// so emits the same batches in the same order as the run it was taken from.
//
// Working out a long run's batches from the start takes a while (about 55,000
// examples/s), so the tape also keeps the latest stream snapshots: every few
// hundred batches, where the epoch loop was, the stages' random state, each
// control's read count and the items the stages held (as record positions, not
// data). A resume starts from the latest snapshot at or before its batch and
// works out only the batches after it.

/** A value a live control can take. */
export type ControlValue = number | string;

/** What a pipeline's tape holds; plain data, so it can be stored (IndexedDB) and sent between workers. */
export interface TapeState {
  /** Per channel: reads so far, and [read, value] at the first read and at every read whose value changed. */
  channels: Record<string, { reads: number; changes: [read: number, value: ControlValue][] }>;
  /** Records consumed so far (positions 0 .. records - 1 of the stream across epochs). */
  records: number;
  /**
   * The fresh examples those records yielded (PipelineStats.examplesRead for them alone, not for records read ahead),
   * across resumes: a continued run's count goes on from here. Tapes saved before it have none.
   */
  examples?: number;
  /** Records at those positions that did not yield every example: the kept examples' indices in the record, or null when the record was skipped. */
  outcomes: [position: number, kept: number[] | null][];
  /**
   * The stream's shuffle buffer warms up (stages.ts shuffleBuffer). Tapes saved before it did have none, and their
   * resumes fill the buffer as their runs did, so that they go on with the same order.
   */
  shuffleWarmUp?: boolean;
  /** The latest stream snapshots, oldest first (tapes saved before they existed have none: their resumes work out every batch). */
  snapshots?: StreamSnapshot[];
}

/** Where a pipeline's stream stood just before it settled on batch `batch`; plain data. */
export interface StreamSnapshot {
  batch: number;
  /** The stream position of the record whose items the epoch loop was passing on, and how many had gone on. */
  record: number;
  taken: number;
  /** The stages' random state (sfc32's words). */
  random: number[];
  /** Each control's reads so far. */
  reads: Record<string, number>;
  /** What the stages held, as the pipeline writes it down (image-pipeline.ts, toc-pipeline.ts). */
  held: unknown;
}

/** Snapshots a tape keeps: the latest is usually ahead of the batches handed out (the pipeline reads ahead), the one before is not. */
const SNAPSHOTS_KEPT = 3;

/** The latest snapshot a stream resumed at `batches` can start from (none: it starts from the beginning). */
export function snapshotFor(tape: TapeState, batches: number): StreamSnapshot | undefined {
  return tape.snapshots?.filter((s) => s.batch <= batches).at(-1);
}

interface Channel {
  reads: number;
  changes: [number, ControlValue][];
  /** While replaying: the recorded reads, and the index of the change in force. */
  replay?: { reads: number; changes: [number, ControlValue][]; at: number };
}

export class ControlTape {
  private readonly channels = new Map<string, Channel>();
  private readonly outcomes = new Map<number, number[] | null>();
  private records = 0;
  private examples: number;
  /** Whether this stream's shuffle buffer warms up: a new one does; a resumed one does as the taped run did. */
  readonly shuffleWarmUp: boolean;
  private readonly snapshots: StreamSnapshot[];

  /**
   * `replay`: a tape taken from an earlier run of the same pipeline (same dataset, split, seed and partition);
   * `from`: the snapshot of it the stream restarts at, where each channel's reads go on from its count.
   */
  constructor(
    private readonly replay?: TapeState,
    private readonly from?: StreamSnapshot,
  ) {
    for (const [position, kept] of replay?.outcomes ?? []) this.outcomes.set(position, kept);
    this.snapshots = from ? [from] : [];
    this.examples = replay?.examples ?? 0;
    this.shuffleWarmUp = replay ? replay.shuffleWarmUp === true : true;
  }

  /** Records at positions below this were read by the taped run: a resumed pipeline need not read them to know what they held. */
  get replayRecords(): number {
    return this.replay?.records ?? 0;
  }

  /** A control read through the tape: as recorded while replaying, live after; every read is counted and changes are noted. */
  channel<T extends ControlValue>(name: string, live: () => T): () => T {
    const recorded = this.replay?.channels[name];
    const reads = this.from?.reads[name] ?? 0;
    // A restored stream's channel keeps the changes before its snapshot, so its own tape can restore from the same snapshot.
    const before = (recorded?.changes ?? []).filter(([n]) => n < reads).map(([n, v]): [number, ControlValue] => [n, v]);
    const ch: Channel = { reads, changes: before, ...(recorded ? { replay: { ...recorded, at: -1 } } : {}) };
    this.channels.set(name, ch);
    return () => {
      const n = ch.reads++;
      let value: ControlValue;
      const r = ch.replay;
      if (r && n < r.reads) {
        while (r.at + 1 < r.changes.length && r.changes[r.at + 1]![0] <= n) r.at++;
        value = r.at >= 0 ? r.changes[r.at]![1] : live();
      } else {
        value = live();
      }
      const last = ch.changes.at(-1);
      if (!last || last[1] !== value) ch.changes.push([n, value]);
      return value as T;
    };
  }

  /** The value the taped run's `read`-th read of a channel returned (reads before the tape ends only). */
  recordedValue(name: string, read: number): ControlValue | undefined {
    const changes = this.replay?.channels[name]?.changes ?? [];
    return changes.findLast(([n]) => n <= read)?.[1];
  }

  /** Each channel's reads so far. */
  readCounts(): Record<string, number> {
    return Object.fromEntries([...this.channels].map(([name, ch]) => [name, ch.reads]));
  }

  /** Keeps a stream snapshot (the latest few). */
  noteSnapshot(snapshot: StreamSnapshot): void {
    this.snapshots.push(snapshot);
    if (this.snapshots.length > SNAPSHOTS_KEPT) this.snapshots.shift();
  }

  /** What the record at `position` held in the taped run: undefined (every example), the kept indices, or null (skipped). */
  outcome(position: number): number[] | null | undefined {
    return this.outcomes.get(position);
  }

  /** Notes a record that did not yield every example (kept: its kept examples' indices; null: skipped). */
  noteOutcome(position: number, kept: number[] | null): void {
    this.outcomes.set(position, kept);
  }

  /** The record at `position` has been consumed (in stream order), with `examples` examples in it. */
  consumed(position: number, examples: number): void {
    // A replayed record's examples were counted by the taped run (and are promises to read it again here).
    if (position >= this.replayRecords) this.examples += examples;
    this.records = Math.max(this.records, position + 1);
  }

  state(): TapeState {
    const channels: TapeState['channels'] = {};
    for (const [name, ch] of this.channels) channels[name] = { reads: ch.reads, changes: ch.changes.map(([n, v]) => [n, v]) };
    const outcomes = [...this.outcomes].filter(([p]) => p < this.records).map(([p, kept]): [number, number[] | null] => [p, kept && [...kept]]);
    const examples = this.replay && this.replay.examples === undefined ? {} : { examples: this.examples }; // unknown stays unknown
    return { channels, records: this.records, ...examples, shuffleWarmUp: this.shuffleWarmUp, outcomes, snapshots: [...this.snapshots] };
  }
}

/** Checks a tape read back from storage; throws naming what is wrong. */
export function validateTape(tape: unknown): TapeState {
  const t = tape as TapeState;
  const ok =
    typeof t === 'object' &&
    t !== null &&
    Number.isInteger(t.records) &&
    t.records >= 0 &&
    (t.examples === undefined || (Number.isInteger(t.examples) && t.examples >= 0)) &&
    (t.shuffleWarmUp === undefined || typeof t.shuffleWarmUp === 'boolean') &&
    typeof t.channels === 'object' &&
    Array.isArray(t.outcomes) &&
    Object.values(t.channels).every((c) => Number.isInteger(c.reads) && Array.isArray(c.changes)) &&
    (t.snapshots === undefined || (Array.isArray(t.snapshots) && t.snapshots.every(validSnapshot)));
  if (!ok) throw new Error('the saved pipeline state is malformed');
  return t;
}

function validSnapshot(s: StreamSnapshot): boolean {
  const whole = (n: unknown) => Number.isInteger(n) && (n as number) >= 0;
  return (
    typeof s === 'object' &&
    s !== null &&
    whole(s.batch) &&
    whole(s.record) &&
    whole(s.taken) &&
    Array.isArray(s.random) &&
    typeof s.reads === 'object' &&
    s.reads !== null &&
    Object.values(s.reads).every(whole)
  );
}
