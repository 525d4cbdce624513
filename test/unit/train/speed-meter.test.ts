// The examples/s reading (speed-meter.ts) on a made-up clock: steps queued fast and read back later, pauses and
// evaluations left out.
import { describe, expect, it } from 'vitest';
import { SpeedMeter } from '../../../src/train/speed-meter.js';

function fakeClock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('speed meter', () => {
  it('counts a step when it is read back: steps queued in a blink do not read as a burst', async () => {
    const c = fakeClock();
    const meter = new SpeedMeter(8, c.now);
    // A second run: three steps of 32 queued within 3 ms, the GPU then does each in 100 ms.
    c.advance(3);
    c.advance(97);
    expect(meter.reported(32)).toBeCloseTo(320, 6); // 32 examples in the 100 ms since the start
    c.advance(100);
    expect(meter.reported(32)).toBeCloseTo(320, 6);
    c.advance(100);
    expect(meter.reported(32)).toBeCloseTo(320, 6);
  });

  it('reads over the last `window` steps once there are that many', () => {
    const c = fakeClock();
    const meter = new SpeedMeter(2, c.now);
    c.advance(1000); // start-up: compiling
    meter.reported(10);
    c.advance(100);
    meter.reported(10);
    c.advance(100);
    expect(meter.reported(10)).toBeCloseTo(100, 6); // 20 examples over the last 200 ms, the start-up out of the window
  });

  it('leaves out the time of work it is told is not training', async () => {
    const c = fakeClock();
    const meter = new SpeedMeter(8, c.now);
    c.advance(100);
    meter.reported(10);
    await meter.outside(async () => {
      c.advance(5000); // a pause, an evaluation
    });
    c.advance(100);
    expect(meter.reported(10)).toBeCloseTo(100, 6); // 20 examples in 200 ms of training
  });

  it('a step reported while the clock is stopped counts up to the stop', async () => {
    const c = fakeClock();
    const meter = new SpeedMeter(8, c.now);
    c.advance(100);
    let speed = 0;
    await meter.outside(async () => {
      c.advance(50);
      speed = meter.reported(10); // a readback that lands during an evaluation
      c.advance(1000);
    });
    expect(speed).toBeCloseTo(100, 6);
  });
});
