// A first layer's bias on the GPU, as our own kernels (shaders/bias.wgsl): added
// to Z in the encoder that computed Z, and its gradient (the column sums of dZ)
// taken without tfjs's reductions. Used by tocMatMul when it is given a bias.
import biasWgsl from '../../shaders/bias.wgsl?raw';
import { dispatch, shapeParams, type KernelProgram } from './pipelines.js';

const ADD_BIAS: KernelProgram = { label: 'Bias.add', wgsl: biasWgsl, entryPoint: 'add_bias', workgroupSize: 64, layout: 'grid' };
const COLUMN_SUMS: KernelProgram = { label: 'Bias.columnSums', wgsl: biasWgsl, entryPoint: 'column_sums', workgroupSize: 64, layout: 'grid' };

/** Z (rows x units, row-major) += b, recorded into `encoder` after whatever wrote Z. */
export function recordAddBias(device: GPUDevice, encoder: GPUCommandEncoder, z: GPUBuffer, bias: GPUBuffer, rows: number, units: number): void {
  const pass = encoder.beginComputePass({ label: ADD_BIAS.label });
  dispatch(device, pass, ADD_BIAS, { 0: shapeParams(device, rows, units), 1: bias, 2: z }, rows, units);
  pass.end();
}

/** db (units) = the column sums of dZ (rows x units, row-major). */
export function recordColumnSums(device: GPUDevice, encoder: GPUCommandEncoder, dz: GPUBuffer, db: GPUBuffer, rows: number, units: number): void {
  const pass = encoder.beginComputePass({ label: COLUMN_SUMS.label });
  dispatch(device, pass, COLUMN_SUMS, { 0: shapeParams(device, rows, units), 1: dz, 2: db }, units, 1);
  pass.end();
}
