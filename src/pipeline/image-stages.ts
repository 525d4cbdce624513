// The per-example stages of the image pipelines (PCR records and the reference
// format): decode + scale to the model input, echo -> flip -> shuffle -> batch,
// and the sample images the lab shows.
import type { DecodedImage, TurboJpeg } from '../jpeg/turbo.js';
import type { ImageShape } from '../pcr/manifest.js';
import { resize } from '../pcr/pixels.js';
import type { EchoMode, ImageBatch, PendingBatch, SampleImages } from './api.js';
import type { Random } from '../shared/random.js';
import { chunk, echo, mapHeld, shuffleBuffer, type EchoHeld, type ShuffleHeld } from './stages.js';

/** An example's pixels (height x width x channels, interleaved, at the model's input size) and label. */
export interface ImageContent {
  pixels: Uint8Array;
  label: number;
}

/**
 * An example on its way through the stages: its content, or (while a resumed
 * pipeline replays the part of the stream an earlier run read) a way to read it,
 * used only if the example lands in a batch that is trained on.
 */
export type ImageExample = {
  /** The example's index in the split (echoed copies share it): the batch's ids, and duplicates within a batch. */
  id: number;
  /** The stream position of the record read it came from (tape.ts): where a restored stream reads it again. */
  position: number;
  /** Mirror it when the batch is made: the augmentation's draw for this copy. */
  flip?: boolean;
  /** An echoed copy (of the example, or in a copy of a whole batch), not the example's fresh read. */
  copy?: boolean;
} & (ImageContent | { load(): Promise<ImageContent | undefined> });

export interface ImageStageControls {
  /** The model's input: every example has this shape. */
  shape: ImageShape;
  augment: boolean;
  random: Random;
  /** Read per example and per batch, so changes apply at once. */
  echoFactor(): number;
  echoMode(): EchoMode;
  /** Whether there is a shuffle stage at all (not for the test split), and the examples it holds, read per example. */
  shuffles: boolean;
  /** Whether the shuffle buffer warms up (ControlTape.shuffleWarmUp). */
  shuffleWarmUp: boolean;
  shuffleBuffer(): number;
  batchSize(): number;
  /** Counters: echoed copies of examples made; examples in a batch that repeat one already in it. */
  echoed(examples: number): void;
  duplicates(n: number): void;
  /** What the stages hold between pulls (stages.ts): written down by a stream snapshot, filled in by a restore. */
  held: ImageStagesHeld;
}

/** The items the image stages hold between pulls (T: the examples, or their written form in a snapshot). */
export interface ImageStagesHeld<T = ImageExample> {
  early: EchoHeld<T>;
  late: EchoHeld<T>;
  shuffle: ShuffleHeld<T>;
  batches: EchoHeld<T[]>;
}

export const emptyImageStagesHeld = (): ImageStagesHeld => ({
  early: { left: 0 },
  late: { left: 0 },
  shuffle: { items: [], capacity: 0, draining: false },
  batches: { left: 0 },
});

/** The same holdings with every item mapped by `f`: to write a snapshot, and to read one back. */
export function mapImageStagesHeld<A, B>(h: ImageStagesHeld<A>, f: (item: A) => B): ImageStagesHeld<B> {
  const { items, capacity, draining } = h.shuffle;
  return {
    early: mapHeld(h.early, f),
    late: mapHeld(h.late, f),
    shuffle: { items: items.map(f), capacity, draining },
    batches: mapHeld(h.batches, (group) => group.map(f)),
  };
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

/** Random horizontal flips, one draw per example (after echoing, so copies differ); applied when the batch is made. */
async function* flipExamples(source: AsyncIterable<ImageExample>, random: Random): AsyncGenerator<ImageExample> {
  for await (const ex of source) yield random() < 0.5 ? ex : { ...ex, flip: true };
}

/** Examples in the group that repeat an example already in it. */
function duplicatesIn(examples: ImageExample[]): number {
  return examples.length - new Set(examples.map((e) => e.id)).size;
}

/** Examples as one image batch: x scaled to [0, 1], mirrored where the example says so. */
function toImageBatch(examples: (ImageContent & { id: number; flip?: boolean; copy?: boolean })[], shape: ImageShape): ImageBatch {
  const { width, height, channels } = shape;
  const per = width * height * channels;
  const row = width * channels;
  const x = new Float32Array(examples.length * per);
  const y = new Int32Array(examples.length);
  const ids = new Int32Array(examples.length);
  examples.forEach((ex, i) => {
    const base = i * per;
    if (ex.flip) {
      for (let r = 0; r < height; r++) {
        for (let col = 0; col < width; col++) {
          const from = r * row + col * channels;
          const to = base + r * row + (width - 1 - col) * channels;
          for (let k = 0; k < channels; k++) x[to + k] = ex.pixels[from + k]! / 255;
        }
      }
    } else {
      for (let k = 0; k < per; k++) x[base + k] = ex.pixels[k]! / 255;
    }
    y[i] = ex.label;
    ids[i] = ex.id;
  });
  const echoed = examples.reduce((n, ex) => n + (ex.copy ? 1 : 0), 0);
  return { kind: 'image', x, y, ids, size: examples.length, index: 0, echoed };
}

/** A batch made from a group of examples: the pixels of replayed examples are read now; an example that cannot be read again is left out. */
async function makeImageBatch(group: ImageExample[], shape: ImageShape): Promise<ImageBatch | undefined> {
  const resolved = await Promise.all(group.map(async (ex) => ('load' in ex ? ((c) => c && { ...ex, ...c })(await ex.load()) : ex)));
  const ready = resolved.filter((ex): ex is ImageContent & ImageExample => ex !== undefined);
  return ready.length > 0 ? toImageBatch(ready, shape) : undefined;
}

/**
 * echo -> (flip) -> (shuffle) -> batch -> batch echo, as ImagePipeline.batches()
 * does it. The echo mode picks which of the three echo stages repeats: examples
 * before augmentation (Choi et al.'s default: copies get different flips, and
 * the shuffle buffer spreads them apart), examples after it (identical copies),
 * or whole batches. Batches are made (arrays filled) only when the pipeline asks.
 */
export async function* imageBatches(examples: AsyncIterable<ImageExample>, c: ImageStageControls): AsyncGenerator<PendingBatch> {
  const markCopy = (ex: ImageExample): ImageExample => ({ ...ex, copy: true });
  const stage = (mode: EchoMode) => ({ factor: c.echoFactor, random: c.random, active: () => c.echoMode() === mode, echoed: () => c.echoed(1), markCopy });
  const early = echo(examples, stage('examples'), c.held.early);
  const augmented = c.augment ? flipExamples(early, c.random) : early;
  const late = echo(augmented, stage('examples-after-augment'), c.held.late);
  const shuffled = c.shuffles ? shuffleBuffer(late, c.shuffleBuffer, c.random, c.held.shuffle, c.shuffleWarmUp) : late;
  async function* groups(): AsyncGenerator<ImageExample[]> {
    for await (const group of chunk(shuffled, c.batchSize)) {
      c.duplicates(duplicatesIn(group));
      yield group;
    }
  }
  // An echoed batch is the group again, its examples marked as copies: each make() fills arrays of its own.
  const batchStage = { ...stage('batches'), echoed: (g: ImageExample[]) => c.echoed(g.length), markCopy: (g: ImageExample[]) => g.map(markCopy) };
  for await (const group of echo(groups(), batchStage, c.held.batches)) {
    yield { size: group.length, make: () => makeImageBatch(group, c.shape) };
  }
}

/** Up to 64 of a record's examples, kept for the lab's sample view. */
export function sampleOf(examples: ImageContent[], shape: ImageShape, group: number): SampleImages | undefined {
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
