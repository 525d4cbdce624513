// How long the link was busy with a pipeline's reads, as the stage before the
// trainer: the time it would take to read the same bytes again at full
// concurrency. Two parts behave differently when reads overlap:
// - waiting for an answer (latency, server time) overlaps perfectly across the
//   read slots, so each read's wait counts once per slot (wait / slots);
// - bodies share the link's bandwidth, so bodies in flight at the same time
//   count once: the union of their intervals.
// Summing whole read times over the slots (the old measure) reads a shared link
// as 4x faster whenever the trainer is the slow side and only one read is out,
// which is exactly when echoing is on: the echo advice then undid itself.

export interface LinkRead {
  /** An answer's headers arrived: from here its body shares the link. */
  headers(): void;
  /** The try failed: back to waiting (a retry, its backoff included, is wait again). */
  retry(): void;
  /** The read ended, by its last byte or by failing. */
  done(): void;
}

export class LinkClock {
  private bodies = 0;
  private bodiesSince = 0;
  private bodyMs = 0;
  private waitMs = 0;

  constructor(
    private readonly slots: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Milliseconds of link time so far (a read still in its body counts up to now). */
  busyMs(): number {
    return this.waitMs + this.bodyMs + (this.bodies > 0 ? this.now() - this.bodiesSince : 0);
  }

  /** One Range request, from when it is sent. */
  read(): LinkRead {
    let waitingSince: number | undefined = this.now();
    const toBody = () => {
      if (waitingSince === undefined) return;
      this.waitMs += (this.now() - waitingSince) / this.slots;
      waitingSince = undefined;
      if (this.bodies++ === 0) this.bodiesSince = this.now();
    };
    const leaveBody = () => {
      if (waitingSince !== undefined) return;
      if (--this.bodies === 0) this.bodyMs += this.now() - this.bodiesSince;
    };
    let ended = false;
    return {
      headers: () => {
        if (!ended) toBody();
      },
      retry: () => {
        if (ended) return;
        leaveBody();
        waitingSince ??= this.now();
      },
      done: () => {
        if (ended) return;
        ended = true;
        if (waitingSince === undefined) leaveBody();
        else this.waitMs += (this.now() - waitingSince) / this.slots;
      },
    };
  }
}
