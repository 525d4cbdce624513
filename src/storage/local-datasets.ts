// Datasets built in the browser live in IndexedDB (through idb): the one storage
// API both the page (listing, download, delete) and the workers use. The pipeline
// reads them with the same code as datasets on a server: a URL of the form
// idb://local/<id>/<file> stands for a file in this store, and a "Range read"
// of it returns a prefix of the stored bytes.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';

export interface LocalDataset {
  id: string;
  name: string;
  createdAt: number;
  bytes: number;
  files: string[];
}

interface Schema extends DBSchema {
  datasets: { key: string; value: LocalDataset };
  files: { key: string; value: Uint8Array };
}

export const LOCAL_PREFIX = 'idb://local/';

let db: Promise<IDBPDatabase<Schema>> | undefined;

function open(): Promise<IDBPDatabase<Schema>> {
  db ??= openDB<Schema>('bytelab', 1, {
    upgrade(d) {
      d.createObjectStore('datasets', { keyPath: 'id' });
      d.createObjectStore('files');
    },
  });
  return db;
}

export const localManifestUrl = (id: string) => `${LOCAL_PREFIX}${id}/manifest.json`;
/** The id of a dataset from its manifest URL (localManifestUrl's inverse). */
export const localIdOf = (manifestUrl: string) => manifestUrl.slice(LOCAL_PREFIX.length).replace(/\/manifest\.json$/, '');

/** Saves every file of a dataset in one transaction: either all of it is stored or none. */
export async function saveLocalDataset(id: string, name: string, files: Map<string, Uint8Array>): Promise<LocalDataset> {
  const d = await open();
  const tx = d.transaction(['datasets', 'files'], 'readwrite');
  const entry: LocalDataset = { id, name, createdAt: Date.now(), bytes: [...files.values()].reduce((n, b) => n + b.byteLength, 0), files: [...files.keys()] };
  await Promise.all([
    ...[...files].map(([file, bytes]) => tx.objectStore('files').put(bytes, `${id}/${file}`)),
    tx.objectStore('datasets').put(entry),
    tx.done,
  ]);
  return entry;
}

/** `name`, or `name (2)`, `name (3)`... whichever no dataset in `taken` has, so two builds of one folder can be told apart. */
export function distinctName(name: string, taken: Iterable<string>): string {
  const names = new Set(taken);
  let n = 1;
  let candidate = name;
  while (names.has(candidate)) candidate = `${name} (${++n})`;
  return candidate;
}

export async function listLocalDatasets(): Promise<LocalDataset[]> {
  return (await (await open()).getAll('datasets')).sort((a, b) => b.createdAt - a.createdAt);
}

/** Whether a manifest URL names a dataset built in a browser that this browser does not hold (deleted, or built in another). */
export async function isMissingLocal(manifestUrl: string): Promise<boolean> {
  if (!manifestUrl.startsWith(LOCAL_PREFIX)) return false;
  const id = localIdOf(manifestUrl);
  return !(await listLocalDatasets().catch(() => [])).some((d) => d.id === id);
}

export async function deleteLocalDataset(id: string): Promise<void> {
  const d = await open();
  const entry = await d.get('datasets', id);
  const tx = d.transaction(['datasets', 'files'], 'readwrite');
  await Promise.all([...(entry?.files ?? []).map((f) => tx.objectStore('files').delete(`${id}/${f}`)), tx.objectStore('datasets').delete(id), tx.done]);
}

/** The bytes of a stored file, from an idb://local/<id>/<file> URL; undefined if absent. */
export async function readLocalFile(url: string): Promise<Uint8Array | undefined> {
  if (!url.startsWith(LOCAL_PREFIX)) throw new Error(`${url} is not a local dataset URL`);
  return (await open()).get('files', url.slice(LOCAL_PREFIX.length));
}
