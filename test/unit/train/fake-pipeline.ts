// A stand-in for the pipeline worker, for driving LabSession and Trainer in
// Node on the tfjs CPU backend (no worker, no WebGPU there). It serves a tiny
// learnable image task: 4x4 gray images, label 1 when the image is bright.
// Delays and hangs are settable, so tests can stop a run mid-open, mid-wait or
// mid-evaluation. Everything it was asked is recorded.
import type { Remote } from 'comlink';
import type { Batch, DatasetInfo, PipelineApi, PipelineEvent, PipelineOptions, PipelineStats } from '../../../src/pipeline/api.js';
import type { PipelineHandle } from '../../../src/pipeline/client.js';
import { emptyStats } from '../../../src/pipeline/base.js';
import { hash32, seededRandom } from '../../../src/shared/random.js';

export const SIDE = 4;

export const fakeInfo = (examples: number): DatasetInfo => ({
  kind: 'image',
  name: 'fake bright/dark',
  classes: ['dark', 'bright'],
  inputShape: [SIDE, SIDE, 1],
  image: { width: SIDE, height: SIDE, channels: 1 },
  fidelityLevels: 6,
  examples,
  records: 8,
  bytesPerLevel: [1, 2, 3, 4, 5, 6].map((g) => g * examples),
});

export interface FakeBehaviour {
  /** ms before open() answers; Infinity never answers (until cancel). */
  openMs?: number;
  /** ms before each next() answers; Infinity never answers (until cancel). */
  nextMs?: number;
  /** Batches the split yields before its stream ends (default: forever for train, 4 for test). */
  batches?: number;
  /** open() rejects with this message. */
  openError?: string;
  /** next() never answers (until cancel) after this many batches: a link that stalls. */
  hangAfter?: number;
  /** next() answers once `ms` late after this many batches, then at nextMs again: a link that stalls and comes back. */
  stallAt?: { batches: number; ms: number };
  /** next() rejects with this message (and error name) after this many batches. */
  failAfter?: { batches: number; message: string; name?: string };
}

export interface FakeWorker extends PipelineHandle {
  name: string;
  calls: string[];
  options: PipelineOptions | undefined;
  terminated: boolean;
  cancelled: boolean;
  stats: PipelineStats;
}

/** Resolves after ms, or never for Infinity; rejects/ends early when `cancelled` resolves. */
function delay(ms: number, cancelled: Promise<void>): Promise<'done' | 'cancelled'> {
  const wait = Number.isFinite(ms) ? new Promise<'done'>((r) => setTimeout(() => r('done'), ms)) : new Promise<'done'>(() => undefined);
  return Promise.race([wait, cancelled.then(() => 'cancelled' as const)]);
}

export function fakePipelines(behaviour: (name: string) => FakeBehaviour = () => ({})) {
  const workers: FakeWorker[] = [];
  const start = (name: string): PipelineHandle => {
    const b = behaviour(name);
    let cancel!: () => void;
    const cancelled = new Promise<void>((r) => (cancel = r));
    let served = 0;
    let onEvent: ((e: PipelineEvent) => void) | undefined;
    let turn: Promise<void> = Promise.resolve();
    const w: FakeWorker = {
      name,
      calls: [],
      options: undefined,
      terminated: false,
      cancelled: false,
      stats: emptyStats(),
      terminate() {
        w.terminated = true;
        cancel();
      },
      api: undefined as unknown as Remote<PipelineApi>,
    };
    const serve = async (): Promise<Batch | null> => {
      const limit = b.batches ?? (w.options?.split === 'test' ? 4 : Infinity);
      if (b.failAfter && served >= b.failAfter.batches) throw Object.assign(new Error(b.failAfter.message), { name: b.failAfter.name ?? 'Error' });
      if (served >= limit) return null;
      const wait = b.hangAfter !== undefined && served >= b.hangAfter ? Infinity : served === b.stallAt?.batches ? b.stallAt.ms : (b.nextMs ?? 0);
      if ((await delay(wait, cancelled)) === 'cancelled' || w.terminated) return null;
      const size = w.options!.batchSize;
      const random = seededRandom(hash32(name, served));
      const x = new Float32Array(size * SIDE * SIDE);
      const y = new Int32Array(size);
      const ids = Int32Array.from({ length: size }, (_, i) => served * size + i);
      for (let i = 0; i < size; i++) {
        y[i] = random() < 0.5 ? 0 : 1;
        for (let p = 0; p < SIDE * SIDE; p++) x[i * SIDE * SIDE + p] = (y[i] ? 0.6 : 0.1) + 0.3 * random();
      }
      served++;
      // As if every batch were fresh and took nextMs upstream.
      w.stats.examplesRead += size;
      w.stats.loopBusyMs += b.nextMs ?? 0;
      w.stats.batchesEmitted++;
      w.stats.examplesEmitted += size;
      w.stats.bytesFetched += size * 10;
      onEvent?.({
        type: 'fetch',
        record: `${w.options!.split}-${served}`,
        level: w.options!.fidelity,
        requested: 10 * size,
        cached: 0,
        received: 10 * size,
        status: 206,
        examples: size,
        ms: 1,
        endedAt: performance.timeOrigin + performance.now(),
      });
      return { kind: 'image', x, y, ids, size, index: served - 1, stats: { ...w.stats } }; // the counters ride on it, as the worker's do
    };
    const api = {
      async open(options: PipelineOptions, listener: (e: PipelineEvent) => void): Promise<DatasetInfo> {
        w.calls.push(`open ${options.split}`);
        w.options = { ...options };
        served = options.resume?.batches ?? 0; // the fake's stream is a function of the batch index, so resuming is skipping
        onEvent = listener;
        if ((await delay(b.openMs ?? 0, cancelled)) === 'cancelled') throw new Error('cancelled while opening');
        if (b.openError) throw new Error(b.openError);
        return fakeInfo(options.split === 'test' ? 64 : 1024);
      },
      // Asks that arrive together (the stream asks ahead) are answered one after another, in order, as the worker's queue does.
      next(): Promise<Batch | null> {
        const answer = turn.then(serve);
        turn = answer.then(
          () => undefined,
          () => undefined,
        );
        return answer;
      },
      async setFidelity(level: number) {
        w.calls.push(`setFidelity ${level}`);
      },
      async setEchoFactor(e: number) {
        w.calls.push(`setEchoFactor ${e}`);
      },
      async setEchoMode(mode: string) {
        w.calls.push(`setEchoMode ${mode}`);
      },
      async setShuffleBuffer(size: number) {
        w.calls.push(`setShuffleBuffer ${size}`);
      },
      async setRequestsInFlight(n: number) {
        w.calls.push(`setRequestsInFlight ${n}`);
      },
      async stats() {
        return { ...w.stats };
      },
      async tape() {
        return { channels: {}, records: served, outcomes: [] };
      },
      async flushEvents() {}, // the fake's events are called at once, not sent over a port
      async samples() {
        return undefined; // the fake's images are made per batch, not decoded from records
      },
      async cancel() {
        w.calls.push('cancel');
        w.cancelled = true;
        cancel();
      },
      async close() {
        w.calls.push('close');
      },
    };
    w.api = api as unknown as Remote<PipelineApi>;
    workers.push(w);
    return w;
  };
  return { start, workers };
}
