// Checkpoints read back from storage: checked, and those an older lab saved brought up to this one's format.
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_VERSION, validateCheckpoint, type Checkpoint } from '../../../src/train/checkpoint.js';
import type { TapeState } from '../../../src/pipeline/tape.js';

const imageTape = (shuffle: [number, number][], reads: number): TapeState => ({
  channels: { fidelity: { reads: 9, changes: [[0, 6]] }, shuffleBuffer: { reads, changes: shuffle } },
  records: 9,
  outcomes: [],
});

const saved = (version: number, tapes: TapeState[]) =>
  ({
    version,
    runId: 'r',
    savedAt: 0,
    config: { readers: tapes.length },
    step: 40,
    tapes,
    model: { weights: [{ name: 'w', shape: [1], data: new Float32Array(1) }] },
  }) as unknown as Checkpoint;

describe('checkpoints read back', () => {
  it('a version 1 image tape, which read the shuffle buffer once when its stages were built, has every read of it moved one earlier', () => {
    const c = validateCheckpoint(
      saved(1, [
        imageTape(
          [
            [0, 64],
            [1, 16],
            [30, 8],
          ],
          200,
        ),
      ]),
    );
    expect(c.version).toBe(CHECKPOINT_VERSION);
    // Read 0 (the build) and read 1 (the first example) both become read 0: the first example saw 16.
    expect(c.tapes[0]!.channels.shuffleBuffer).toEqual({
      reads: 199,
      changes: [
        [0, 16],
        [29, 8],
      ],
    });
    expect(c.tapes[0]!.channels.fidelity).toEqual({ reads: 9, changes: [[0, 6]] });
  });

  it('a table tape (no fidelity channel: its stages never read the buffer at build) is left as it was', () => {
    const table: TapeState = {
      channels: {
        shuffleBuffer: {
          reads: 5,
          changes: [
            [0, 1000],
            [3, 500],
          ],
        },
      },
      records: 2,
      outcomes: [],
    };
    expect(validateCheckpoint(saved(1, [table])).tapes[0]).toEqual(table);
  });

  it('a tape whose snapshot is malformed, or a version from a newer lab, is refused with a message naming what is wrong', () => {
    const bad = { ...imageTape([[0, 16]], 3), snapshots: [{ batch: -1 }] } as unknown as TapeState;
    expect(() => validateCheckpoint(saved(CHECKPOINT_VERSION, [bad]))).toThrow(/cannot be continued: the saved pipeline state is malformed/);
    expect(() => validateCheckpoint(saved(3, [imageTape([], 0)]))).toThrow(/version 3, this lab reads 2/);
  });

  it('reads in flight and share: absent (saved before they existed) is fine, a bad one is refused', () => {
    const withReads = (n: unknown) => ({ ...saved(CHECKPOINT_VERSION, [imageTape([], 0)]), controls: { requestsInFlight: n } }) as unknown as Checkpoint;
    expect(validateCheckpoint(saved(CHECKPOINT_VERSION, [imageTape([], 0)])).controls).toBeUndefined();
    expect(validateCheckpoint(withReads(6)).controls.requestsInFlight).toBe(6);
    expect(() => validateCheckpoint(withReads(0))).toThrow(/cannot be continued: reads in flight 0/);
    const withShare = (share: unknown) => ({ ...saved(CHECKPOINT_VERSION, [imageTape([], 0)]), config: { readers: 1, share } }) as unknown as Checkpoint;
    expect(validateCheckpoint(withShare({ rank: 1, count: 2 })).config.share).toEqual({ rank: 1, count: 2 });
    expect(() => validateCheckpoint(withShare({ rank: 2, count: 2 }))).toThrow(/cannot be continued: share \{"rank":2,"count":2\}/);
  });

  it('the test split’s examples per class: absent (before the first evaluation, or saved before it was kept) is fine, a bad one is refused', () => {
    const base = saved(CHECKPOINT_VERSION, [imageTape([], 0)]);
    const withCounts = (classCounts: unknown) => ({ ...base, history: { steps: [], evals: [], classCounts } }) as unknown as Checkpoint;
    expect(validateCheckpoint(withCounts([3, 5])).history.classCounts).toEqual([3, 5]);
    expect(() => validateCheckpoint(withCounts([3, -1]))).toThrow(/cannot be continued: test examples per class \[3,-1\]/);
    expect(() => validateCheckpoint(withCounts('many'))).toThrow(/test examples per class "many"/);
  });
});
