// Saving and loading trained models in tfjs's own formats: in this browser
// (tfjs's IndexedDB store, indexeddb://) and as a model.json + weights.bin
// download, which loads back from files. A loaded model starts a run: it is
// evaluated on the test split before its first step, then trains on.
import * as tf from '@tensorflow/tfjs';
import { webgpuBackend } from '../gpu/backend.js';
import { fromArtifacts, toArtifacts, type ModelFileMeta } from '../train/model-file.js';
import type { LabSession } from '../train/session.js';
import type { ModelState } from '../train/trainer.js';

/** tfjs's IndexedDB models that are bytelab's start with this. */
const PREFIX = 'indexeddb://bytelab-model/';

export interface ModelPanelElements {
  save: HTMLButtonElement;
  download: HTMLButtonElement;
  saved: HTMLSelectElement;
  load: HTMLButtonElement;
  files: HTMLInputElement;
  status: HTMLElement;
}

export interface ModelPanel {
  /** Enables Save and Download when there is a run with a model to save. */
  refresh(): void;
}

export function setupModelPanel(
  el: ModelPanelElements,
  current: () => LabSession | undefined,
  /** Starts a run from a loaded model (its dataset and model id say which). */
  startFrom: (meta: ModelFileMeta, weights: ModelState['weights']) => void,
): ModelPanel {
  const say = (message: string) => (el.status.textContent = message);

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
        manifestUrl: resume?.config.manifestUrl ?? run.config.manifestUrl,
        inputShape: run.info.inputShape,
        classes: run.info.classes,
      },
      step: run.steps.last()?.step ?? 0,
      ...(run.evals.last() ? { accuracy: run.evals.last()!.accuracy } : {}),
    };
    const name = `${meta.modelId}-${meta.dataset.name}-step${meta.step}`.replace(/[^\w.-]+/g, '-');
    return { artifacts: await toArtifacts(state.weights, meta), name };
  }

  async function listSaved(): Promise<void> {
    const models = await tf.io.listModels().catch(() => ({}) as Record<string, tf.io.ModelArtifactsInfo>);
    const ours = Object.entries(models)
      .filter(([url]) => url.startsWith(PREFIX))
      .sort(([, a], [, b]) => +new Date(b.dateSaved) - +new Date(a.dateSaved));
    el.saved.replaceChildren(...ours.map(([url, info]) => new Option(`${url.slice(PREFIX.length)} (${new Date(info.dateSaved).toLocaleString()})`, url)));
    el.load.disabled = ours.length === 0;
  }

  el.save.addEventListener('click', async () => {
    const got = await artifacts().catch((err: Error) => void say(`the model could not be saved: ${err.message}`));
    if (!got) return;
    try {
      await tf.io.getSaveHandlers(`${PREFIX}${got.name}`)[0]!.save!(got.artifacts);
      say(`saved in this browser as ${got.name}`);
      await listSaved();
      el.saved.value = `${PREFIX}${got.name}`;
    } catch (err) {
      say(`the model could not be saved: ${(err as Error).message}`);
    }
  });
  el.download.addEventListener('click', async () => {
    const got = await artifacts().catch((err: Error) => void say(`the model could not be saved: ${err.message}`));
    if (!got) return;
    await tf.io.getSaveHandlers(`downloads://${got.name}`)[0]!.save!(got.artifacts);
    say(`downloaded ${got.name}.json and ${got.name}.weights.bin`);
  });
  el.load.addEventListener('click', async () => {
    const url = el.saved.value;
    if (!url) return;
    try {
      await webgpuBackend(); // a click straight after a reload: the weights become tensors on the lab's backend, once it is up
      const a = await tf.io.getLoadHandlers(url)[0]!.load!();
      const { meta, weights } = fromArtifacts(a, url.slice(PREFIX.length));
      say(`loaded ${url.slice(PREFIX.length)}: evaluating, then training on`);
      startFrom(meta, weights);
    } catch (err) {
      say((err as Error).message);
    }
  });
  el.files.addEventListener('change', async () => {
    const files = [...(el.files.files ?? [])];
    el.files.value = '';
    const json = files.find((f) => f.name.endsWith('.json'));
    const bins = files.filter((f) => f.name.endsWith('.bin'));
    if (!json || bins.length === 0) {
      say('choose the model.json and its .weights.bin together');
      return;
    }
    try {
      await webgpuBackend();
      const { meta, weights } = fromArtifacts(await tf.io.browserFiles([json, ...bins]).load!(), json.name);
      say(`loaded ${json.name}: evaluating, then training on`);
      startFrom(meta, weights);
    } catch (err) {
      say((err as Error).message);
    }
  });
  void listSaved();

  return {
    refresh() {
      const run = current();
      const can = run !== undefined && (run.steps.last()?.step ?? 0) > 0;
      el.save.disabled = el.download.disabled = !can;
    },
  };
}
