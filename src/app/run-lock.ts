// One tab trains a run at a time. The tab that trains a run holds a Web Lock named after it until the run has ended and
// written its last checkpoint; the browser also drops the lock when the tab closes or crashes. So another tab can tell a
// saved run that is still training (paused included) from one left behind, and not offer to continue a second copy of it
// (both wrote one record and one checkpoint, the last writer winning).

const lockName = (runId: string) => `bytelab-run:${runId}`;
/** Runs this tab holds the lock of (a count: a run continued here may take it again before the last hold is let go). */
const heldHere = new Map<string, number>();

/** A lock found taken is asked for again this many times, this far apart, while no tab holds it exclusively (holdRunLock). */
const RETRIES = 5;
const RETRY_MS = 40;

/**
 * Holds the run's lock until `until` settles: true once held, false if another tab holds it (that tab trains the run; a
 * shared hold, a tab waiting for the run to end, is let go at once and asked past, RETRIES times). Two
 * tabs pressing Continue together both read the run as free; only one is granted its lock. A run this tab still holds (it
 * continues a run it has just stopped, whose last checkpoint is being written) waits for its own hold to end: no other tab
 * is granted the lock in between, since theirs are only taken if free.
 */
export function holdRunLock(runId: string, until: Promise<unknown>): Promise<boolean> {
  if (!navigator.locks) return Promise.resolve(true);
  const name = lockName(runId);
  const ours = heldHere.has(runId);
  heldHere.set(runId, (heldHere.get(runId) ?? 0) + 1);
  const release = () => {
    const n = (heldHere.get(runId) ?? 1) - 1;
    if (n > 0) heldHere.set(runId, n);
    else heldHere.delete(runId);
  };
  return new Promise<boolean>((granted) => {
    const ask = async (retries: number): Promise<void> => {
      const taken = await navigator.locks.request(name, { ifAvailable: !ours }, (lock) => {
        if (!lock) return true;
        granted(true);
        return until.then(
          () => false,
          () => false,
        );
      });
      if (!taken) return;
      // Taken for a moment by a tab that waited for the run to end (whenFreed's shared hold, let go at once), not by one
      // that trains it: asked again (before, such a Continue was refused as "continued in another tab just now").
      if (retries > 0 && !(await heldExclusively(name))) {
        await new Promise((r) => setTimeout(r, RETRY_MS));
        return ask(retries - 1);
      }
      granted(false);
    };
    // A browser that refuses the request (no lock manager for this document): the run goes on, as without Web Locks.
    ask(RETRIES).then(release, () => {
      release();
      granted(true);
    });
    // Ours: queued behind our own hold, and the run goes on meanwhile (nothing can take the lock between the two).
    if (ours) granted(true);
  });
}

/** Whether a tab holds the lock to train the run, or waits for it to (a tab continuing its own run, queued behind its hold). */
async function heldExclusively(name: string): Promise<boolean> {
  const { held = [], pending = [] } = await navigator.locks.query();
  return [...held, ...pending].some((l) => l.name === name && l.mode === 'exclusive');
}

/** Whether another tab of this lab trains the run now. */
export async function trainedElsewhere(runId: string): Promise<boolean> {
  if (!navigator.locks || heldHere.has(runId)) return false;
  return heldExclusively(lockName(runId)); // a shared hold is a tab waiting for the run to end (whenFreed), not training it
}

/** Settles once no tab holds the run's lock (a shared request waits for the training tab's exclusive hold to end). */
export async function whenFreed(runId: string): Promise<void> {
  if (navigator.locks) await navigator.locks.request(lockName(runId), { mode: 'shared' }, () => undefined);
}
