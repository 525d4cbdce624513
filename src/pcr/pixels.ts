// Pixel conversions shared by dataset builders (Node CLI and, later, the browser).
import type { RawImage } from '../jpeg/encoder.js';

/** Converts between gray (1) and RGB (3) with the JFIF luma weights. */
export function toChannels(img: RawImage, channels: 1 | 3): RawImage {
  if (img.channels === channels) return img;
  const n = img.width * img.height;
  const out = new Uint8Array(n * channels);
  if (channels === 1) {
    for (let i = 0; i < n; i++) {
      out[i] = Math.round(0.299 * img.data[3 * i]! + 0.587 * img.data[3 * i + 1]! + 0.114 * img.data[3 * i + 2]!);
    }
  } else {
    for (let i = 0; i < n; i++) out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = img.data[i]!;
  }
  return { width: img.width, height: img.height, channels, data: out };
}

/** Resizes with a box filter when shrinking and bilinear sampling when growing. */
export function resize(img: RawImage, width: number, height: number): RawImage {
  if (img.width === width && img.height === height) return img;
  const c = img.channels;
  const out = new Uint8Array(width * height * c);
  const sx = img.width / width;
  const sy = img.height / height;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < c; k++) {
        out[(y * width + x) * c + k] =
          sx > 1 || sy > 1 ? boxSample(img, x * sx, y * sy, sx, sy, k) : bilinear(img, (x + 0.5) * sx - 0.5, (y + 0.5) * sy - 0.5, k);
      }
    }
  }
  return { width, height, channels: c, data: out };
}

function boxSample(img: RawImage, x0: number, y0: number, sx: number, sy: number, k: number): number {
  const xs = Math.floor(x0);
  const ys = Math.floor(y0);
  const xe = Math.min(img.width, Math.max(xs + 1, Math.ceil(x0 + sx)));
  const ye = Math.min(img.height, Math.max(ys + 1, Math.ceil(y0 + sy)));
  let sum = 0;
  for (let y = ys; y < ye; y++) for (let x = xs; x < xe; x++) sum += img.data[(y * img.width + x) * img.channels + k]!;
  return Math.round(sum / ((xe - xs) * (ye - ys)));
}

function bilinear(img: RawImage, fx: number, fy: number, k: number): number {
  const clampX = (v: number) => Math.min(img.width - 1, Math.max(0, v));
  const clampY = (v: number) => Math.min(img.height - 1, Math.max(0, v));
  const x0 = clampX(Math.floor(fx));
  const y0 = clampY(Math.floor(fy));
  const x1 = clampX(x0 + 1);
  const y1 = clampY(y0 + 1);
  const ax = Math.min(1, Math.max(0, fx - x0));
  const ay = Math.min(1, Math.max(0, fy - y0));
  const at = (x: number, y: number) => img.data[(y * img.width + x) * img.channels + k]!;
  const top = at(x0, y0) * (1 - ax) + at(x1, y0) * ax;
  const bottom = at(x0, y1) * (1 - ax) + at(x1, y1) * ax;
  return Math.round(top * (1 - ay) + bottom * ay);
}
