// The queue between a pipeline's batch loop and the asks for batches
// (src/pipeline/queue.ts): bounded, and fair to asks that wait together.
import { describe, expect, it } from 'vitest';
import { BoundedQueue } from '../../../src/pipeline/queue.js';

describe('BoundedQueue', () => {
  it('answers pulls that wait together in the order they were made', async () => {
    const q = new BoundedQueue<number>(2);
    const pulls = [q.pull(), q.pull(), q.pull()];
    for (const n of [1, 2, 3]) await q.push(n);
    expect((await Promise.all(pulls)).map((r) => r.value)).toEqual([1, 2, 3]);
  });

  it('holds the producer at capacity and lets it on when a pull makes room', async () => {
    const q = new BoundedQueue<number>(2);
    await q.push(1);
    let pushed = false;
    const second = q.push(2).then(() => (pushed = true));
    await Promise.resolve();
    expect(pushed).toBe(false);
    expect((await q.pull()).value).toBe(1);
    await second;
    expect(pushed).toBe(true);
  });

  it('ends every waiting pull when closed: done, or the failure for each of them and every later pull', async () => {
    const ended = new BoundedQueue<number>(1);
    const waiting = [ended.pull(), ended.pull()];
    ended.close();
    expect((await Promise.all(waiting)).map((r) => r.done)).toEqual([true, true]);

    const failed = new BoundedQueue<number>(1);
    const failing = [failed.pull(), failed.pull()];
    failed.close(new Error('every record failed'));
    for (const pull of [...failing, failed.pull()]) await expect(pull).rejects.toThrow('every record failed');
  });
});
