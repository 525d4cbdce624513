// Turns labelled images into PCR records. Every image arrives as the chunks of
// one progressive JPEG with the dataset's scan script (encoded from pixels, or
// transcoded losslessly from a JPEG); the records regroup the scans so that a
// prefix of a record is every image at one fidelity.
import { encodeProgressiveScans, scanCount, type RawImage } from '../jpeg/encoder.js';
import { MANIFEST_FORMAT, MANIFEST_VERSION, MODEL_INPUT_SIDE, type PcrManifest, type RecordEntry } from './manifest.js';
import { writeRecord } from './record.js';

export interface LabeledImage {
  image: RawImage;
  label: number;
}

/** One image ready for a record: its scans (chunk 1 = SOI + headers + scan 1, no EOI). */
export interface LabeledScans {
  scans: Uint8Array[];
  label: number;
}

export interface BuildOptions {
  /** Images per record file (the PCR reference uses 1024). */
  recordSize: number;
  /** JPEG quality, 1..100, for images encoded from pixels. */
  quality: number;
}

export const DEFAULT_BUILD: BuildOptions = { recordSize: 1024, quality: 90 };

/** Where records go: a folder in Node, IndexedDB or a download in the browser. */
export type WriteFile = (name: string, bytes: Uint8Array) => Promise<void>;

/** Encodes pixel images with the dataset's scan script. */
export function* encodeImages(items: Iterable<LabeledImage>, quality: number): Generator<LabeledScans> {
  for (const { image, label } of items) yield { scans: encodeProgressiveScans(image, { quality }), label };
}

/** Writes one split as records named `${split}-00000.pcr`, ... and returns their manifest entries. */
export async function buildSplit(split: string, items: Iterable<LabeledScans>, channels: 1 | 3, recordSize: number, write: WriteFile): Promise<RecordEntry[]> {
  const records: RecordEntry[] = [];
  const groups = scanCount(channels);
  let labels: number[] = [];
  let scans: Uint8Array[][] = [];

  const flush = async () => {
    if (scans.length === 0) return;
    const file = `${split}-${String(records.length).padStart(5, '0')}.pcr`;
    const { bytes, groupEnds } = writeRecord(labels, scans);
    await write(file, bytes);
    records.push({ file, images: scans.length, groupEnds });
    labels = [];
    scans = [];
  };

  for (const item of items) {
    if (item.scans.length !== groups) {
      throw new Error(
        `image ${records.length * recordSize + scans.length} of split ${split} has ${item.scans.length} scans, the dataset's scan script has ${groups}`,
      );
    }
    scans.push(item.scans);
    labels.push(item.label);
    if (scans.length === recordSize) await flush();
  }
  await flush();
  return records;
}

/** Throws unless width x height is a model input size the lab can train at. */
export function assertModelInputSize(width: number, height: number): void {
  const { min, max } = MODEL_INPUT_SIDE;
  const fits = (n: number) => Number.isInteger(n) && n >= min && n <= max;
  if (!fits(width) || !fits(height)) throw new Error(`model input size ${width}x${height} is out of range: each side must be ${min} to ${max} pixels`);
}

/** A dataset's manifest; a variable-size dataset's image size is the model input size, so it must be one the lab can train at. */
export function makeManifest(
  fields: Pick<PcrManifest, 'name' | 'classes' | 'image' | 'quality' | 'splits'> & Partial<Pick<PcrManifest, 'description' | 'attribution' | 'variableSize'>>,
): PcrManifest {
  if (fields.variableSize) assertModelInputSize(fields.image.width, fields.image.height);
  return { format: MANIFEST_FORMAT, version: MANIFEST_VERSION, scanGroups: scanCount(fields.image.channels), ...fields };
}
