// Models the lab can train, one file each. A model turns a batch from the
// pipeline into logits; the trainer owns the loop, the optimizer and metrics.
import type * as tf from '@tensorflow/tfjs';
import type { Batch, DatasetInfo } from '../../pipeline/api.js';
import { smallCnn, tinyCnn } from './cnn.js';
import { mlp } from './mlp.js';
import { logisticRegression, linearSvm, tocMlp } from './tabular.js';

/** A batch made ready on the GPU; the trainer disposes it after the step (or keeps test batches). */
export interface ModelInput {
  size: number;
  /** Labels as int32, shape [size]. */
  labels: tf.Tensor1D;
  dispose(): void;
}

export interface Model {
  /** Uploads a batch: a tensor for images, a TocRunsGpuBatch for TOC tables. */
  prepare(batch: Batch): ModelInput;
  /** Logits, shape [size, classes]. Called inside tf.tidy / optimizer.minimize. */
  logits(input: ModelInput): tf.Tensor2D;
  /** Training loss for a batch (defaults to softmax cross-entropy). */
  loss(logits: tf.Tensor2D, input: ModelInput, classes: number): tf.Scalar;
  /** Every variable of the model, in the order it creates them: what a checkpoint saves and restores. */
  variables(): tf.Variable[];
  dispose(): void;
}

export interface ModelSpec {
  id: string;
  label: string;
  /** The kind of dataset the model reads. */
  input: DatasetInfo['kind'];
  /**
   * TOC models: the output columns of the first layer, k of its products A·W and Aᵀ·dZ ('classes': the dataset's class
   * count). The pipeline lays each batch out for it (PipelineOptions.tocColumns): what is worth caching depends on k.
   */
  tocColumns?: number | 'classes';
  /**
   * `seed`: the run's seed, from which the initial weights are drawn, so runs with the same seed start from the same
   * weights (a sweep's runs differ only in what it sweeps); without it, tfjs's unseeded draws.
   */
  create(info: DatasetInfo, seed?: number): Model;
}

export const MODELS: ModelSpec[] = [smallCnn, tinyCnn, mlp, logisticRegression, linearSvm, tocMlp];

export function modelById(id: string): ModelSpec {
  const spec = MODELS.find((m) => m.id === id);
  if (!spec) throw new Error(`unknown model "${id}" (have ${MODELS.map((m) => m.id).join(', ')})`);
  return spec;
}

export function modelsFor(kind: DatasetInfo['kind']): ModelSpec[] {
  return MODELS.filter((m) => m.input === kind);
}
