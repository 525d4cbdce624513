// Builds a PCR dataset in the browser from dropped files, off the page thread,
// with the same ingest rules as `bytelab pcr build --folder`, and stores it in
// IndexedDB so the lab can train on it at once (and after a reload).
import * as Comlink from 'comlink';
import { loadTurboJpeg } from '../jpeg/turbo-browser.js';
import { assertModelInputSize, buildSplit, makeManifest, type LabeledScans } from '../pcr/build.js';
import { measureFidelity } from '../pcr/fidelity.js';
import { ingestImage, isColourFile, isImageFile, testSplit } from '../pcr/ingest.js';
import { RecordPrefix } from '../pcr/record.js';
import { describeLeftOut, NOT_AN_IMAGE, NOT_DECODED, NOT_IN_A_CLASS, type BrowserBuildReport, type BuildWorkerApi, type LeftOut } from './build-api.js';
import { distinctName, listLocalDatasets, localManifestUrl, saveLocalDataset } from '../storage/local-datasets.js';

/**
 * CLASS and FILE of ROOT/CLASS/.../FILE: a class is a folder right under the dropped one, its images at any depth below it
 * (as torchvision's ImageFolder and `bytelab pcr build --folder` read a folder; two red/small and blue/small folders are
 * not one class "small"). A file right under the root is in no class.
 */
function classAndFile(path: string): [string, string] | undefined {
  const parts = path.split('/').filter(Boolean);
  return parts.length >= 3 ? [parts[1]!, parts.slice(2).join('/')] : undefined;
}

const api: BuildWorkerApi = {
  async build(files, options, onProgress) {
    assertModelInputSize(options.width, options.height);
    if (files.length === 0) throw new Error(`the folder ${options.name} is empty: a dataset needs one subfolder of JPEG or PNG files per class`);
    const skipped: LeftOut[] = [];
    const images: { path: string; bytes: ArrayBuffer; cls: string; file: string }[] = [];
    for (const f of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
      const at = classAndFile(f.path);
      if (at && isImageFile(at[1])) images.push({ ...f, cls: at[0], file: at[1] });
      else skipped.push({ file: f.path, reason: at ? NOT_AN_IMAGE : NOT_IN_A_CLASS });
    }
    const needs = 'a dataset needs one subfolder of JPEG or PNG files per class, at least two';
    if (images.length === 0) throw new Error(`found no JPEG or PNG files in ${options.name}; ${needs}; ${describeLeftOut(skipped)}`);

    const channels = images.some((f) => isColourFile(new Uint8Array(f.bytes))) ? 3 : 1;
    const turbo = await loadTurboJpeg();
    const converted: BrowserBuildReport['converted'] = [];
    const read: { cls: string; name: string; scans: Uint8Array[] }[] = [];
    images.forEach((f, i) => {
      try {
        const ingested = ingestImage(new Uint8Array(f.bytes), { channels, quality: options.quality, turbo });
        if (ingested.converted) converted.push({ file: f.path, what: ingested.converted });
        // Split by the path below the dropped folder, as `bytelab pcr build --folder` does: the folder's own name moves no file.
        read.push({ cls: f.cls, name: `${f.cls}/${f.file}`, scans: ingested.scans });
      } catch (err) {
        skipped.push({ file: f.path, reason: NOT_DECODED, detail: (err as Error).message });
      }
      if (i % 8 === 0 || i === images.length - 1) onProgress({ done: i + 1, total: images.length, file: f.path });
    });
    // A class folder counts only if at least one of its images could be read.
    const classes = [...new Set(read.map((r) => r.cls))].sort();
    if (read.length === 0) throw new Error(`none of the ${images.length} JPEG or PNG files in ${options.name} could be read; ${describeLeftOut(skipped)}`);
    if (classes.length < 2) {
      throw new Error(`only ${options.name}/${classes[0]} has images that could be read; ${needs}; ${describeLeftOut(skipped)}`);
    }
    const splits: Record<'train' | 'test', LabeledScans[]> = { train: [], test: [] };
    const test = testSplit(read, options.testFraction);
    for (const [i, r] of read.entries()) splits[test[i] ? 'test' : 'train'].push({ scans: r.scans, label: classes.indexOf(r.cls) });
    if (splits.train.length === 0) throw new Error(`all ${read.length} images that could be read went to the test split; add more images`);
    const name = distinctName(
      options.name,
      (await listLocalDatasets()).map((d) => d.name),
    );

    const stored = new Map<string, Uint8Array>();
    const write = async (file: string, bytes: Uint8Array) => void stored.set(file, bytes);
    const manifestSplits: Record<string, { records: Awaited<ReturnType<typeof buildSplit>> }> = {};
    for (const split of ['train', 'test'] as const) {
      if (splits[split].length) manifestSplits[split] = { records: await buildSplit(split, splits[split], channels, options.recordSize, write) };
    }
    const manifest = makeManifest({
      name,
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
    const entry = await saveLocalDataset(id, name, stored);
    return {
      id,
      name,
      manifestUrl: localManifestUrl(id),
      images: { train: splits.train.length, test: splits.test.length },
      classes,
      channels,
      bytes: entry.bytes,
      converted,
      skipped,
    };
  },
};

Comlink.expose(api);
