// Page side of the pipeline: starts a worker and returns its typed comlink proxy.
import * as Comlink from 'comlink';
import type { Batch, PipelineApi, PipelineStats } from './api.js';
import type { Rotation } from './rotation.js';

export interface PipelineHandle {
  api: Comlink.Remote<PipelineApi>;
  terminate(): void;
}

let live = 0;

/** Pipeline workers started and not yet terminated (the tests check that one run holds only its own). */
export function liveWorkerCount(): number {
  return live;
}

/**
 * A comlink proxy of `worker` whose top-level method calls (api.open(...)) fail, rather than wait forever, when its script
 * never ran; read no plain property or nested member through it. A worker whose script
 * cannot be fetched (the lab's server down as a run starts) fires "error" and never answers, and comlink's calls to it never
 * settle (the run sat at "loading", step 0, even once the server was back). An error after the worker has answered (an
 * uncaught one in its code) leaves it to the calls themselves.
 */
export function wrapWorker<T>(worker: Worker, what: string): Comlink.Remote<T> {
  const api = Comlink.wrap<T>(worker);
  let answered = false;
  worker.addEventListener('message', () => (answered = true), { once: true });
  const failed = new Promise<never>((_, reject) =>
    worker.addEventListener('error', (e) => {
      // A script that did not load fires a bare Event; an uncaught error in the worker's code an ErrorEvent with its message.
      if (!answered && !(e instanceof ErrorEvent && e.message)) reject(new Error(`${what} could not start: its script did not load (is the lab's server up?)`));
    }),
  );
  failed.catch(() => undefined); // rejected with no call waiting
  return new Proxy(api, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || typeof value !== 'function') return value;
      return (...args: unknown[]) => Promise.race([(value as (...a: unknown[]) => Promise<unknown>)(...args), failed]);
    },
  });
}

export function startPipelineWorker(name: string): PipelineHandle {
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name });
  const api = wrapWorker<PipelineApi>(worker, 'the pipeline worker');
  live++;
  let terminated = false;
  return {
    api,
    terminate() {
      if (terminated) return;
      terminated = true;
      live--;
      api[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}

/**
 * Asks kept in flight, over all readers (the batch being waited for included). A worker answers between its slices of decoding
 * (src/shared/time-slice.ts, about 4 ms), so one ask at a time left a trainer with 1-3 ms steps waiting for most of a slice
 * each record; asks made ahead are answered together after the slice and cover it. bench/handover.ts, steps/s over one ask
 * (median of 4 rounds): 4 ahead 1.23x at 1 ms steps and 1.15x at 3 ms on flights, 1.12x and 1.19x on Fashion-MNIST; 8 ahead
 * 1.26x, 1.19x, 1.18x, 1.17x, within the spread of 4, for twice the batches held and a live control felt later.
 */
export const ASKS_AHEAD = 4;

/** Asks each of `readers` readers keeps in flight: ASKS_AHEAD in all, as each is asked only every `readers` steps, and at least 2. */
export const asksAhead = (readers: number): number => Math.max(2, Math.ceil(ASKS_AHEAD / readers));

/**
 * Several pipeline workers reading the shares of one split (PipelineOptions.partition)
 * as one stream: batches taken from each in turn (`rotation`), so the order is
 * deterministic. A worker whose stream ended, or that ran dry (NoReadableData),
 * leaves the turn and `onLeave` hears why; the last one's failure is the stream's.
 * Each reader is asked `ahead` batches before its turn comes (asksAhead); what it
 * answers is taken in turn all the same, so asking ahead changes no batch's place.
 * Counters are summed over all of them, each as it stood when its reader last handed over a batch (Batch.stats) or left;
 * the epoch, the readers and the reads-in-flight limit are those still reading.
 */
export function takeInTurn(
  apis: Comlink.Remote<PipelineApi>[],
  rotation: Rotation,
  onLeave: (rank: number, reason: string) => void,
  ahead = asksAhead(apis.length),
): { next(): Promise<Batch | null>; stats(): Promise<PipelineStats>; totals(): Promise<PipelineStats> } {
  if (!(Number.isInteger(ahead) && ahead >= 1)) throw new RangeError(`asks ahead must be a whole number >= 1, got ${ahead}`);
  const asked: Promise<Batch | null>[][] = apis.map(() => []);
  /** Each reader's counters as it last handed over a batch or left; asked for until then. */
  const latest: (PipelineStats | undefined)[] = apis.map(() => undefined);
  const take = (rank: number): Promise<Batch | null> => {
    const queue = asked[rank]!;
    while (queue.length < ahead) {
      const answer = apis[rank]!.next();
      answer.catch(() => undefined); // an ask left behind by a reader that left, or by a stop, may fail unobserved
      queue.push(answer);
    }
    return queue.shift()!;
  };
  /** A reader that leaves: its asks ahead are dropped, and its counters read once more (its failed reads came after its last batch). */
  const leave = async (rank: number) => {
    asked[rank] = [];
    latest[rank] = await apis[rank]!.stats().catch(() => latest[rank]); // a reader that cannot answer still leaves
  };
  /** Counters of a reader with none kept; kept from now on if it is out of the turn (a resumed run's reader that left before). */
  const ask = async (rank: number) => {
    const s = await apis[rank]!.stats();
    if (!rotation.reading.includes(rank)) latest[rank] = s;
    return s;
  };
  return {
    async next() {
      // Set when a reader leaves: the batch then taken from the next was ready only as far as this wait goes (Batch.readyAt).
      let leftAt = 0;
      for (let rank = rotation.current; rank !== undefined; rank = rotation.current) {
        let batch: Batch | null;
        try {
          batch = await take(rank);
        } catch (err) {
          if ((err as Error).name !== 'NoReadableData' || rotation.reading.length === 1) throw err;
          rotation.leave();
          leftAt = performance.timeOrigin + performance.now();
          await leave(rank);
          onLeave(rank, (err as Error).message);
          continue;
        }
        if (!batch) {
          rotation.leave(true);
          await leave(rank);
          continue;
        }
        rotation.took();
        if (batch.stats) latest[rank] = batch.stats;
        if (leftAt) batch.readyAt = Math.max(batch.readyAt ?? 0, leftAt);
        return batch;
      }
      return null;
    },
    async stats() {
      return summed(await Promise.all(apis.map((_, rank) => latest[rank] ?? ask(rank))));
    },
    // As the run ends: each reader asked afresh, so records read ahead of the last batch (and reads that failed there) count.
    async totals() {
      return summed(await Promise.all(apis.map((api, rank) => api.stats().catch((err) => latest[rank] ?? Promise.reject(err)))));
    },
  };
  function summed(all: PipelineStats[]): PipelineStats {
    const sum = { ...all[0]! };
    for (const s of all.slice(1)) {
      for (const key of Object.keys(sum) as (keyof PipelineStats)[]) if (key !== 'epoch') sum[key] += s[key];
    }
    // What is in force now comes from the readers still reading; the counts and clocks (stopped when a reader left) from all.
    const reading = (rotation.reading.length > 0 ? rotation.reading : apis.map((_, rank) => rank)).map((rank) => all[rank]!);
    sum.epoch = Math.min(...reading.map((s) => s.epoch));
    sum.readers = reading.length;
    sum.requestsInFlight = reading.reduce((n, s) => n + s.requestsInFlight, 0);
    return sum;
  }
}
