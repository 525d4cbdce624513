// Several readers as one stream (takeInTurn, src/pipeline/client.ts), with
// stand-in readers: the turn, a reader that runs dry, and the counters.
import type { Remote } from 'comlink';
import { describe, expect, it } from 'vitest';
import type { Batch, PipelineApi, PipelineStats } from '../../../src/pipeline/api.js';
import { emptyStats } from '../../../src/pipeline/base.js';
import { takeInTurn } from '../../../src/pipeline/client.js';
import { Rotation } from '../../../src/pipeline/rotation.js';

/** A reader that gives `batches` batches (ids rank*100 + i), then runs dry. Its clock stands still once it has. */
function reader(rank: number, batches: number, stats: Partial<PipelineStats>) {
  let given = 0;
  return {
    async next(): Promise<Batch | null> {
      if (given >= batches) throw Object.assign(new Error(`partition ${rank + 1}: its one record failed`), { name: 'NoReadableData' });
      const id = rank * 100 + given++;
      return { kind: 'image', x: new Float32Array(1), y: Int32Array.of(0), ids: Int32Array.of(id), size: 1, index: id };
    },
    async stats(): Promise<PipelineStats> {
      return { ...emptyStats(), ...stats };
    },
  } as unknown as Remote<PipelineApi>;
}

describe('takeInTurn', () => {
  it('takes one batch from each reader in turn; one that runs dry leaves, the others go on; the last one fails the stream', async () => {
    const left: string[] = [];
    const apis = [reader(0, 3, {}), reader(1, 1, {}), reader(2, 2, {})];
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
    ];
    const rotation = new Rotation(2);
    const stream = takeInTurn(apis, rotation, () => undefined);
    expect((await stream.stats()).epoch).toBe(1);
    await stream.next();
    await stream.next(); // reader 2 runs dry here; reader 1 gives this batch
    expect(rotation.reading).toEqual([0]);
    const s = await stream.stats();
    expect(s).toMatchObject({ epoch: 3, readers: 1, requestsInFlight: 4, loopBusyMs: 150, bytesFetched: 15 });
  });
});
