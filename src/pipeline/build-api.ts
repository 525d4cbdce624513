// The typed API of the dataset-build worker (build-worker.ts): turns a dropped
// folder of JPEG/PNG files into a PCR dataset stored in this browser.

export interface BuildFile {
  /** Path inside the dropped folder: CLASS/FILE.jpg (or ROOT/CLASS/FILE.jpg). */
  path: string;
  bytes: ArrayBuffer;
}

export interface BrowserBuildOptions {
  name: string;
  /** Model input size; images keep their own size in the records. */
  width: number;
  height: number;
  quality: number;
  recordSize: number;
  testFraction: number;
}

export type BuildProgress = { done: number; total: number; file: string };

/** A file the build left out: the reason (files are grouped by it) and, for a file that could not be decoded, what the decoder said. */
export interface LeftOut {
  file: string;
  reason: string;
  detail?: string;
}

export const NOT_AN_IMAGE = 'not an image type the build reads (JPEG or PNG)';
export const NOT_DECODED = 'could not be decoded';
export const NOT_IN_A_CLASS = 'not in a class folder (a folder right under the one dropped)';

export interface BrowserBuildReport {
  id: string;
  /** The name in the dataset list: the folder's, with " (2)", " (3)"... if a dataset built here already has it. */
  name: string;
  manifestUrl: string;
  images: { train: number; test: number };
  classes: string[];
  channels: 1 | 3;
  bytes: number;
  converted: { file: string; what: string }[];
  skipped: LeftOut[];
}

export interface BuildWorkerApi {
  build(files: BuildFile[], options: BrowserBuildOptions, onProgress: (p: BuildProgress) => void): Promise<BrowserBuildReport>;
}

/** The files left out, for a status line: how many, and by reason a few names, then "and N more". */
export function describeLeftOut(skipped: LeftOut[], shown = 3): string {
  if (skipped.length === 0) return 'nothing left out';
  const byReason = new Map<string, string[]>();
  for (const s of skipped) byReason.set(s.reason, [...(byReason.get(s.reason) ?? []), s.file]);
  const groups = [...byReason].map(([reason, files]) => {
    const more = files.length > shown ? ` and ${files.length - shown} more` : '';
    return `${reason}: ${files.slice(0, shown).join(', ')}${more}`;
  });
  return `${skipped.length} left out (${groups.join('; ')})`;
}
