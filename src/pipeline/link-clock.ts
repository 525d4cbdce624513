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
// It also keeps how a whole read splits into waiting and body, for the ramp of
// reads in flight (base.ts): while one read waits for its answer, others' bodies
// can use the link, so about 1 + wait / body reads keep it busy.

export interface LinkRead {
  /** An answer's headers arrived: from here its body shares the link. */
  headers(): void;
  /** The try failed: back to waiting (a retry, its backoff included, is wait again). */
  retry(): void;
  /** The read ended with its last byte. */
  done(): void;
  /** The read ended by failing: its times say nothing of the link. */
  failed(): void;
}

/**
 * Reads in the running means of `readsToFill`: the latest count most. (They matter only while the ramp runs, in the first
 * records of each open or resume: past `requestsInFlight` records arrived the ramp allows them all anyway.)
 */
const MEAN_OVER = 8;

export class LinkClock {
  private bodies = 0;
  private bodiesSince = 0;
  private bodyMs = 0;
  private waitMs = 0;
  /** Running means over the latest whole reads that never retried: ms to the answer's headers, ms of body. */
  private meanWait = 0;
  private meanBody = 0;
  private reads = 0;

  /** Reads sent and not yet ended. */
  readsOut = 0;

  /** `slots`: the reads in flight allowed (the pipeline sets it again when the control changes). */
  constructor(
    public slots = 1,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Milliseconds of link time so far (a read still in its body counts up to now). */
  busyMs(): number {
    return this.waitMs + this.bodyMs + (this.bodies > 0 ? this.now() - this.bodiesSince : 0);
  }

  /**
   * How many reads at once keep the link busy, by the latest whole reads: 1 +
   * wait / body, rounded. 1 on a link that bandwidth bounds (a body takes
   * far longer than the wait, and more reads would only share it); more where
   * answers are slow to start and fast once going (a distant CDN); 1 until a
   * read has ended.
   */
  readsToFill(): number {
    if (this.reads === 0) return 1;
    // A body that came with its headers (too fast for the clock): as many as are allowed, unless nothing took time at all.
    if (this.meanBody <= 0) return this.meanWait > 0 ? Number.POSITIVE_INFINITY : 1;
    return Math.round(1 + this.meanWait / this.meanBody);
  }

  /** One Range request, from when it is sent. */
  read(): LinkRead {
    const sentAt = this.now();
    this.readsOut++;
    let headersAt: number | undefined;
    let retried = false;
    let waitingSince: number | undefined = sentAt;
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
    const end = (whole: boolean) => {
      if (ended) return;
      ended = true;
      this.readsOut--;
      if (waitingSince === undefined) leaveBody();
      else this.waitMs += (this.now() - waitingSince) / this.slots;
      if (whole && !retried && headersAt !== undefined) this.sample(headersAt - sentAt, this.now() - headersAt);
    };
    return {
      headers: () => {
        if (ended) return;
        headersAt ??= this.now();
        toBody();
      },
      retry: () => {
        if (ended) return;
        retried = true;
        leaveBody();
        waitingSince ??= this.now();
      },
      done: () => end(true),
      failed: () => end(false),
    };
  }

  private sample(waitMs: number, bodyMs: number): void {
    const n = Math.min(++this.reads, MEAN_OVER);
    this.meanWait += (waitMs - this.meanWait) / n;
    this.meanBody += (bodyMs - this.meanBody) / n;
  }
}
