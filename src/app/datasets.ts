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
  { id: 'synthetic-coarse', label: 'Synthetic coarse: hue x shape, 128x128 colour (4,000 + 800; npm run data:synthetic)', manifest: 'data/synthetic-coarse/manifest.json', kind: 'image' },
  { id: 'synthetic-fine', label: 'Synthetic fine: 1-3 px textures, 128x128 colour (4,000 + 800; npm run data:synthetic)', manifest: 'data/synthetic-fine/manifest.json', kind: 'image' },
  { id: 'flights-250k', label: 'Flights, delay > 15 min (250k rows, TOC, bundled)', manifest: 'datasets/flights-250k-toc/manifest.json', kind: 'tabular' },
  { id: 'birdstrikes', label: 'Bird strikes, damage (10k rows, TOC, bundled)', manifest: 'datasets/birdstrikes-toc/manifest.json', kind: 'tabular' },
  { id: 'flights-3m', label: 'Flights, all 3 million rows (TOC; npm run data:toc:flights)', manifest: 'data/flights-3m-toc/manifest.json', kind: 'tabular' },
  { id: 'fashion-mnist-toc', label: 'Fashion-MNIST pixels as a table (TOC; npm run data:toc:fashion)', manifest: 'data/fashion-mnist-toc/manifest.json', kind: 'tabular' },
];
