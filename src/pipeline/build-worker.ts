// Builds a PCR dataset in the browser from dropped files, off the page thread,
// with the same ingest rules as `bytelab pcr build --folder`, and stores it in
// IndexedDB so the lab can train on it at once (and after a reload).
import * as Comlink from 'comlink';
import { loadTurboJpeg } from '../jpeg/turbo-browser.js';
import { buildSplit, makeManifest, type LabeledScans } from '../pcr/build.js';
import { measureFidelity } from '../pcr/fidelity.js';
import { ingestImage, isColourFile, isImageFile, isTestFile } from '../pcr/ingest.js';
import { RecordPrefix } from '../pcr/record.js';
import type { BrowserBuildReport, BuildWorkerApi } from './build-api.js';
import { localManifestUrl, saveLocalDataset } from '../storage/local-datasets.js';

/** CLASS/FILE from a path whose last two parts are the class folder and the file. */
function classAndFile(path: string): [string, string] | undefined {
  const parts = path.split('/').filter(Boolean);
  return parts.length >= 2 ? [parts[parts.length - 2]!, parts[parts.length - 1]!] : undefined;
}

const api: BuildWorkerApi = {
  async build(files, options, onProgress) {
    const images = files
      .map((f) => ({ ...f, at: classAndFile(f.path) }))
      .filter((f): f is typeof f & { at: [string, string] } => !!f.at && isImageFile(f.at[1]))
      .sort((a, b) => a.path.localeCompare(b.path));
    const classes = [...new Set(images.map((f) => f.at[0]))].sort();
    if (classes.length < 2)
      throw new Error(`found ${classes.length} class folder(s) with images; a dataset needs a folder with one subfolder per class (at least two)`);
    const channels = images.some((f) => isColourFile(f.at[1], new Uint8Array(f.bytes))) ? 3 : 1;
    const turbo = await loadTurboJpeg();
    const report: BrowserBuildReport = { id: '', manifestUrl: '', images: { train: 0, test: 0 }, classes, channels, bytes: 0, converted: [], skipped: [] };
    const splits: Record<'train' | 'test', LabeledScans[]> = { train: [], test: [] };
    images.forEach((f, i) => {
      try {
        const { scans, converted } = ingestImage(f.at[1], new Uint8Array(f.bytes), { channels, quality: options.quality, turbo });
        if (converted) report.converted.push({ file: f.path, what: converted });
        splits[isTestFile(f.path, options.testFraction) ? 'test' : 'train'].push({ scans, label: classes.indexOf(f.at[0]) });
      } catch (err) {
        report.skipped.push({ file: f.path, reason: (err as Error).message });
      }
      if (i % 8 === 0 || i === images.length - 1) onProgress({ done: i + 1, total: images.length, file: f.path });
    });
    if (splits.train.length === 0) throw new Error(`no image could be read (${report.skipped.length} left out): ${report.skipped[0]?.reason ?? ''}`);

    const stored = new Map<string, Uint8Array>();
    const write = async (name: string, bytes: Uint8Array) => void stored.set(name, bytes);
    const manifestSplits: Record<string, { records: Awaited<ReturnType<typeof buildSplit>> }> = {};
    for (const split of ['train', 'test'] as const) {
      if (splits[split].length) manifestSplits[split] = { records: await buildSplit(split, splits[split], channels, options.recordSize, write) };
    }
    const manifest = makeManifest({
      name: options.name,
      classes,
      image: { width: options.width, height: options.height, channels },
      quality: options.quality,
      variableSize: true,
      splits: manifestSplits,
    });
    const first = manifestSplits.train!.records.slice(0, 4).map((r) => new RecordPrefix(stored.get(r.file)!, r.file));
    manifest.msssim = measureFidelity(first, turbo, channels, 64).map((f) => Number((Number.isFinite(f.msssim) ? f.msssim : 0).toFixed(4)));
    stored.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest)));

    const id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const entry = await saveLocalDataset(id, options.name, stored);
    return { ...report, id, manifestUrl: localManifestUrl(id), images: { train: splits.train.length, test: splits.test.length }, bytes: entry.bytes };
  },
};

Comlink.expose(api);
