// The page's live readings change every training step, up to a hundred or more
// a second on a small model, but a screen is read at a few frames a second. Each
// frame with changed text or a redrawn chart costs the page's main thread style,
// layout, paint and a hover hit test: the thread that also drives the GPU. So
// the readings are drawn at most every SHOW_EVERY_MS, always ending on the
// latest values.

/** How often the live readings (tiles, counters, charts) are drawn while they change. */
export const SHOW_EVERY_MS = 100;

export interface ThrottledDraw {
  /** Asks for a drawing: on an animation frame, at most once per interval; requests made while one is pending join it. */
  (): void;
  /** Draws a pending request now (when a run ends, so nothing drawn late can undo what the page does next). */
  flush(): void;
}

/**
 * `draw` runs on an animation frame, at most once per `everyMs`. The last request is always drawn: `draw` reads
 * the latest state when it runs, not the state when it was asked for.
 */
export function drawThrottled(draw: () => void, everyMs = SHOW_EVERY_MS): ThrottledDraw {
  let pending = false;
  let drawnAt = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let frameId: number | undefined;
  const run = () => {
    pending = false;
    timer = frameId = undefined;
    drawnAt = performance.now();
    draw();
  };
  const frame = () => {
    timer = undefined;
    frameId = requestAnimationFrame(run);
  };
  const request = () => {
    if (pending) return;
    pending = true;
    const wait = drawnAt + everyMs - performance.now();
    if (wait > 0) timer = setTimeout(frame, wait);
    else frame();
  };
  return Object.assign(request, {
    flush() {
      if (!pending) return;
      clearTimeout(timer);
      if (frameId !== undefined) cancelAnimationFrame(frameId);
      run();
    },
  });
}
