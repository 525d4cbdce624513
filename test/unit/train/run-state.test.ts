import { describe, expect, it } from 'vitest';
import { IllegalTransitionError, RunStateMachine, TRANSITIONS, type RunState } from '../../../src/train/run-state.js';
import { RingBuffer } from '../../../src/train/ring-buffer.js';
import { abortable, RunAbortedError } from '../../../src/train/abort.js';

describe('RunStateMachine', () => {
  it('allows exactly the transitions of the table and reports each', () => {
    const seen: RunState[] = [];
    for (const [from, targets] of Object.entries(TRANSITIONS) as [RunState, readonly RunState[]][]) {
      for (const to of Object.keys(TRANSITIONS) as RunState[]) {
        const m = new RunStateMachine((s) => seen.push(s));
        // Walk to `from` along a legal path first.
        const path: Record<RunState, RunState[]> = {
          idle: [],
          loading: ['loading'],
          running: ['loading', 'running'],
          paused: ['loading', 'running', 'paused'],
          evaluating: ['loading', 'running', 'evaluating'],
          stopping: ['loading', 'stopping'],
          stopped: ['stopped'],
          failed: ['loading', 'failed'],
        };
        for (const s of path[from]) m.to(s);
        expect(m.state).toBe(from);
        if (targets.includes(to)) {
          m.to(to);
          expect(m.state).toBe(to);
          expect(seen.at(-1)).toBe(to);
        } else {
          expect(() => m.to(to)).toThrow(IllegalTransitionError);
          expect(m.state).toBe(from);
        }
      }
    }
  });

  it('stopped and failed are final', () => {
    expect(TRANSITIONS.stopped).toEqual([]);
    expect(TRANSITIONS.failed).toEqual([]);
    const m = new RunStateMachine(() => undefined);
    m.to('stopped');
    expect(m.isFinal).toBe(true);
  });
});

describe('RingBuffer', () => {
  it('keeps the newest items, oldest first, and counts all', () => {
    const r = new RingBuffer<number>(3);
    expect(r.last()).toBeUndefined();
    for (let i = 1; i <= 7; i++) r.push(i);
    expect(r.toArray()).toEqual([5, 6, 7]);
    expect(r.first()).toBe(5);
    expect(r.last()).toBe(7);
    expect(r.length).toBe(3);
    expect(r.total).toBe(7);
    expect(r.latest(2)).toEqual([6, 7]);
    expect(r.latest(10)).toEqual([5, 6, 7]);
    expect(r.latest(0)).toEqual([]);
  });

  it('before it is full', () => {
    const r = new RingBuffer<string>(4);
    r.push('a');
    r.push('b');
    expect(r.toArray()).toEqual(['a', 'b']);
    expect(r.last()).toBe('b');
    expect(r.latest(1)).toEqual(['b']);
    expect(r.latest(3)).toEqual(['a', 'b']);
  });
});

describe('abortable', () => {
  it('rejects as soon as the signal aborts, and passes results through otherwise', async () => {
    const c = new AbortController();
    const never = new Promise<number>(() => undefined);
    const p = abortable(never, c.signal);
    c.abort();
    await expect(p).rejects.toBeInstanceOf(RunAbortedError);
    await expect(abortable(Promise.resolve(3), new AbortController().signal)).resolves.toBe(3);
    await expect(abortable(Promise.resolve(3), c.signal)).rejects.toBeInstanceOf(RunAbortedError);
  });
});
