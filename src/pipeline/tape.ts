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

/** A value a live control can take. */
export type ControlValue = number | string;

/** What a pipeline's tape holds; plain data, so it can be stored (IndexedDB) and sent between workers. */
export interface TapeState {
  /** Per channel: reads so far, and [read, value] at the first read and at every read whose value changed. */
  channels: Record<string, { reads: number; changes: [read: number, value: ControlValue][] }>;
  /** Records consumed so far (positions 0 .. records - 1 of the stream across epochs). */
  records: number;
  /** Records at those positions that did not yield every example: the kept examples' indices in the record, or null when the record was skipped. */
  outcomes: [position: number, kept: number[] | null][];
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

  /** `replay`: a tape taken from an earlier run of the same pipeline (same dataset, split, seed and partition). */
  constructor(private readonly replay?: TapeState) {
    for (const [position, kept] of replay?.outcomes ?? []) this.outcomes.set(position, kept);
  }

  /** Records at positions below this were read by the taped run: a resumed pipeline need not read them to know what they held. */
  get replayRecords(): number {
    return this.replay?.records ?? 0;
  }

  /** A control read through the tape: as recorded while replaying, live after; every read is counted and changes are noted. */
  channel<T extends ControlValue>(name: string, live: () => T): () => T {
    const recorded = this.replay?.channels[name];
    const ch: Channel = { reads: 0, changes: [], ...(recorded ? { replay: { ...recorded, at: -1 } } : {}) };
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

  /** What the record at `position` held in the taped run: undefined (every example), the kept indices, or null (skipped). */
  outcome(position: number): number[] | null | undefined {
    return this.outcomes.get(position);
  }

  /** Notes a record that did not yield every example (kept: its kept examples' indices; null: skipped). */
  noteOutcome(position: number, kept: number[] | null): void {
    this.outcomes.set(position, kept);
  }

  /** The record at `position` has been consumed (in stream order). */
  consumed(position: number): void {
    this.records = Math.max(this.records, position + 1);
  }

  state(): TapeState {
    const channels: TapeState['channels'] = {};
    for (const [name, ch] of this.channels) channels[name] = { reads: ch.reads, changes: ch.changes.map(([n, v]) => [n, v]) };
    const outcomes = [...this.outcomes].filter(([p]) => p < this.records).map(([p, kept]): [number, number[] | null] => [p, kept && [...kept]]);
    return { channels, records: this.records, outcomes };
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
    typeof t.channels === 'object' &&
    Array.isArray(t.outcomes) &&
    Object.values(t.channels).every((c) => Number.isInteger(c.reads) && Array.isArray(c.changes));
  if (!ok) throw new Error('the saved pipeline state is malformed');
  return t;
}
