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

export interface BrowserBuildReport {
  id: string;
  manifestUrl: string;
  images: { train: number; test: number };
  classes: string[];
  channels: 1 | 3;
  bytes: number;
  converted: { file: string; what: string }[];
  skipped: { file: string; reason: string }[];
}

export interface BuildWorkerApi {
  build(files: BuildFile[], options: BrowserBuildOptions, onProgress: (p: BuildProgress) => void): Promise<BrowserBuildReport>;
}
