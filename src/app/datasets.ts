// Datasets the lab offers out of the box. Any other PCR dataset can be opened by
// the URL of its manifest.json (docs/pcr.md).
export interface DatasetEntry {
  id: string;
  label: string;
  /** Relative to the page. */
  manifest: string;
  kind: 'image' | 'tabular';
}

export const DATASETS: DatasetEntry[] = [
  { id: 'fashion-mnist-mini', label: 'Fashion-MNIST (8,192 + 1,024, bundled)', manifest: 'datasets/fashion-mnist-mini/manifest.json', kind: 'image' },
  { id: 'fashion-mnist', label: 'Fashion-MNIST (60,000 + 10,000; npm run data:full)', manifest: 'data/fashion-mnist/manifest.json', kind: 'image' },
];
