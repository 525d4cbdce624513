// Pipeline options for the pipeline tests: one split, in order, no echo, no
// shuffle, no augmentation, so what comes out can be checked exactly.
import type { PipelineOptions } from '../../src/pipeline/api.js';

export function testPipelineOptions(manifestUrl: string, over: Partial<PipelineOptions> = {}): PipelineOptions {
  return {
    manifestUrl,
    split: 'train',
    batchSize: 10,
    fidelity: 6,
    echoFactor: 1,
    seed: 1,
    shuffleBuffer: 0,
    epochs: 1,
    augment: false,
    prefetch: 2,
    ...over,
  };
}
