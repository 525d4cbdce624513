// Turns labelled images into PCR records: every image is encoded as a
// progressive JPEG with the dataset's one scan script, and the scans are
// regrouped so that a prefix of a record is every image at one fidelity.
import { encodeProgressiveScans, scanCount, type RawImage } from '../jpeg/encoder.js';
import { MANIFEST_FORMAT, MANIFEST_VERSION, type ImageShape, type PcrManifest, type RecordEntry } from './manifest.js';
import { writeRecord } from './record.js';

export interface LabeledImage {
  image: RawImage;
  label: number;
}

export interface BuildOptions {
  /** Images per record file (the PCR reference uses 1024). */
  recordSize: number;
  /** JPEG quality, 1..100. */
  quality: number;
}

export const DEFAULT_BUILD: BuildOptions = { recordSize: 1024, quality: 90 };

/** Where records go: a folder in Node, IndexedDB or a download in the browser. */
export type WriteFile = (name: string, bytes: Uint8Array) => Promise<void>;

/** Encodes one split into records named `${split}-00000.pcr`, ... and returns their manifest entries. */
export async function buildSplit(split: string, items: Iterable<LabeledImage>, shape: ImageShape, opts: BuildOptions, write: WriteFile): Promise<RecordEntry[]> {
  const records: RecordEntry[] = [];
  const groups = scanCount(shape.channels);
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

  for (const { image, label } of items) {
    if (image.width !== shape.width || image.height !== shape.height || image.channels !== shape.channels) {
      throw new Error(`image ${records.length * opts.recordSize + scans.length} of split ${split} is ${image.width}x${image.height}x${image.channels}, the dataset is ${shape.width}x${shape.height}x${shape.channels}`);
    }
    const chunks = encodeProgressiveScans(image, { quality: opts.quality });
    if (chunks.length !== groups) throw new Error(`encoder gave ${chunks.length} scans, the scan script has ${groups}`);
    scans.push(chunks);
    labels.push(label);
    if (scans.length === opts.recordSize) await flush();
  }
  await flush();
  return records;
}

export function makeManifest(fields: Pick<PcrManifest, 'name' | 'classes' | 'image' | 'quality' | 'splits'> & Partial<Pick<PcrManifest, 'description' | 'attribution'>>): PcrManifest {
  return { format: MANIFEST_FORMAT, version: MANIFEST_VERSION, scanGroups: scanCount(fields.image.channels), ...fields };
}
