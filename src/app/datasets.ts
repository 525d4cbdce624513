// Datasets the lab offers out of the box. Any other PCR dataset can be opened by
// the URL of its manifest.json (docs/pcr.md).
import type { DatasetInfo } from '../pipeline/api.js';
import { fetchManifest } from '../pipeline/base.js';
import { bytesForGroup, imageCount, validateManifest } from '../pcr/manifest.js';
import { tocRecordBytes, tocSplitRows, validateTocManifest, type TocSplitEntry } from '../toc/dataset.js';
import { isReferenceIndexUrl } from '../pipeline/reference-records.js';
export interface DatasetEntry {
  id: string;
  /** Short enough for the closed list at the controls' width; `about` says the rest (the option's tooltip). */
  label: string;
  about: string;
  /** Relative to the page. */
  manifest: string;
  kind: 'image' | 'tabular';
  /** The command that builds it, for datasets not bundled with the lab. */
  build?: string;
}

export const DATASETS: DatasetEntry[] = [
  {
    id: 'fashion-mnist-mini',
    label: 'Fashion-MNIST mini, 8k (bundled)',
    about: 'Fashion-MNIST, 8,192 training + 1,024 test images, PCR',
    manifest: 'datasets/fashion-mnist-mini/manifest.json',
    kind: 'image',
  },
  {
    id: 'fashion-mnist',
    label: 'Fashion-MNIST 60k',
    about: 'Fashion-MNIST, 60,000 training + 10,000 test images, PCR',
    manifest: 'data/fashion-mnist/manifest.json',
    build: 'npm run data:full',
    kind: 'image',
  },
  {
    id: 'synthetic-coarse',
    label: 'Synthetic coarse (colour)',
    about: 'Synthetic coarse: hue x shape, 128x128 colour, 4,000 + 800 images, PCR',
    manifest: 'data/synthetic-coarse/manifest.json',
    build: 'npm run data:synthetic',
    kind: 'image',
  },
  {
    id: 'synthetic-fine',
    label: 'Synthetic fine (colour)',
    about: 'Synthetic fine: 1-3 px textures, 128x128 colour, 4,000 + 800 images, PCR',
    manifest: 'data/synthetic-fine/manifest.json',
    build: 'npm run data:synthetic',
    kind: 'image',
  },
  {
    id: 'flights-250k',
    label: 'Flights 250k (TOC, bundled)',
    about: 'Flights, delay > 15 min: 250,000 rows, TOC',
    manifest: 'datasets/flights-250k-toc/manifest.json',
    kind: 'tabular',
  },
  {
    id: 'birdstrikes',
    label: 'Bird strikes (TOC, bundled)',
    about: 'Bird strikes, amount of damage: 10,000 rows, TOC',
    manifest: 'datasets/birdstrikes-toc/manifest.json',
    kind: 'tabular',
  },
  {
    // The same rows in the batch size and column order the build chose for the kernels (toc build --batch-size auto).
    id: 'birdstrikes-2000',
    label: 'Bird strikes, 2k batches (TOC)',
    about: 'Bird strikes in 2,000-row batches and the column order chosen for reuse by the TOC kernels, bundled',
    manifest: 'datasets/birdstrikes-2000-toc/manifest.json',
    kind: 'tabular',
  },
  {
    id: 'flights-3m',
    label: 'Flights 3M (TOC)',
    about: 'Flights, delay > 15 min: all 3 million rows, TOC',
    manifest: 'data/flights-3m-toc/manifest.json',
    build: 'npm run data:toc:flights',
    kind: 'tabular',
  },
  {
    id: 'fashion-mnist-toc',
    label: 'Fashion-MNIST table (TOC)',
    about: 'Fashion-MNIST pixels as a table: 60,000 + 10,000 rows of 784 columns, TOC',
    manifest: 'data/fashion-mnist-toc/manifest.json',
    build: 'npm run data:toc:fashion',
    kind: 'tabular',
  },
];

/** A manifest that has not come in this long is given up on (the list says so; a typed one is read again). */
export const MANIFEST_READ_TIMEOUT_MS = 20_000;

/**
 * The folders under data/ (the datasets built on demand), from the server's JSON listing (the dev server's, and
 * nginx's autoindex in deploy/nginx); undefined where the host gives none, and then every dataset is probed.
 */
export async function builtDataFolders(page: string): Promise<Set<string> | undefined> {
  try {
    const res = await fetch(new URL('data/', page), { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(MANIFEST_READ_TIMEOUT_MS) });
    if (!res.ok || !res.headers.get('Content-Type')?.includes('json')) return undefined;
    const list: unknown = await res.json();
    if (!Array.isArray(list)) return undefined;
    return new Set(list.filter((e) => e?.type === 'directory' && typeof e.name === 'string').map((e) => e.name as string));
  } catch {
    return undefined;
  }
}

/** Probes one of the lab's own datasets, unless the server's listing says it was not built (no request, so no 404 in the console). */
export function probeOwnDataset(d: DatasetEntry, page: string, built: Set<string> | undefined): Promise<DatasetProbe> {
  const folder = d.manifest.match(/^data\/([^/]+)\//)?.[1];
  if (built && folder && !built.has(folder)) return Promise.resolve({ ok: false, reason: `${d.manifest}: not on this server` });
  // Bounded: the page's Start waits for the list (a server that never answers would keep it off).
  return probeDataset(new URL(d.manifest, page).href, AbortSignal.timeout(MANIFEST_READ_TIMEOUT_MS));
}

/** What a dataset's scan groups cost: the slider's label and the group table, before a run has opened the dataset. */
export type GroupCosts = Pick<DatasetInfo, 'kind' | 'fidelityLevels' | 'bytesPerLevel' | 'examples' | 'records' | 'msssim'>;

/** What the page learns from a dataset's manifest before a run: whether it is there, and what it holds. */
export type DatasetProbe =
  | {
      ok: true;
      kind: DatasetEntry['kind'];
      fidelityLevels?: number;
      name?: string;
      costs?: GroupCosts;
      /** TOC: rows in the training split's first mini-batch, the size the dataset fixes. */
      batchRows?: number;
    }
  | { ok: false; reason: string };

/**
 * Reads a manifest the way the pipeline will, to list only datasets that exist
 * and offer only models that can read them (a dataset built in this browser is read from its storage). A PCR_index.pb
 * (reference format) is taken to be images without a read.
 */
export async function probeDataset(url: string, signal?: AbortSignal): Promise<DatasetProbe> {
  if (isReferenceIndexUrl(url)) return { ok: true, kind: 'image' };
  try {
    const json = (await fetchManifest(url, signal)) as { format?: unknown; scanGroups?: unknown; name?: unknown };
    const name = typeof json.name === 'string' ? json.name : undefined;
    if (json.format === 'bytelab-toc') {
      const costs = tocCosts(json, url);
      const batchRows = tocBatchRows(json, url);
      return { ok: true, kind: 'tabular', fidelityLevels: 1, name, ...(costs ? { costs } : {}), ...(batchRows ? { batchRows } : {}) };
    }
    if (json.format === 'bytelab-pcr') {
      const costs = pcrCosts(json, url);
      return { ok: true, kind: 'image', fidelityLevels: typeof json.scanGroups === 'number' ? json.scanGroups : undefined, name, ...(costs ? { costs } : {}) };
    }
    const format = json.format === undefined ? 'it has no "format"' : `its format is ${JSON.stringify(json.format)}`;
    return { ok: false, reason: `${url}: not a bytelab manifest (${format}; "bytelab-pcr" or "bytelab-toc" expected)` };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/** The training split's bytes at each scan group, from a PCR manifest; undefined when it is not valid (a run says why). */
function pcrCosts(json: unknown, url: string): GroupCosts | undefined {
  try {
    const m = validateManifest(json, url);
    const examples = imageCount(m, 'train');
    if (!examples) return undefined;
    const bytesPerLevel = Array.from({ length: m.scanGroups }, (_, g) => bytesForGroup(m, 'train', g + 1));
    const records = m.splits.train?.records.length ?? 0;
    return { kind: 'image', fidelityLevels: m.scanGroups, examples, records, bytesPerLevel, ...(m.msssim ? { msssim: m.msssim } : {}) };
  } catch {
    return undefined;
  }
}

/** Rows of the first mini-batch of a TOC manifest's training split; undefined when it is not valid (a run says why). */
function tocBatchRows(json: unknown, url: string): number | undefined {
  try {
    return (validateTocManifest(json, url).splits as Record<string, TocSplitEntry>).train?.records[0]?.batches[0]?.rows;
  } catch {
    return undefined;
  }
}

/** A TOC table's one fidelity: the training split's bytes, rows and records. */
function tocCosts(json: unknown, url: string): GroupCosts | undefined {
  try {
    const train = (validateTocManifest(json, url).splits as Record<string, TocSplitEntry>).train;
    const examples = tocSplitRows(train);
    if (!train || !examples) return undefined;
    const bytes = train.records.reduce((n, r) => n + tocRecordBytes(r), 0);
    return { kind: 'tabular', fidelityLevels: 1, examples, records: train.records.length, bytesPerLevel: [bytes] };
  } catch {
    return undefined;
  }
}
