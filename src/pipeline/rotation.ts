// Whose turn it is among a run's readers. The session takes one batch from each
// reader in turn, by rank. A reader that runs dry (every record it can be given
// failed: NoReadableData) leaves the turn and the others go on; where it left is
// written down, so a resumed run takes its batches from the same readers in the
// same turn as the run that was not interrupted.

/** A reader that left the turn, and the batch (counted over all readers, from 0) that was being asked for when it did. */
export interface ReaderLeft {
  rank: number;
  batch: number;
}

export class Rotation {
  /** Batches taken from each reader, by rank. */
  readonly taken: number[];
  /** The readers that left, in the order they did. */
  readonly left: ReaderLeft[] = [];
  /** Ranks still in the turn, in rank order. */
  private readonly live: number[];
  private turn = 0;
  /** Batches taken from all readers. */
  private handed = 0;

  constructor(readers: number) {
    this.taken = new Array<number>(readers).fill(0);
    this.live = Array.from({ length: readers }, (_, rank) => rank);
  }

  /**
   * The turn as it stood when `batches` batches had been taken, the readers in `left` having left when they did.
   * Throws if `left` could not have happened (a rank that was not in its turn at its batch, or a batch beyond `batches`).
   */
  static replay(readers: number, left: readonly ReaderLeft[], batches: number): Rotation {
    const r = new Rotation(readers);
    for (const { rank, batch } of left) {
      if (!(Number.isInteger(batch) && batch >= r.handed && batch <= batches)) throw new Error(`reader ${rank + 1} left at batch ${batch}, out of order`);
      r.skipTo(batch);
      if (r.current !== rank) throw new Error(`reader ${rank + 1} left at batch ${batch}, when it was reader ${(r.current ?? -1) + 1}'s turn`);
      r.leave();
    }
    r.skipTo(batches);
    return r;
  }

  /** The rank whose turn it is; undefined once every reader has left. */
  get current(): number | undefined {
    return this.live[this.turn];
  }

  /** Readers still in the turn. */
  get reading(): readonly number[] {
    return this.live;
  }

  /** The current reader gave a batch: the turn passes to the next. */
  took(): void {
    const rank = this.current;
    if (rank === undefined) throw new Error('no reader left to take a batch from');
    this.taken[rank]!++;
    this.handed++;
    this.turn = (this.turn + 1) % this.live.length;
  }

  /**
   * The current reader leaves the turn; the next one's turn begins. Written down in `left` unless its stream just ended
   * (`ended`: a split read for a set number of epochs, or a closed one), which a resumed stream meets again by itself.
   */
  leave(ended = false): void {
    const rank = this.current;
    if (rank === undefined) throw new Error('no reader left');
    if (!ended) this.left.push({ rank, batch: this.handed });
    this.live.splice(this.turn, 1);
    if (this.turn >= this.live.length) this.turn = 0;
  }

  private skipTo(batches: number): void {
    while (this.handed < batches) this.took();
  }
}
