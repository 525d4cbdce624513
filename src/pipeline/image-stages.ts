// The per-example stages of the image pipelines (PCR records and the reference
// format): decode + scale to the model input, echo -> flip -> shuffle -> batch,
// and the sample images the lab shows.
import type { DecodedImage, TurboJpeg } from '../jpeg/turbo.js';
import type { ImageShape } from '../pcr/manifest.js';
import { resize } from '../pcr/pixels.js';
import type { EchoMode, ImageBatch, SampleImages } from './api.js';
import type { Random } from '../shared/random.js';
import { chunk, echo, shuffleBuffer } from './stages.js';

export interface ImageExample {
  /** height x width x channels, interleaved, at the model's input size. */
  pixels: Uint8Array;
  label: number;
  /** Which fresh example this is (echoed copies share it): counts duplicates within a batch. */
  id: number;
}

export interface ImageStageControls {
  /** The model's input: every example has this shape. */
  shape: ImageShape;
  augment: boolean;
  random: Random;
  /** Read per example and per batch, so changes apply at once. */
  echoFactor(): number;
  echoMode(): EchoMode;
  /** Examples the shuffle buffer holds; 1 or less at open: no shuffle stage at all (the test split). */
  shuffleBuffer(): number;
  batchSize(): number;
  /** The index the next batch gets. */
  batchIndex(): number;
  /** Counters: echoed copies of examples made; examples in a batch that repeat one already in it. */
  echoed(examples: number): void;
  duplicates(n: number): void;
}

/**
 * Decodes a JPEG of any size to the model's input: at the smallest DCT scale
 * that still covers the input (TurboJpeg's `atLeast`), then resized (box filter
 * down, bilinear up). Throws JpegDecodeError for bad data.
 */
export function decodeToShape(decoder: TurboJpeg, jpeg: Uint8Array, shape: ImageShape): DecodedImage {
  const { width, height, channels } = shape;
  const img = decoder.decode(jpeg, channels, undefined, { width, height });
  return { ...resize(img, width, height), channels };
}

/** Random horizontal flips, one draw per example (after echoing, so copies differ). */
async function* flipExamples(source: AsyncIterable<ImageExample>, shape: ImageShape, random: Random): AsyncGenerator<ImageExample> {
  const { width, height, channels } = shape;
  for await (const ex of source) {
    if (random() < 0.5) {
      yield ex;
      continue;
    }
    const out = new Uint8Array(ex.pixels.length);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const from = (y * width + x) * channels;
        const to = (y * width + (width - 1 - x)) * channels;
        for (let c = 0; c < channels; c++) out[to + c] = ex.pixels[from + c]!;
      }
    }
    yield { pixels: out, label: ex.label, id: ex.id };
  }
}

/** Examples in the group that repeat an example already in it. */
function duplicatesIn(examples: ImageExample[]): number {
  return examples.length - new Set(examples.map((e) => e.id)).size;
}

const copyImageBatch = (b: ImageBatch): ImageBatch => ({ ...b, x: b.x.slice(), y: b.y.slice() });

/** Examples as one image batch: x scaled to [0, 1]. */
function toImageBatch(examples: ImageExample[], index: number): ImageBatch {
  const per = examples[0]!.pixels.length;
  const x = new Float32Array(examples.length * per);
  const y = new Int32Array(examples.length);
  examples.forEach((ex, i) => {
    const base = i * per;
    for (let k = 0; k < per; k++) x[base + k] = ex.pixels[k]! / 255;
    y[i] = ex.label;
  });
  return { kind: 'image', x, y, size: examples.length, index };
}

/**
 * echo -> (flip) -> (shuffle) -> batch -> batch echo, as ImagePipeline.batches()
 * does it. The echo mode picks which of the three echo stages repeats: examples
 * before augmentation (Choi et al.'s default: copies get different flips, and
 * the shuffle buffer spreads them apart), examples after it (identical copies),
 * or whole batches.
 */
export async function* imageBatches(examples: AsyncIterable<ImageExample>, c: ImageStageControls): AsyncGenerator<ImageBatch> {
  const stage = (mode: EchoMode) => ({ factor: c.echoFactor, random: c.random, active: () => c.echoMode() === mode, echoed: () => c.echoed(1) });
  const early = echo(examples, stage('examples'));
  const augmented = c.augment ? flipExamples(early, c.shape, c.random) : early;
  const late = echo(augmented, stage('examples-after-augment'));
  const shuffled = c.shuffleBuffer() > 1 ? shuffleBuffer(late, c.shuffleBuffer, c.random) : late;
  async function* batches(): AsyncGenerator<ImageBatch> {
    for await (const group of chunk(shuffled, c.batchSize)) {
      c.duplicates(duplicatesIn(group));
      yield toImageBatch(group, 0);
    }
  }
  const echoed = echo(batches(), { ...stage('batches'), clone: copyImageBatch, echoed: (b) => c.echoed(b.size) });
  for await (const b of echoed) yield { ...b, index: c.batchIndex() };
}

/** Up to 64 of a record's examples, kept for the lab's sample view. */
export function sampleOf(examples: ImageExample[], shape: ImageShape, group: number): SampleImages | undefined {
  if (examples.length === 0) return undefined;
  const { width, height, channels } = shape;
  const per = width * height * channels;
  const n = Math.min(64, examples.length);
  const pixels = new Uint8Array(n * per);
  for (let i = 0; i < n; i++) pixels.set(examples[i]!.pixels, i * per);
  return { width, height, channels, group, labels: examples.slice(0, n).map((e) => e.label), pixels };
}

/** The first n of a kept sample. */
export function firstSamples(s: SampleImages | undefined, n: number): SampleImages | undefined {
  if (!s) return undefined;
  const count = Math.min(n, s.labels.length);
  return { ...s, labels: s.labels.slice(0, count), pixels: s.pixels.slice(0, count * s.width * s.height * s.channels) };
}
