// Tuple-oriented compression (Li et al., SIGMOD 2019): format and CPU reference ops.
export * from './types.js';
export * from './encode.js';
export { buildPrefixTree, decodeLogical } from './tree.js';
export type { PrefixTree, TreeInput, Locator, TocSection } from './tree.js';
export * from './physical.js';
export * from './batch.js';
export * from './ops.js';
export * from './baselines.js';
