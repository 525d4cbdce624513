// Models the lab can train, one file each. A model takes the dataset's image
// shape and class count and returns an uncompiled tfjs LayersModel.
import type * as tf from '@tensorflow/tfjs';
import { smallCnn, tinyCnn } from './cnn.js';
import { mlp } from './mlp.js';

export interface ModelSpec {
  id: string;
  label: string;
  build(input: [number, number, number], classes: number): tf.LayersModel;
}

export const MODELS: ModelSpec[] = [smallCnn, tinyCnn, mlp];

export function modelById(id: string): ModelSpec {
  const spec = MODELS.find((m) => m.id === id);
  if (!spec) throw new Error(`unknown model "${id}" (have ${MODELS.map((m) => m.id).join(', ')})`);
  return spec;
}
