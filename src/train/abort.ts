// Stop must be bounded: every await of the run (a worker call, a GPU readback)
// is raced with the run's AbortSignal, so a stop never waits on work it no
// longer wants. The abandoned promise still settles on its own.

export class RunAbortedError extends Error {
  override name = 'AbortError';
  constructor() {
    super('the run was stopped');
  }
}

/** Resolves like `promise`, or rejects with RunAbortedError as soon as `signal` aborts. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined); // settles unobserved
    return Promise.reject(new RunAbortedError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new RunAbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
