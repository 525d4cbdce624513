// A trained model as tfjs model artifacts: the weights in tfjs's own encoding
// (weightSpecs + weightData), which tfjs's IndexedDB store and its
// model.json + weights.bin download both take, and what bytelab needs to
// rebuild the model around them (model id, dataset, input shape, classes) in
// modelTopology. Any model of the registry fits: layers models and the TOC
// models alike, since the weights are just Model.variables() in order.
import * as tf from '@tensorflow/tfjs';
import type { ModelState } from './trainer.js';

export interface ModelFileMeta {
  format: 'bytelab-model';
  version: 1;
  modelId: string;
  dataset: { name: string; manifestUrl: string; inputShape: number[]; classes: string[] };
  /** Steps it was trained for, and its last test accuracy (if evaluated). */
  step: number;
  accuracy?: number;
}

/** The first weight that is NaN or infinite, as "variable_i[at]", or undefined: a model from a run that diverged. */
export function nonFinite(weights: ModelState['weights']): { variable: number; index: number; value: number } | undefined {
  for (const [variable, w] of weights.entries()) {
    const index = w.data.findIndex((x) => !Number.isFinite(x));
    if (index >= 0) return { variable, index, value: w.data[index]! };
  }
  return undefined;
}

/** The model's weights and meta as tfjs artifacts. */
export async function toArtifacts(weights: ModelState['weights'], meta: ModelFileMeta): Promise<tf.io.ModelArtifacts> {
  const bad = nonFinite(weights);
  // A file that would only ever train in NaN (a diverged run's last weights) is not written.
  if (bad) throw new Error(`its weights are not numbers (variable_${bad.variable}[${bad.index}] is ${bad.value}: the run diverged)`);
  const named = weights.map((w, i) => ({ name: `variable_${i}`, tensor: tf.tensor(w.data, w.shape) }));
  try {
    const { data, specs } = await tf.io.encodeWeights(named);
    return { modelTopology: { bytelab: meta }, weightSpecs: specs, weightData: data, format: 'bytelab-model', generatedBy: 'bytelab' };
  } finally {
    tf.dispose(named.map((n) => n.tensor));
  }
}

/** Meta and weights back from tfjs artifacts; throws naming what is wrong with a file that is not a bytelab model. */
export function fromArtifacts(a: tf.io.ModelArtifacts, where: string): { meta: ModelFileMeta; weights: ModelState['weights'] } {
  const meta = (a.modelTopology as { bytelab?: ModelFileMeta } | undefined)?.bytelab;
  if (meta?.format !== 'bytelab-model') throw new Error(`${where}: not a bytelab model (its model.json has no "bytelab" entry)`);
  if (meta.version !== 1) throw new Error(`${where}: bytelab model version ${meta.version}, this lab reads 1`);
  if (!a.weightSpecs || !a.weightData) throw new Error(`${where}: the weights are missing`);
  const decoded = tf.io.decodeWeights(a.weightData, a.weightSpecs);
  try {
    const weights = a.weightSpecs.map((spec) => {
      const t = decoded[spec.name];
      if (!t) throw new Error(`${where}: weight ${spec.name} is missing from the data`);
      return { shape: t.shape, data: t.dataSync() as Float32Array };
    });
    const bad = nonFinite(weights);
    if (bad) {
      // Where in the weights file, when its values are plain float32 in the order of the specs (as this lab writes them).
      const plain = a.weightSpecs.every((spec) => spec.dtype === 'float32' && !spec.quantization);
      const before = weights.slice(0, bad.variable).reduce((n, w) => n + w.data.length, 0);
      const at = plain ? ` at byte ${((before + bad.index) * 4).toLocaleString('en-US')} of the weights` : '';
      throw new Error(
        `${where}: weight ${a.weightSpecs[bad.variable]!.name} holds ${bad.value} (value ${bad.index.toLocaleString('en-US')}${at}): ` +
          'a model that is not all numbers only trains in NaN (saved from a run that diverged, or a damaged file)',
      );
    }
    return { meta, weights };
  } finally {
    tf.dispose(Object.values(decoded));
  }
}

/** A model as a new run starts from it: the weights, and Adam as new (no steps, no moments). */
export function freshOptimizerState(weights: ModelState['weights']): ModelState {
  return { weights, iterations: 0, moments: [], betaPowers: [0.9, 0.999] };
}
