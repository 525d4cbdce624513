// The page's live readings change every training step, up to a hundred or more
// a second on a small model, but a screen is read at a few frames a second. Each
// frame with changed text or a redrawn chart costs the page's main thread style,
// layout, paint and a hover hit test: the thread that also drives the GPU. So
// the readings are drawn at most every SHOW_EVERY_MS, always ending on the
// latest values.

/** How often the live readings (tiles, counters, charts) are drawn while they change. */
export const SHOW_EVERY_MS = 100;

/**
 * Returns `request()`: `draw` runs on an animation frame, at most once per `everyMs`.
 * Requests made while one is pending join it, so the last request is always drawn
 * (`draw` reads the latest state when it runs, not the state when it was asked for).
 */
export function drawThrottled(draw: () => void, everyMs = SHOW_EVERY_MS): () => void {
  let pending = false;
  let drawnAt = Number.NEGATIVE_INFINITY;
  const frame = () =>
    requestAnimationFrame(() => {
      pending = false;
      drawnAt = performance.now();
      draw();
    });
  return () => {
    if (pending) return;
    pending = true;
    const wait = drawnAt + everyMs - performance.now();
    if (wait > 0) setTimeout(frame, wait);
    else frame();
  };
}
