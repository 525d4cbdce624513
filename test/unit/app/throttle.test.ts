import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { drawThrottled } from '../../../src/app/throttle.js';

describe('drawThrottled', () => {
  beforeEach(() => {
    // Node has no animation frames: a frame is a 16 ms timer here, as on a 60 Hz screen.
    vi.stubGlobal('requestAnimationFrame', (f: FrameRequestCallback) => setTimeout(() => f(performance.now()), 16));
    vi.stubGlobal('cancelAnimationFrame', (id: ReturnType<typeof setTimeout>) => clearTimeout(id));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('draws a burst of requests once, on the next frame, with the latest value', () => {
    let value = 0;
    const drawn: number[] = [];
    const request = drawThrottled(() => drawn.push(value), 100);
    for (value = 1; value <= 50; value++) request();
    value = 50;
    expect(drawn).toEqual([]);
    vi.advanceTimersByTime(16);
    expect(drawn).toEqual([50]);
  });

  it('draws at most once per interval while requests keep coming, and always ends on the last one', () => {
    let value = 0;
    const drawn: { value: number; at: number }[] = [];
    const request = drawThrottled(() => drawn.push({ value, at: performance.now() }), 100);
    // A step every 5 ms for a second, as a small model trains.
    for (let t = 0; t < 1000; t += 5) {
      value = t;
      request();
      vi.advanceTimersByTime(5);
    }
    vi.advanceTimersByTime(200);
    expect(drawn.length).toBeGreaterThanOrEqual(8);
    expect(drawn.length).toBeLessThanOrEqual(11);
    for (let i = 1; i < drawn.length; i++) expect(drawn[i]!.at - drawn[i - 1]!.at).toBeGreaterThanOrEqual(100);
    expect(drawn.at(-1)!.value).toBe(995);
  });

  it('draws a request made long after the last drawing on the next frame', () => {
    const drawn: number[] = [];
    const request = drawThrottled(() => drawn.push(performance.now()), 100);
    request();
    vi.advanceTimersByTime(500);
    const asked = performance.now();
    request();
    vi.advanceTimersByTime(16);
    expect(drawn).toHaveLength(2);
    expect(drawn[1]! - asked).toBeLessThanOrEqual(16);
  });

  it('flush draws a pending request at once, and only once; with nothing pending it draws nothing', () => {
    let value = 0;
    const drawn: number[] = [];
    const request = drawThrottled(() => drawn.push(value), 100);
    request.flush();
    expect(drawn).toEqual([]);
    value = 1;
    request();
    vi.advanceTimersByTime(16);
    value = 2;
    request(); // waits for the interval
    request.flush();
    expect(drawn).toEqual([1, 2]);
    vi.advanceTimersByTime(500);
    expect(drawn).toEqual([1, 2]);
    value = 3;
    request(); // pending again after a flush
    vi.advanceTimersByTime(116);
    expect(drawn).toEqual([1, 2, 3]);
  });
});
