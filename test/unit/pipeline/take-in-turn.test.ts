// Several readers as one stream (takeInTurn, src/pipeline/client.ts), with
// stand-in readers: the turn, a reader that runs dry, and the counters.
import type { Remote } from 'comlink';
import { describe, expect, it } from 'vitest';
import type { Batch, PipelineApi, PipelineStats } from '../../../src/pipeline/api.js';
import { emptyStats } from '../../../src/pipeline/base.js';
import { takeInTurn } from '../../../src/pipeline/client.js';
import { Rotation } from '../../../src/pipeline/rotation.js';

/**
 * A reader that gives `batches` batches (ids rank*100 + i), then runs dry. Its clock stands still once it has. With
 * `handsStats`, each batch carries the reader's counters as the worker's do, and one more record fails after the last.
 */
function reader(rank: number, batches: number, stats: Partial<PipelineStats>, handsStats = false) {
  let given = 0;
  const counters = { ...emptyStats(), ...stats };
  const r = {
    asked: 0,
    statsAsked: 0,
    async next(): Promise<Batch | null> {
      r.asked++;
      if (given >= batches) {
        if (handsStats) counters.recordsSkipped = 1;
        throw Object.assign(new Error(`partition ${rank + 1}: its one record failed`), { name: 'NoReadableData' });
      }
      const id = rank * 100 + given++;
      counters.batchesEmitted = given;
      const batch: Batch = { kind: 'image', x: new Float32Array(1), y: Int32Array.of(0), ids: Int32Array.of(id), size: 1, index: id };
      return handsStats ? { ...batch, stats: { ...counters } } : batch;
    },
    async stats(): Promise<PipelineStats> {
      r.statsAsked++;
      return { ...counters };
    },
  };
  return r;
}
const remote = (r: ReturnType<typeof reader>) => r as unknown as Remote<PipelineApi>;

/** Every batch of the stream until it ends or fails: their ids, and the failure if any. */
async function drain(stream: { next(): Promise<Batch | null> }): Promise<{ ids: number[]; failure?: string }> {
  const ids: number[] = [];
  try {
    for (let b = await stream.next(); b; b = await stream.next()) ids.push(b.ids[0]!);
  } catch (err) {
    return { ids, failure: (err as Error).message };
  }
  return { ids };
}

describe('takeInTurn', () => {
  it('takes one batch from each reader in turn; one that runs dry leaves, the others go on; the last one fails the stream', async () => {
    const left: string[] = [];
    const apis = [reader(0, 3, {}), reader(1, 1, {}), reader(2, 2, {})].map(remote);
    const stream = takeInTurn(apis, new Rotation(3), (rank, reason) => left.push(`${rank}: ${reason}`));
    const ids: number[] = [];
    const stamped: number[] = [];
    await expect(
      (async () => {
        for (;;) {
          const batch = (await stream.next())!;
          ids.push(batch.ids[0]!);
          if (batch.readyAt !== undefined) stamped.push(batch.ids[0]!);
        }
      })(),
    ).rejects.toThrow('partition 1: its one record failed');
    expect(ids).toEqual([0, 100, 200, 1, 201, 2]);
    // The batch taken after a reader left counts as ready only from then: the wait for the failed reads was a wait for data.
    expect(stamped).toEqual([201]);
    expect(left).toEqual(['1: partition 2: its one record failed', '2: partition 3: its one record failed']);
  });

  it('counts and clocks are summed over every reader; the epoch, the readers and the limit in force come from those still reading', async () => {
    const apis = [
      reader(0, 9, { epoch: 3, requestsInFlight: 4, loopBusyMs: 100, bytesFetched: 10 }),
      reader(1, 0, { epoch: 1, requestsInFlight: 4, loopBusyMs: 50, bytesFetched: 5 }),
    ].map(remote);
    const rotation = new Rotation(2);
    const stream = takeInTurn(apis, rotation, () => undefined);
    expect((await stream.stats()).epoch).toBe(1);
    await stream.next();
    await stream.next(); // reader 2 runs dry here; reader 1 gives this batch
    expect(rotation.reading).toEqual([0]);
    const s = await stream.stats();
    expect(s).toMatchObject({ epoch: 3, readers: 1, requestsInFlight: 4, loopBusyMs: 150, bytesFetched: 15 });
  });

  it('asks each reader ahead of its turn and still hands the batches out in the same order, failure included', async () => {
    const readers = () => [reader(0, 5, {}), reader(1, 2, {}), reader(2, 4, {})];
    const one = await drain(takeInTurn(readers().map(remote), new Rotation(3), () => undefined, 1));
    const ahead = readers();
    const four = await drain(takeInTurn(ahead.map(remote), new Rotation(3), () => undefined, 4));
    expect(four).toEqual(one);
    expect(one).toEqual({ ids: [0, 100, 200, 1, 101, 201, 2, 202, 3, 203, 4], failure: 'partition 1: its one record failed' });
    // Reader 1 (5 batches, then its failure) was asked for them before each was its turn: 4 in flight, never more.
    expect(ahead[0]!.asked).toBeGreaterThanOrEqual(6);
    expect(ahead[0]!.asked).toBeLessThanOrEqual(6 + 3);
  });

  it('sums the counters each batch came with, asking a reader only until it has handed one over, and once more when it leaves', async () => {
    const readers = [reader(0, 4, { bytesFetched: 10 }, true), reader(1, 1, { bytesFetched: 5 }, true)];
    const stream = takeInTurn(readers.map(remote), new Rotation(2), () => undefined, 2);
    await stream.next();
    expect(readers.map((r) => r.asked)).toEqual([2, 0]); // the first reader asked two ahead; the second not before its turn
    await stream.next();
    const asked = readers.map((r) => r.statsAsked);
    expect(await stream.stats()).toMatchObject({ batchesEmitted: 2, bytesFetched: 15, recordsSkipped: 0 });
    expect(readers.map((r) => r.statsAsked)).toEqual(asked);
    await stream.next();
    await stream.next(); // reader 2's turn: it runs dry, and the record that failed after its last batch is counted
    expect(await stream.stats()).toMatchObject({ batchesEmitted: 4, recordsSkipped: 1, readers: 1 });
  });

  it('totals, as a run ends, ask every reader afresh: what they read ahead of the last batch counts; a reader that cannot answer gives its last', async () => {
    const readers = [reader(0, 9, { bytesFetched: 10 }, true), reader(1, 9, { bytesFetched: 5 }, true)];
    const stream = takeInTurn(readers.map(remote), new Rotation(2), () => undefined, 3);
    await stream.next();
    await stream.next();
    // Each reader has been asked three ahead: it made (and would have fetched) batches the trainer never took.
    expect(await stream.stats()).toMatchObject({ batchesEmitted: 2 });
    expect(await stream.totals()).toMatchObject({ batchesEmitted: 6, bytesFetched: 15 });
    readers[1]!.stats = () => Promise.reject(new Error('worker gone'));
    expect(await stream.totals()).toMatchObject({ batchesEmitted: 4 }); // reader 2's count as its batch came: 1
  });

  it('asks a reader that left before a resume for its counters once, not every step; refuses fewer than one ask ahead', async () => {
    const readers = [reader(0, 9, { bytesFetched: 10 }, true), reader(1, 0, { bytesFetched: 5, recordsSkipped: 1 }, true)];
    const stream = takeInTurn(readers.map(remote), Rotation.replay(2, [{ rank: 1, batch: 1 }], 1), () => undefined);
    for (let i = 0; i < 3; i++) {
      await stream.next();
      expect(await stream.stats()).toMatchObject({ batchesEmitted: i + 1, bytesFetched: 15, recordsSkipped: 1, readers: 1 });
    }
    expect(readers[1]!.statsAsked).toBe(1);
    expect(readers[1]!.asked).toBe(0);
    expect(() => takeInTurn(readers.map(remote), new Rotation(2), () => undefined, 0)).toThrow('asks ahead must be a whole number >= 1, got 0');
  });
});
