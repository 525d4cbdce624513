// Saving and loading trained models in tfjs's own formats: in this browser
// (tfjs's IndexedDB store, indexeddb://) and as a model.json + weights.bin
// download, which loads back from files. A loaded model starts a run: it is
// evaluated on the test split before its first step, then trains on.
import * as tf from '@tensorflow/tfjs';
// tf.io does not export it, and its downloads:// router is registered as a side effect that a production build drops.
import { browserDownloads } from '@tensorflow/tfjs-core/dist/io/browser_files.js';
import { webgpuBackend } from '../gpu/backend.js';
import type { DatasetInfo } from '../pipeline/api.js';
import { fromArtifacts, toArtifacts, type ModelFileMeta } from '../train/model-file.js';
import { MODELS } from '../train/models/registry.js';
import { LIVE_STATES, type RunState } from '../train/run-state.js';
import type { LabSession } from '../train/session.js';
import type { ModelState } from '../train/trainer.js';
import { DATASETS } from './datasets.js';
import { count } from './format.js';

/** tfjs's IndexedDB models that are bytelab's start with this. */
const PREFIX = 'indexeddb://bytelab-model/';

const STOP_FIRST = 'stop the run first: a loaded model starts a run of its own';

export interface ModelPanelElements {
  save: HTMLButtonElement;
  download: HTMLButtonElement;
  saved: HTMLSelectElement;
  load: HTMLButtonElement;
  files: HTMLInputElement;
  status: HTMLElement;
}

export interface ModelPanel {
  /** Enables Save and Download when there is a run with a model to save; says so if a loaded model's run failed. */
  refresh(state?: RunState, detail?: string): void;
}

/** A file name for a model: its id, dataset and step, each part made of letters, digits, dots and single dashes. */
export function modelFileName(meta: Pick<ModelFileMeta, 'modelId' | 'dataset' | 'step'>): string {
  const part = (s: string) => s.replace(/[^\w.]+/g, '-').replace(/^-+|-+$/g, '');
  return [meta.modelId, meta.dataset.name, `step${meta.step}`].map(part).filter(Boolean).join('-');
}

/**
 * The dataset address a model file keeps: relative to the page when the dataset is on the page's own server (under its
 * folder), so the file loads from a lab on another origin or port; any other address as it is.
 */
export function storedManifestUrl(manifestUrl: string, pageHref: string): string {
  const base = new URL('.', pageHref).href;
  return manifestUrl.startsWith(base) && manifestUrl.length > base.length ? manifestUrl.slice(base.length) : manifestUrl;
}

/**
 * The absolute dataset address a loaded model reads here: a relative one against this page, an absolute one as it is,
 * except an old file's (saved with the page's absolute address, often a dev server on another port): when its path is
 * that of a listed dataset, the listed dataset of this page, with a note that says so.
 */
export function manifestForHere(stored: string, pageHref: string): { url: string; note?: string } {
  const url = new URL(stored, pageHref); // throws on an address that is not one
  const page = new URL(pageHref);
  if (url.origin === page.origin || !/^https?:$/.test(url.protocol)) return { url: url.href };
  const listed = DATASETS.find((d) => url.pathname.endsWith(`/${d.manifest}`));
  if (!listed) return { url: url.href };
  return { url: new URL(listed.manifest, pageHref).href, note: `its dataset address ${url.href} is another server's: this page's ${listed.label} is read` };
}

/**
 * Throws, naming the file, unless the model it names is one of the lab's, reads its dataset's kind (image or table),
 * and has variables of the weights' shapes: otherwise the run would start as whatever model is selected.
 */
export function checkModelFits(meta: ModelFileMeta, weights: ModelState['weights'], where: string): void {
  const spec = MODELS.find((m) => m.id === meta.modelId);
  if (!spec) throw new Error(`${where}: unknown model "${meta.modelId}" (the lab has ${MODELS.map((m) => m.id).join(', ')})`);
  const kind: DatasetInfo['kind'] = meta.dataset.inputShape?.length === 1 ? 'tabular' : 'image';
  if (spec.input !== kind) throw new Error(`${where}: it names ${spec.label}, which reads ${spec.input} data, but its dataset ${meta.dataset.name} is ${kind}`);
  let shapes: number[][];
  try {
    const info = { ...meta.dataset, kind, fidelityLevels: 1, examples: 0, records: 0, bytesPerLevel: [] };
    const variables = spec.create(info).variables();
    shapes = variables.map((v) => v.shape);
    tf.dispose(variables); // not the model's dispose(): that also frees our kernels' buffers, which a run may share
  } catch {
    return; // the model could not be built to compare (its variable names are taken): the run checks the shapes as it starts
  }
  const fits = shapes.length === weights.length && shapes.every((s, i) => s.join() === weights[i]!.shape.join());
  const list = (l: number[][]) => l.map((s) => `[${s}]`).join(' ');
  if (!fits) throw new Error(`${where}: its weights do not fit ${spec.label}: the file has ${list(weights.map((w) => w.shape))}, the model ${list(shapes)}`);
}

/**
 * A model.json and its weights file as tfjs artifacts. Not tfjs's browserFiles: it throws uncaught on a .json that is
 * not JSON, and wants each .bin under the name the manifest lists, where a browser names a second download
 * "x.weights (1).bin". A single weights file is taken whatever its name; several are matched by name.
 */
export async function readModelFiles(json: File, bins: File[]): Promise<tf.io.ModelArtifacts> {
  const notModel = (why: string) => new Error(`${json.name} is not a model file: ${why}`);
  let model: tf.io.ModelJSON | null;
  try {
    model = JSON.parse(await json.text()) as tf.io.ModelJSON | null;
  } catch (err) {
    throw notModel((err as Error).message);
  }
  if (!Array.isArray(model?.weightsManifest)) throw notModel('it has no weightsManifest');
  const manifest = model.weightsManifest;
  const paths = manifest.flatMap((g) => g.paths);
  const files = paths.map((p) => bins.find((b) => b.name === p.split('/').pop()) ?? (paths.length === 1 && bins.length === 1 ? bins[0] : undefined));
  const missing = paths.filter((_, i) => !files[i]);
  if (missing.length) throw new Error(`${json.name} needs the weights file ${missing.join(', ')}: choose it with the .json`);
  const specs = manifest.flatMap((g) => g.weights);
  const buffers = await Promise.all(files.map((f) => f!.arrayBuffer()));
  // float32 weights (what bytelab writes) take 4 bytes each: a wrong or cut .bin is named rather than misread.
  if (specs.every((s) => s.dtype === 'float32' && !s.quantization)) {
    const need = 4 * specs.reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
    const have = buffers.reduce((n, b) => n + b.byteLength, 0);
    if (have !== need) throw new Error(`${files.map((f) => f!.name).join(', ')} holds ${have} bytes; the weights ${json.name} lists take ${need}`);
  }
  return tf.io.getModelArtifactsForJSON(model, async () => [specs, buffers]);
}

const pad = (n: number) => String(n).padStart(2, '0');
/** 2025-11-27 11:34, in local time. */
const when = (d: Date) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;

export function setupModelPanel(
  el: ModelPanelElements,
  current: () => LabSession | undefined,
  /**
   * Starts a run from a loaded model (its dataset and model id say which), saying which dataset its own replaced in the
   * controls; else says why it cannot (a run under way, a field to fix).
   */
  startFrom: (meta: ModelFileMeta, weights: ModelState['weights']) => Promise<string | { replaced?: string }>,
): ModelPanel {
  const say = (message: string) => (el.status.textContent = message);
  /** The run a loaded model started, and the file: the line says "loaded" until that run fails. */
  let loaded: { run: LabSession | undefined; where: string } | undefined;
  const busy = () => {
    const run = current();
    return run !== undefined && LIVE_STATES.has(run.state);
  };

  /** The model of the current run (now, or as it ended) with what is needed to rebuild it. */
  async function artifacts(): Promise<{ artifacts: tf.io.ModelArtifacts; name: string } | undefined> {
    const run = current();
    const state = await run?.captureModel();
    if (!run || !state || !run.info) {
      say('nothing to save: no run has trained a step yet');
      return undefined;
    }
    const resume = run.config.resume;
    const meta: ModelFileMeta = {
      format: 'bytelab-model',
      version: 1,
      modelId: run.config.model.id,
      dataset: {
        name: run.info.name,
        manifestUrl: storedManifestUrl(resume?.config.manifestUrl ?? run.config.manifestUrl, location.href),
        inputShape: run.info.inputShape,
        classes: run.info.classes,
      },
      step: run.steps.last()?.step ?? 0,
      ...(run.evals.last() ? { accuracy: run.evals.last()!.accuracy } : {}),
    };
    return { artifacts: await toArtifacts(state.weights, meta), name: modelFileName(meta) };
  }

  async function listSaved(): Promise<void> {
    const models = await tf.io.listModels().catch(() => ({}) as Record<string, tf.io.ModelArtifactsInfo>);
    const ours = Object.entries(models)
      .filter(([url]) => url.startsWith(PREFIX))
      .sort(([, a], [, b]) => +new Date(b.dateSaved) - +new Date(a.dateSaved));
    // The name alone (a name is saved once: saving it again replaces it), newest first; the date in the tooltip, so a
    // phone's narrow list does not cut it off.
    el.saved.replaceChildren(
      ...ours.map(([url, info]) => {
        const option = new Option(url.slice(PREFIX.length), url);
        option.title = `${option.text}, saved ${when(new Date(info.dateSaved))}`;
        return option;
      }),
    );
    el.saved.title = el.saved.selectedOptions[0]?.title ?? '';
    el.load.disabled = ours.length === 0;
  }

  /** Reads a model and starts a run from it, or says why not (naming the file). */
  async function load(where: string, read: () => Promise<tf.io.ModelArtifacts>): Promise<void> {
    if (busy()) {
      say(STOP_FIRST);
      return;
    }
    try {
      await webgpuBackend(); // a click straight after a reload: the weights become tensors on the lab's backend, once it is up
      const { meta, weights } = fromArtifacts(await read(), where);
      checkModelFits(meta, weights, where);
      let dataset: ReturnType<typeof manifestForHere>;
      try {
        dataset = manifestForHere(meta.dataset.manifestUrl, location.href);
      } catch {
        throw new Error(`${where}: its dataset address "${meta.dataset.manifestUrl}" is not a URL`);
      }
      const started = await startFrom({ ...meta, dataset: { ...meta.dataset, manifestUrl: dataset.url } }, weights);
      if (typeof started === 'string') {
        say(started);
        return;
      }
      loaded = { run: current(), where };
      const notes = [started.replaced && `its dataset, ${meta.dataset.name}, is chosen in place of ${started.replaced}`, dataset.note].filter(Boolean);
      say(`loaded ${where}: evaluating, then training on${notes.map((n) => `; ${n}`).join('')}`);
    } catch (err) {
      say((err as Error).message);
    }
  }

  el.save.addEventListener('click', async () => {
    const got = await artifacts().catch((err: Error) => void say(`the model could not be saved: ${err.message}`));
    if (!got) return;
    try {
      // A name is the model, dataset and step: the same run saved twice at one step (or a run like it) replaces it.
      const earlier = (await tf.io.listModels().catch(() => ({}) as Record<string, tf.io.ModelArtifactsInfo>))[`${PREFIX}${got.name}`];
      await tf.io.getSaveHandlers(`${PREFIX}${got.name}`)[0]!.save!(got.artifacts);
      say(`saved in this browser as ${got.name}${earlier ? `, replacing the model saved under that name at ${when(new Date(earlier.dateSaved))}` : ''}`);
      await listSaved();
      el.saved.value = `${PREFIX}${got.name}`;
      el.saved.title = el.saved.selectedOptions[0]?.title ?? '';
    } catch (err) {
      say(`the model could not be saved: ${(err as Error).message}`);
    }
  });
  el.download.addEventListener('click', async () => {
    const got = await artifacts().catch((err: Error) => void say(`the model could not be saved: ${err.message}`));
    if (!got) return;
    try {
      // The handler itself, not the downloads:// router (Download failed in `npm start` with "reading 'save'").
      await browserDownloads(got.name).save!(got.artifacts);
      say(`downloaded ${got.name}.json and ${got.name}.weights.bin`);
    } catch (err) {
      say(`the model could not be downloaded: ${(err as Error).message}`);
    }
  });
  el.saved.addEventListener('change', () => (el.saved.title = el.saved.selectedOptions[0]?.title ?? ''));
  el.load.addEventListener('click', () => {
    const url = el.saved.value;
    if (url) void load(url.slice(PREFIX.length), () => tf.io.getLoadHandlers(url)[0]!.load!());
  });
  el.files.addEventListener('change', () => {
    const files = [...(el.files.files ?? [])];
    el.files.value = '';
    const jsons = files.filter((f) => f.name.endsWith('.json'));
    const bins = files.filter((f) => f.name.endsWith('.bin'));
    if (jsons.length !== 1 || bins.length === 0) {
      say('choose the model.json and its .weights.bin together');
      return;
    }
    void load(jsons[0]!.name, () => readModelFiles(jsons[0]!, bins));
  });
  void listSaved();

  return {
    refresh(state, detail) {
      const run = current();
      if (loaded && loaded.run !== run) loaded = undefined; // another run since: the line is about that one's file no more
      if (loaded && state === 'failed') {
        say(`${loaded.where} was loaded, but its run failed: ${detail ?? 'see the log'}`);
        loaded = undefined;
      } else if (loaded && state === 'stopped') {
        // It said "evaluating, then training on" after the run had ended.
        const step = run?.steps.last()?.step;
        say(`${loaded.where} was loaded; its run ${step ? `trained ${count(step, 'step')} from it, then ` : ''}stopped`);
        loaded = undefined;
      }
      const can = run !== undefined && (run.steps.last()?.step ?? 0) > 0;
      el.save.disabled = el.download.disabled = !can;
    },
  };
}
