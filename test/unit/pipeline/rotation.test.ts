// Whose turn it is among a run's readers (pipeline/rotation.ts): the order a
// resumed run takes its batches in must be the uninterrupted run's.
import { describe, expect, it } from 'vitest';
import { Rotation } from '../../../src/pipeline/rotation.js';

/** The ranks that give batches 0..batches-1, with `leaves` (rank -> batch asked for when it leaves) happening live. */
function live(readers: number, batches: number, leaves: Map<number, number>): { order: number[]; rotation: Rotation } {
  const rotation = new Rotation(readers);
  const order: number[] = [];
  for (let b = 0; b < batches; b++) {
    while (leaves.get(rotation.current!) === b) rotation.leave();
    order.push(rotation.current!);
    rotation.took();
  }
  expect(rotation.left.filter((l) => l.batch < batches)).toHaveLength([...leaves.values()].filter((b) => b < batches).length); // each one happened
  return { order, rotation };
}

describe('Rotation', () => {
  it('takes one batch from each reader in turn, by rank', () => {
    expect(live(3, 7, new Map()).order).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('a reader that leaves is passed over from then on; two may leave at the same batch', () => {
    const { order, rotation } = live(
      4,
      12,
      new Map([
        [1, 5],
        [2, 5],
        [0, 8],
      ]),
    );
    expect(order).toEqual([0, 1, 2, 3, 0, 3, 0, 3, 3, 3, 3, 3]);
    expect(rotation.left).toEqual([
      { rank: 1, batch: 5 },
      { rank: 2, batch: 5 },
      { rank: 0, batch: 8 },
    ]);
    expect(rotation.taken).toEqual([3, 1, 1, 7]);
  });

  it('replayed to any batch, it stands where the live one stood: the same counts and the same next reader', () => {
    const leaves = new Map([
      [2, 7],
      [0, 9],
      [4, 20],
    ]);
    const all = live(5, 40, leaves);
    for (let at = 0; at <= 40; at++) {
      const before = live(5, at, leaves).rotation;
      const replayed = Rotation.replay(
        5,
        all.rotation.left.filter((l) => l.batch <= at),
        at,
      );
      expect(replayed.taken).toEqual(before.taken);
      // The next reader: the live run's (a reader that leaves just at this batch has left in both).
      expect(replayed.current).toBe(all.order[at] ?? before.current);
    }
  });

  it('with no reader left out, batches taken are the plain turn: ceil((batches - rank) / readers)', () => {
    const r = Rotation.replay(3, [], 10);
    expect(r.taken).toEqual([4, 3, 3]);
    expect(r.current).toBe(1);
  });

  it('refuses a record of leaves that could not have happened', () => {
    expect(() => Rotation.replay(3, [{ rank: 1, batch: 3 }], 10)).toThrow("reader 2 left at batch 3, when it was reader 1's turn");
    expect(() =>
      Rotation.replay(
        3,
        [
          { rank: 1, batch: 4 },
          { rank: 0, batch: 2 },
        ],
        10,
      ),
    ).toThrow('reader 1 left at batch 2, out of order');
    expect(() => Rotation.replay(3, [{ rank: 1, batch: 11 }], 10)).toThrow('out of order');
    expect(() =>
      Rotation.replay(
        2,
        [
          { rank: 0, batch: 0 },
          { rank: 1, batch: 0 },
        ],
        3,
      ),
    ).toThrow('no reader left');
  });
});
