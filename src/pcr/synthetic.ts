import { hash32, seededRandom, type Random } from '../shared/random.js';
/**
 * Synthetic colour image datasets for the two kinds of task the PCR paper
 * contrasts (Kuchnik et al., Progressive Compressed Records, section 4.2: "Cars
 * is too fine-grained to allow images to be degraded, and CelebAHQ-Smile is too
 * coarse-grained for image degradation to matter"). Pure TypeScript, no DOM or
 * Node APIs: the same code runs in the CLI, in tests and in a browser.
 *
 * Both tasks share one scene model: a smooth two-colour gradient background of
 * low saturation with a soft radial light, one object (disc, triangle, square,
 * five-pointed star or ring) at a random place, size and angle, with
 * anti-aliased edges and a shading ramp, and mild per-pixel noise (standard
 * deviation about 2.5 grey levels per channel). What differs is what carries
 * the class. The colour scan script the records use (docs/pcr.md) sends
 *   group 1: DC of Y, Cb, Cr (one bit short)   group 2: Y AC 1-5 (two bits short)
 *   groups 3, 4: Cr, Cb AC 1-63                group 5: Y AC 6-63 (two bits short)
 *   groups 6-10: the remaining bits.
 *
 * **coarse**: the class is the object's hue family (red or blue) and its shape
 * (5 shapes x 2 hues = 10 classes); position, size, rotation, exact hue,
 * saturation, brightness, shading and background vary at random. In DCT terms
 * (8x8 blocks, what every JPEG scan codes) the class lives in the lowest
 * frequencies: the hue is the DC of the chroma components, which group 1
 * already carries; the shape is an object 40 to 80 px across, 5 to 10 blocks,
 * whose outline shows in the block means alone and sharpens with luma AC 1-5
 * (group 2) and the chroma AC (groups 3 and 4). Its only high-frequency content
 * is edges and noise; losing them blurs an outline without changing which shape
 * it is. So low scan groups suffice, and their MS-SSIM is high.
 *
 * **fine**: every class has the same scene distribution (random shape, random
 * hue and the same kind of background); a luma-only sinusoidal grating
 * cos(2 pi (fx x + fy y) + phase) covers the whole image, stronger on the
 * object, and its spatial frequency is the class (FINE_GRATINGS: fx and fy in
 * {1/4, 5/16, 3/8, 1/2} cycles/px, periods 1.4 to 2.8 px). Why low groups lose it:
 *  - A frequency of f cycles/px falls on DCT index u = 16 f (1/2, the Nyquist
 *    frequency, aliases onto u = 7), so every class sits at u, v >= 4, zig-zag
 *    position 36 or later: beyond Y AC 1-5, in Y AC 6-63, which is first sent
 *    in group 5 (two bits short) and completed in group 10.
 *  - The grating is added equally to R, G and B, so Cb and Cr (groups 1, 3, 4)
 *    do not see it (up to rounding).
 *  - Its mean over an 8x8 block is 0 (whole periods in 8 px), or under 1 grey
 *    level for the 2.3 px class, so the block means (DC) and the mean colour
 *    do not depend on the class.
 *  - An 8-point DCT leaks a little of a sampled sinusoid into other indices
 *    (for f = 1/2 about 3 % of the energy along that axis lands on u = 1, 2).
 *    Because both fx and fy are at least 1/4, reaching zig-zag 1-5 (u + v <= 2)
 *    takes a leak along both axes, the product of two small leaks; axis-aligned
 *    stripes would put about a fifth of their amplitude on u = 1 and are left out.
 * A model fed groups 1-4 therefore sees little more than the class-independent
 * scene, and the MS-SSIM of those groups is low: the missing grating lowers the
 * contrast and structure terms at the full- and half-resolution scales (at 128 px
 * MS-SSIM uses scales of 128, 64, 32 and 16 px).
 *
 * Determinism: image i of a split is a pure function of (task, seed, split name,
 * i, size); the random numbers come from the shared generator (sfc32) seeded
 * by hashing those, so the same arguments give the same bytes (Math.sin and
 * Math.cos are the only inexact library functions used; V8 computes them with
 * its own fdlibm port, the same on every platform). Labels are balanced and
 * cyclic: label(i) = i mod 10.
 */
import type { LabeledImage } from './build.js';

export type SyntheticTask = 'coarse' | 'fine';

export const SYNTHETIC_TASKS: readonly SyntheticTask[] = ['coarse', 'fine'];

/** Smallest image side: objects must span several 8x8 blocks and MS-SSIM gets 4 scales from 128 on. */
export const MIN_SYNTHETIC_SIZE = 128;

export interface SyntheticOptions {
  /** Image side in pixels (square images), at least MIN_SYNTHETIC_SIZE; default 128. */
  size?: number;
  /** Any 32-bit integer; default 1. */
  seed?: number;
}

const SHAPES = ['disc', 'triangle', 'square', 'star', 'ring'] as const;
type Shape = (typeof SHAPES)[number];

/** Hue families of the coarse task, in degrees, with their names. */
const HUES = [
  { name: 'red', hue: 0 },
  { name: 'blue', hue: 220 },
] as const;
/** Largest deviation from the family's hue, degrees. */
const HUE_JITTER = 18;

/**
 * The fine task's gratings cos(2 pi (fx x + fy y) + phase): spatial frequency in
 * cycles per pixel along x and y. Both components are at least 1/4 (DCT index
 * u = 16 f >= 4 in both directions), so what an 8x8 DCT leaks of a grating into
 * the low coefficients is a product of two small leaks (see fineImage). The sign
 * of fy is drawn per image: the mirrored grating has the same DCT energy per
 * coefficient, so it adds variety without touching the class.
 */
export const FINE_GRATINGS: readonly { name: string; fx: number; fy: number }[] = [
  { name: 'stripes 2.8 px, 45°', fx: 1 / 4, fy: 1 / 4 },
  { name: 'stripes 2.3 px, 45°', fx: 5 / 16, fy: 5 / 16 },
  { name: 'stripes 1.9 px, 45°', fx: 3 / 8, fy: 3 / 8 },
  { name: 'checker 1 px', fx: 1 / 2, fy: 1 / 2 },
  { name: 'stripes 2.2 px, 56°', fx: 1 / 4, fy: 3 / 8 },
  { name: 'stripes 2.2 px, 34°', fx: 3 / 8, fy: 1 / 4 },
  { name: 'stripes 1.8 px, 63°', fx: 1 / 4, fy: 1 / 2 },
  { name: 'stripes 1.8 px, 27°', fx: 1 / 2, fy: 1 / 4 },
  { name: 'stripes 1.6 px, 53°', fx: 3 / 8, fy: 1 / 2 },
  { name: 'stripes 1.6 px, 37°', fx: 1 / 2, fy: 3 / 8 },
];

export const SYNTHETIC_CLASSES: Readonly<Record<SyntheticTask, readonly string[]>> = {
  coarse: HUES.flatMap((h) => SHAPES.map((s) => `${h.name} ${s}`)),
  fine: FINE_GRATINGS.map((g) => g.name),
};

/** Dataset name and description for a manifest. */
export function syntheticDescription(task: SyntheticTask): { name: string; description: string } {
  return task === 'coarse'
    ? {
        name: 'Synthetic coarse (hue x shape)',
        description:
          'Classes differ in colour and shape (red or blue disc, triangle, square, star, ring) on varied gradient backgrounds: low scan groups suffice.',
      }
    : {
        name: 'Synthetic fine (texture)',
        description: 'Classes differ only in a fine luma grating (1.4 to 3 px periods) on the same scenes: the low scan groups drop it.',
      };
}

function syntheticLabel(index: number, task: SyntheticTask = 'coarse'): number {
  return index % SYNTHETIC_CLASSES[task].length;
}

// ------------------------------------------------------------------ random

/** Draws for one image: the shared seeded generator (src/shared/random.ts) with the shapes the scenes need. */
class Rng {
  readonly next: Random;

  constructor(seed: number) {
    this.next = seededRandom(seed);
  }

  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Approximately standard normal (Irwin-Hall, 4 uniforms): no transcendental functions. */
  normal(): number {
    return (this.next() + this.next() + this.next() + this.next() - 2) * 1.7320508075688772;
  }
}

// ------------------------------------------------------------------ colour

/** HSV (h in degrees, s and v in 0..1) to RGB in 0..255. */
function hsv(h: number, s: number, v: number): [number, number, number] {
  const hh = (((h % 360) + 360) % 360) / 60;
  const i = Math.floor(hh);
  const f = hh - i;
  const p = v * (1 - s);
  const q = v * (1 - s * f);
  const t = v * (1 - s * (1 - f));
  const rgb: [number, number, number][] = [
    [v, t, p],
    [q, v, p],
    [p, v, t],
    [p, q, v],
    [t, p, v],
    [v, p, q],
  ];
  const [r, g, b] = rgb[i % 6]!;
  return [r * 255, g * 255, b * 255];
}

// ------------------------------------------------------------------ shapes

/** Vertices of the polygon shapes, circumradius 1, first vertex pointing up. */
function polygon(shape: Shape): number[] {
  const pts: number[] = [];
  const add = (angle: number, r: number) => pts.push(r * Math.cos(angle), r * Math.sin(angle));
  const up = -Math.PI / 2;
  if (shape === 'triangle') for (let k = 0; k < 3; k++) add(up + (k * 2 * Math.PI) / 3, 1);
  else if (shape === 'square') for (let k = 0; k < 4; k++) add(up + Math.PI / 4 + (k * Math.PI) / 2, 0.92);
  else if (shape === 'star') for (let k = 0; k < 10; k++) add(up + (k * Math.PI) / 5, k % 2 ? 0.42 : 1);
  return pts;
}

/** Signed distance to a polygon (negative inside), in the polygon's units. */
function polygonDistance(pts: number[], x: number, y: number): number {
  const n = pts.length / 2;
  let best = Infinity;
  let inside = false;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const xi = pts[2 * i]!;
    const yi = pts[2 * i + 1]!;
    const xj = pts[2 * j]!;
    const yj = pts[2 * j + 1]!;
    const ex = xi - xj;
    const ey = yi - yj;
    const t = Math.max(0, Math.min(1, ((x - xj) * ex + (y - yj) * ey) / (ex * ex + ey * ey)));
    const dx = x - xj - t * ex;
    const dy = y - yj - t * ey;
    best = Math.min(best, dx * dx + dy * dy);
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside ? -Math.sqrt(best) : Math.sqrt(best);
}

function shapeDistance(shape: Shape, pts: number[], x: number, y: number): number {
  const r = Math.sqrt(x * x + y * y);
  if (shape === 'disc') return r - 0.8;
  if (shape === 'ring') return Math.abs(r - 0.72) - 0.24;
  return polygonDistance(pts, x, y);
}

interface ObjectPlacement {
  shape: Shape;
  cx: number;
  cy: number;
  /** Circumradius, pixels. */
  radius: number;
  angle: number;
}

/** Anti-aliased coverage (0..1) of the object for every pixel. */
function coverage(size: number, o: ObjectPlacement): Float32Array {
  const out = new Float32Array(size * size);
  const pts = polygon(o.shape);
  const cos = Math.cos(o.angle);
  const sin = Math.sin(o.angle);
  const x0 = Math.max(0, Math.floor(o.cx - o.radius - 2));
  const x1 = Math.min(size - 1, Math.ceil(o.cx + o.radius + 2));
  const y0 = Math.max(0, Math.floor(o.cy - o.radius - 2));
  const y1 = Math.min(size - 1, Math.ceil(o.cy + o.radius + 2));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const dx = (x + 0.5 - o.cx) / o.radius;
      const dy = (y + 0.5 - o.cy) / o.radius;
      // rotate the pixel into the shape's frame
      const d = shapeDistance(o.shape, pts, cos * dx + sin * dy, -sin * dx + cos * dy) * o.radius;
      out[y * size + x] = Math.max(0, Math.min(1, 0.5 - d));
    }
  }
  return out;
}

// ------------------------------------------------------------------ scenes

/** A low-saturation two-colour linear gradient with a soft radial light: RGB floats, 0..255. */
function background(rng: Rng, size: number, value: readonly [number, number]): Float32Array {
  const a = hsv(rng.range(0, 360), rng.range(0, 0.2), rng.range(value[0], value[1]));
  const b = hsv(rng.range(0, 360), rng.range(0, 0.2), rng.range(value[0], value[1]));
  const angle = rng.range(0, 2 * Math.PI);
  const gx = Math.cos(angle) / size;
  const gy = Math.sin(angle) / size;
  const lx = rng.range(0, size);
  const ly = rng.range(0, size);
  const light = rng.range(-0.15, 0.15);
  const out = new Float32Array(size * size * 3);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const t = Math.max(0, Math.min(1, 0.5 + (x - size / 2) * gx + (y - size / 2) * gy));
      const r2 = ((x - lx) ** 2 + (y - ly) ** 2) / (size * size);
      const shade = 1 + light * (1 - 2 * r2);
      const k = 3 * (y * size + x);
      for (let c = 0; c < 3; c++) out[k + c] = (a[c]! + (b[c]! - a[c]!) * t) * shade;
    }
  }
  return out;
}

function placement(rng: Rng, size: number, shape: Shape, minRadius: number, maxRadius: number): ObjectPlacement {
  const radius = rng.range(minRadius, maxRadius) * size;
  const margin = radius * 0.85;
  return { shape, radius, cx: rng.range(margin, size - margin), cy: rng.range(margin, size - margin), angle: rng.range(0, 2 * Math.PI) };
}

/** Paints the object's colour over the background, shaded along a random direction. */
function paintObject(
  img: Float32Array,
  size: number,
  cover: Float32Array,
  color: [number, number, number],
  rng: Rng,
  o: ObjectPlacement,
  shading: number,
): void {
  const angle = rng.range(0, 2 * Math.PI);
  const sx = (Math.cos(angle) * shading) / o.radius;
  const sy = (Math.sin(angle) * shading) / o.radius;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const a = cover[y * size + x]!;
      if (a === 0) continue;
      const shade = 1 + (x - o.cx) * sx + (y - o.cy) * sy;
      const k = 3 * (y * size + x);
      for (let c = 0; c < 3; c++) img[k + c] = img[k + c]! * (1 - a) + color[c]! * shade * a;
    }
  }
}

/** Adds noise and rounds to 8 bits. */
function finish(img: Float32Array, rng: Rng, sigma: number): Uint8Array {
  const out = new Uint8Array(img.length);
  for (let i = 0; i < img.length; i++) out[i] = Math.max(0, Math.min(255, Math.round(img[i]! + sigma * rng.normal())));
  return out;
}

const NOISE_SIGMA = 2.5;
/** HSV value range of the background colours: the fine task keeps room for the grating above and below. */
const COARSE_BACKGROUND_VALUE = [0.25, 0.9] as const;
const FINE_BACKGROUND_VALUE = [0.3, 0.68] as const;

function coarseImage(rng: Rng, size: number, label: number): Uint8Array {
  const shape = SHAPES[label % SHAPES.length]!;
  const family = HUES[Math.floor(label / SHAPES.length)]!;
  const img = background(rng, size, COARSE_BACKGROUND_VALUE);
  const o = placement(rng, size, shape, 0.17, 0.32);
  const color = hsv(family.hue + rng.range(-HUE_JITTER, HUE_JITTER), rng.range(0.55, 0.9), rng.range(0.45, 0.95));
  paintObject(img, size, coverage(size, o), color, rng, o, 0.12);
  return finish(img, rng, NOISE_SIGMA);
}

/** Root mean square of a unit-amplitude grating over a 16x16 tile, a whole number of periods of every class. */
function gratingRms(fx: number, fy: number, phase: number): number {
  let sum = 0;
  for (let y = 0; y < 16; y++) for (let x = 0; x < 16; x++) sum += Math.cos(2 * Math.PI * (fx * x + fy * y) + phase) ** 2;
  return Math.sqrt(sum / 256);
}

function fineImage(rng: Rng, size: number, label: number): Uint8Array {
  const grating = FINE_GRATINGS[label]!;
  const img = background(rng, size, FINE_BACKGROUND_VALUE);
  const o = placement(rng, size, SHAPES[rng.int(SHAPES.length)]!, 0.25, 0.4);
  const color = hsv(rng.range(0, 360), rng.range(0.25, 0.55), rng.range(0.4, 0.65));
  const cover = coverage(size, o);
  paintObject(img, size, cover, color, rng, o, 0.1);
  // The grating covers the whole scene, stronger on the object: luma only (the
  // same offset on R, G and B), zero mean over every 8x8 block, RMS 16..24 grey
  // levels on the object and 40..80 % of that on the background. Patterns made
  // of Nyquist components only (cos(pi x) and the like) sample to
  // cos(phase) * (+-1), so their phase is 0 or pi.
  const fx = grating.fx;
  const fy = rng.next() < 0.5 ? -grating.fy : grating.fy;
  const nyquistOnly = (2 * fx) % 1 === 0 && (2 * fy) % 1 === 0;
  const phase = nyquistOnly ? (rng.next() < 0.5 ? 0 : Math.PI) : rng.range(0, 2 * Math.PI);
  const onObject = rng.range(16, 24) / gratingRms(fx, fy, phase);
  const onBackground = onObject * rng.range(0.4, 0.8);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const a = cover[y * size + x]!;
      const v = (onBackground + (onObject - onBackground) * a) * Math.cos(2 * Math.PI * (fx * x + fy * y) + phase);
      const k = 3 * (y * size + x);
      img[k] = img[k]! + v;
      img[k + 1] = img[k + 1]! + v;
      img[k + 2] = img[k + 2]! + v;
    }
  }
  return finish(img, rng, NOISE_SIGMA);
}

function checkSize(size: number): void {
  if (!Number.isInteger(size) || size < MIN_SYNTHETIC_SIZE || size > 4096)
    throw new RangeError(`synthetic image size must be an integer in ${MIN_SYNTHETIC_SIZE}..4096, got ${size}`);
}

/** Image `index` of a split: RGB, size x size, label = index mod 10. Same arguments, same bytes. */
export function syntheticImage(task: SyntheticTask, split: string, index: number, opts: SyntheticOptions = {}): LabeledImage {
  const size = opts.size ?? 128;
  checkSize(size);
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`image index must be a non-negative integer, got ${index}`);
  if (task !== 'coarse' && task !== 'fine') throw new RangeError(`unknown synthetic task "${String(task)}" (coarse, fine)`);
  const rng = new Rng(hash32('bytelab-synthetic', task, split, opts.seed ?? 1, index, size));
  const label = syntheticLabel(index, task);
  const data = task === 'coarse' ? coarseImage(rng, size, label) : fineImage(rng, size, label);
  return { label, image: { width: size, height: size, channels: 3, data } };
}

/** Images 0..count-1 of a split, generated lazily. */
export function* syntheticImages(task: SyntheticTask, split: string, count: number, opts: SyntheticOptions = {}): Generator<LabeledImage> {
  checkSize(opts.size ?? 128);
  for (let i = 0; i < count; i++) yield syntheticImage(task, split, i, opts);
}
