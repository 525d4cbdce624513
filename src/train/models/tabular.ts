// Models over TOC-compressed tables. Their first layer is tocMatMul: A * W runs
// on the compressed batch, and so does the weight gradient A^T * dZ.
import * as tf from '@tensorflow/tfjs';
import { TocRunsGpuBatch } from '../../gpu/toc/runs.js';
import { thinDense } from '../../gpu/dense.js';
import { tocMatMul } from '../../gpu/toc/tfjs-op.js';
import { releaseKernelBuffers } from '../../gpu/tfjs-kernel.js';
import type { Batch, DatasetInfo } from '../../pipeline/api.js';
import { hash32 } from '../../shared/random.js';
import { softmaxLoss } from './layers.js';
import type { Model, ModelInput, ModelSpec } from './registry.js';

interface TocInput extends ModelInput {
  a: TocRunsGpuBatch;
}

function backendDevice(): GPUDevice {
  return (tf.backend() as unknown as { device: GPUDevice }).device;
}

function prepareToc(batch: Batch): TocInput {
  if (batch.kind !== 'toc') throw new Error(`expected a TOC batch, got ${batch.kind}`);
  const a = new TocRunsGpuBatch(backendDevice(), batch.batch, batch.layout);
  const labels = tf.tensor1d(batch.y, 'int32');
  return {
    size: batch.size,
    a,
    labels,
    dispose: () => {
      a.destroy();
      labels.dispose();
    },
  };
}

function checkTabular(info: DatasetInfo): number {
  if (info.kind !== 'tabular') throw new Error(`this model reads TOC tables; ${info.name} is an ${info.kind} dataset`);
  return info.inputShape[0]!;
}

/** W (inputs x units, Glorot-uniform, drawn from the run's seed and the layer's name) and b (zeros). */
function denseVariables(inputs: number, units: number, name: string, seed: number | undefined): { w: tf.Variable<tf.Rank.R2>; b: tf.Variable<tf.Rank.R1> } {
  const limit = Math.sqrt(6 / (inputs + units));
  const draw = seed === undefined ? undefined : hash32(seed, 'kernel', name);
  // tidy frees the initial values: a variable keeps its own reference to their data.
  return tf.tidy(() => ({
    w: tf.variable(tf.randomUniform([inputs, units], -limit, limit, 'float32', draw), true, `${name}.w`) as tf.Variable<tf.Rank.R2>,
    b: tf.variable(tf.zeros([units]), true, `${name}.b`) as tf.Variable<tf.Rank.R1>,
  }));
}

/** A first layer on the compressed batch: X * W + b (relu'd if asked), bias and ReLU applied (and differentiated) by our kernels too. */
function tocDense(cols: number, units: number, name: string, seed: number | undefined, activation: 'linear' | 'relu' = 'linear') {
  const { w, b } = denseVariables(cols, units, name, seed);
  return {
    apply: (input: ModelInput) => tocMatMul((input as TocInput).a, w, b, activation),
    variables: [w, b] as tf.Variable[],
    dispose: () => {
      tf.dispose([w, b]);
      releaseKernelBuffers(); // our operations' scratch buffers and uniforms go with the run's model
    },
  };
}

function linearModel(info: DatasetInfo, seed: number | undefined, loss: Model['loss']): Model {
  const layer = tocDense(checkTabular(info), info.classes.length, 'linear', seed);
  return { prepare: prepareToc, logits: layer.apply, loss, variables: () => layer.variables, dispose: layer.dispose };
}

export const logisticRegression: ModelSpec = {
  id: 'logreg',
  label: 'Logistic regression (softmax)',
  input: 'tabular',
  tocColumns: 'classes',
  create: (info, seed) => linearModel(info, seed, softmaxLoss),
};

export const linearSvm: ModelSpec = {
  id: 'svm',
  label: 'Linear SVM (hinge, one-vs-rest)',
  input: 'tabular',
  tocColumns: 'classes',
  create(info, seed) {
    // tfjs's hinge loss maps 0/1 labels to -1/+1 itself: one-vs-rest over the classes.
    return linearModel(info, seed, (logits, input, classes) => tf.losses.hingeLoss(tf.oneHot(input.labels, classes), logits) as tf.Scalar);
  },
};

/** Hidden units of the TOC MLP: k of its first layer's products. */
const MLP_HIDDEN = 64;

export const tocMlp: ModelSpec = {
  id: 'toc-mlp',
  label: `MLP on TOC (${MLP_HIDDEN} hidden)`,
  input: 'tabular',
  tocColumns: MLP_HIDDEN,
  create(info, seed) {
    const hidden = tocDense(checkTabular(info), MLP_HIDDEN, 'mlp.hidden', seed, 'relu');
    // The output layer is thin (a few classes): our kernels, where tfjs's tiled matmuls cost more than the sparse first layer.
    const out = denseVariables(MLP_HIDDEN, info.classes.length, 'mlp.out', seed);
    return {
      prepare: prepareToc,
      logits: (input) => thinDense(hidden.apply(input), out.w, out.b),
      loss: softmaxLoss,
      variables: () => [...hidden.variables, out.w, out.b],
      dispose: () => {
        hidden.dispose();
        tf.dispose([out.w, out.b]);
      },
    };
  },
};
