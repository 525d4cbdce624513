// A toy TOC dataset for the pipeline tests: 100 rows of 12 columns, batches of
// 10 rows, 4 batches per record (3 records), with a row's content known from its index.
import { TocSplitWriter, type TocManifest } from '../../src/toc/dataset.js';

export const COLS = 12;
export const ROWS = 100;

/** Row r: a one-hot of r % 4 in columns 0..3 and a value r % 5 / 4 in column 4 + r % 8; label r % 3. */
export function row(r: number): { cols: number[]; vals: number[]; label: number } {
  return { cols: [r % 4, 4 + (r % 8)], vals: [1, (r % 5) / 4], label: r % 3 };
}

export function buildDataset(): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const writer = new TocSplitWriter({
    split: 'train',
    columns: COLS,
    classes: 3,
    batchRows: 10,
    batchesPerRecord: 4,
    onRecord: (f, b) => void files.set(f, b),
  });
  for (let r = 0; r < ROWS; r++) {
    const { cols, vals, label } = row(r);
    writer.addRow(cols, vals, 2, label);
  }
  const manifest: TocManifest = {
    format: 'bytelab-toc',
    version: 1,
    name: 'toy',
    classes: ['a', 'b', 'c'],
    columns: COLS,
    featureNames: Array.from({ length: COLS }, (_, i) => `f${i}`),
    rows: { train: ROWS },
    splits: { train: writer.finish() },
  };
  files.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest)));
  return files;
}
