// "Build a dataset": a dropped folder becomes a PCR dataset in this browser
// (build-worker.ts), listed with the other datasets, downloadable as a .zip.
import * as Comlink from 'comlink';
import { zipSync } from 'fflate';
import { describeLeftOut, type BrowserBuildReport, type BuildFile, type BuildWorkerApi } from '../pipeline/build-api.js';
import { wrapWorker } from '../pipeline/client.js';
import { filesUnder, type DroppedEntry } from './dropped-folder.js';
import { attachFieldError } from './a11y.js';
import { checkImageSize } from './validate.js';
import { deleteLocalDataset, listLocalDatasets, LOCAL_PREFIX, readLocalFile, type LocalDataset } from '../storage/local-datasets.js';

export interface BuildPanel {
  /** Datasets built in this browser, for the dataset list. */
  list(): Promise<LocalDataset[]>;
  /** Enables Download / Delete when a dataset built here is selected (Delete: and no run is open, which may read it). */
  refresh(): void;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** The class names, a few then "and N more", so the person sees what the build took as a class (a folder right under the one dropped). */
function namesOf(classes: string[], shown = 6): string {
  return classes.length > shown ? `${classes.slice(0, shown).join(', ')} and ${classes.length - shown} more` : classes.join(', ');
}

export function setupBuildPanel(opts: {
  selected: () => string;
  /** The chosen dataset as the list names it. */
  selectedName: () => string | undefined;
  /** A run is open (or opening): the chosen dataset may be what it reads. */
  busy: () => boolean;
  onBuilt: (r: BrowserBuildReport) => void;
  onDeleted: () => void;
  log: (m: string, kind?: 'info' | 'warning' | 'error') => void;
}): BuildPanel {
  const folder = $<HTMLInputElement>('build-folder');
  const size = $<HTMLInputElement>('build-size');
  const status = $('build-status');
  const download = $<HTMLButtonElement>('build-download');
  const remove = $<HTMLButtonElement>('build-delete');

  // The model input size is checked as it is typed, as the page's other fields are (main.ts, field()).
  const sizeError = attachFieldError(size);
  const checkSize = () => {
    const r = checkImageSize(size.value);
    sizeError.textContent = r.ok ? '' : r.reason;
    size.setAttribute('aria-invalid', String(!r.ok));
    return r;
  };
  size.addEventListener('input', checkSize);
  checkSize();

  const localId = () => (opts.selected().startsWith(LOCAL_PREFIX) ? opts.selected().slice(LOCAL_PREFIX.length).split('/')[0] : undefined);
  const refreshButtons = () => {
    download.disabled = !localId();
    remove.disabled = !localId() || opts.busy();
    // They act on the dataset chosen in the list, which need not be the one the status line last built: named.
    const name = localId() ? opts.selectedName() : undefined;
    for (const [b, verb] of [
      [download, 'Download'],
      [remove, 'Delete'],
    ] as const) {
      if (name) b.setAttribute('aria-label', `${verb} ${name}`);
      else b.removeAttribute('aria-label');
      b.title = name ? `${verb} ${name}, the dataset chosen in the list` : 'for a dataset built in this browser, chosen in the list';
    }
    // Delete turned off under the keyboard's focus (its dataset went, the list moved to one not built here): the focus goes
    // to the line that says what happened, not to the page.
    if (remove.disabled && document.activeElement === remove) status.focus({ preventScroll: true });
  };

  folder.addEventListener('change', () => {
    const files = [...(folder.files ?? [])].map((f) => ({ path: f.webkitRelativePath || f.name, file: f }));
    void build(files);
  });

  // A folder dropped anywhere on the panel builds the same way as one picked.
  const panel = $('build-panel');
  panel.addEventListener('dragover', (e) => {
    e.preventDefault();
    panel.classList.add('drop-target');
  });
  panel.addEventListener('dragleave', () => panel.classList.remove('drop-target'));
  panel.addEventListener('drop', async (e) => {
    e.preventDefault();
    panel.classList.remove('drop-target');
    const entries = [...(e.dataTransfer?.items ?? [])].map((i) => i.webkitGetAsEntry() as DroppedEntry | null).filter((x) => x !== null);
    if (entries.length !== 1 || !entries[0]!.isDirectory) {
      if (!building) status.textContent = 'drop one folder, with one subfolder of images per class';
      return;
    }
    if (!building) status.textContent = 'reading the dropped folder…';
    void build(await filesUnder(entries), entries[0]!.name);
  });

  /** A build is running: one at a time (two builds of one folder would both take its name, and share the status line). */
  let building = false;

  /** Builds from the files of one folder (`folderName` names a dropped one, which may hold none; a picked empty one gives no name). */
  async function build(files: { path: string; file: File }[], folderName?: string): Promise<void> {
    const refuse = (why: string) => {
      status.textContent = `not built: ${why}`;
      opts.log(`dataset not built: ${why}`, 'warning');
      folder.value = '';
    };
    if (building) {
      opts.log(`dataset not built: another build is running; drop the folder again once it is done`, 'warning');
      return;
    }
    const checked = checkSize();
    if (!checked.ok) return refuse(checked.reason);
    if (files.length === 0) return refuse(`the folder${folderName ? ` "${folderName}"` : ''} is empty: it has no class folders with images`);
    const root = files[0]!.path.split('/')[0] || 'dataset';
    building = true;
    folder.disabled = true;
    status.textContent = `reading ${files.length} files…`;
    const worker = new Worker(new URL('../pipeline/build-worker.ts', import.meta.url), { type: 'module', name: 'dataset-build' });
    const api = wrapWorker<BuildWorkerApi>(worker, 'the build worker');
    try {
      const inputs: BuildFile[] = await Promise.all(files.map(async (f) => ({ path: f.path, bytes: await f.file.arrayBuffer() })));
      const report = await api.build(
        Comlink.transfer(
          inputs,
          inputs.map((f) => f.bytes),
        ),
        { name: root, ...checked.value, quality: 90, recordSize: 256, testFraction: 0.1 },
        Comlink.proxy((p) => (status.textContent = `building: ${p.done} / ${p.total} (${p.file})`)),
      );
      status.textContent =
        `built "${report.name}": ${report.images.train} + ${report.images.test} images, ${report.classes.length} classes (${namesOf(report.classes)}), ` +
        `${report.channels === 3 ? 'colour' : 'grayscale'}, ${(report.bytes / 1024).toFixed(0)} KiB; ${report.converted.length} converted, ` +
        describeLeftOut(report.skipped);
      // About 1 image in 10 goes to the test split, by its name, and one of each class of 2 or more (pcr/ingest.ts, testSplit):
      // only a folder of one image a class has none there. (Its CLASS_SIZE_FOR_TEST is written out: ingest.ts would bring the
      // encoders into the page.)
      if (report.images.test === 0) {
        const why = 'no test images (a class needs 2 images or more for one to go to the test split): runs on it show no accuracy';
        status.textContent += `; ${why}`;
        opts.log(`"${report.name}" has ${why}`, 'warning');
      }
      for (const c of report.converted) opts.log(`${c.file}: ${c.what}`, 'info');
      for (const s of report.skipped) opts.log(`${s.file} left out: ${s.reason}${s.detail ? `: ${s.detail}` : ''}`, 'warning');
      opts.onBuilt(report);
    } catch (err) {
      // Worded and logged as the refusals above are: the folder's contents are the usual cause (none of its images read).
      status.textContent = `not built: ${(err as Error).message}`;
      opts.log(`dataset not built: ${(err as Error).message}`, 'warning');
    } finally {
      worker.terminate();
      building = false;
      folder.disabled = false;
      folder.value = '';
      refreshButtons();
    }
  }

  download.addEventListener('click', async () => {
    const id = localId();
    const entry = (await listLocalDatasets()).find((d) => d.id === id);
    if (!entry) return;
    const files: Record<string, Uint8Array> = {};
    for (const f of entry.files) files[`${entry.name}/${f}`] = (await readLocalFile(`${LOCAL_PREFIX}${id}/${f}`))!;
    // Records are already compressed: store them, do not deflate again.
    const zip = zipSync(files, { level: 0 });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([zip as Uint8Array<ArrayBuffer>], { type: 'application/zip' }));
    a.download = `${entry.name}.zip`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  });

  remove.addEventListener('click', async () => {
    const id = localId();
    const entry = (await listLocalDatasets()).find((d) => d.id === id);
    if (!id || !entry || opts.busy()) return;
    // Not to be had back: the source folder may be gone, and a rebuild is minutes on a large folder.
    if (!confirm(`Delete "${entry.name}" (${(entry.bytes / 1024).toFixed(0)} KiB) from this browser? It cannot be undone.`)) return;
    await deleteLocalDataset(id);
    status.textContent = `deleted "${entry.name}"`;
    opts.onDeleted();
    refreshButtons();
  });

  return { list: listLocalDatasets, refresh: refreshButtons };
}
