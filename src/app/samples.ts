// Draws the sample grid: the latest decoded images at the fidelity they were fetched at.
import type { SampleImages } from '../pipeline/api.js';

/**
 * Draws the grid; with `classes`, each image is named by its class: under the
 * pointer (the canvas's title follows it) and, for screen readers, in the
 * canvas's label, row by row.
 */
export function drawSamples(canvas: HTMLCanvasElement, s: SampleImages, classes?: string[], columns = 8): void {
  const rows = Math.ceil(s.labels.length / columns);
  const { width: w, height: h, channels: c } = s;
  canvas.width = columns * w;
  canvas.height = rows * h;
  const ctx = canvas.getContext('2d')!;
  const image = ctx.createImageData(canvas.width, canvas.height);
  for (let n = 0; n < s.labels.length; n++) {
    const ox = (n % columns) * w;
    const oy = Math.floor(n / columns) * h;
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        const src = n * w * h * c + (y * w + x) * c;
        const dst = ((oy + y) * canvas.width + ox + x) * 4;
        image.data[dst] = s.pixels[src]!;
        image.data[dst + 1] = s.pixels[src + (c === 3 ? 1 : 0)]!;
        image.data[dst + 2] = s.pixels[src + (c === 3 ? 2 : 0)]!;
        image.data[dst + 3] = 255;
      }
    }
  }
  ctx.putImageData(image, 0, 0);
  if (!classes) return;
  const names = s.labels.map((l) => classes[l] ?? `class ${l}`);
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', `${names.length} training images at scan group ${s.group}: ${names.join(', ')}`);
  canvas.onmousemove = (e) => {
    const box = canvas.getBoundingClientRect();
    const col = Math.floor(((e.clientX - box.left) / box.width) * columns);
    const row = Math.floor(((e.clientY - box.top) / box.height) * rows);
    canvas.title = names[row * columns + col] ?? '';
  };
}

/** Empties the grid, so a new run never shows the previous run's images. */
export function clearSamples(canvas: HTMLCanvasElement): void {
  canvas.getContext('2d')!.clearRect(0, 0, canvas.width, canvas.height);
}
