// A first layer's bias on the GPU, as our own kernels (shaders/bias.wgsl): added
// to Z in the encoder that computed Z, and its gradient (the column sums of dZ)
// taken without tfjs's reductions; and a ReLU after it, fused the same way. Used
// by tocMatMul when it is given a bias.
import biasWgsl from '../../shaders/bias.wgsl?raw';
import { dispatch, shapeParams, type KernelProgram } from './pipelines.js';

const ADD_BIAS: KernelProgram = { label: 'Bias.add', wgsl: biasWgsl, entryPoint: 'add_bias', workgroupSize: 64, layout: 'grid' };
const ADD_BIAS_RELU: KernelProgram = { ...ADD_BIAS, label: 'Bias.addRelu', constants: { RELU: 1 } };
const RELU_MASK: KernelProgram = { label: 'Bias.reluMask', wgsl: biasWgsl, entryPoint: 'relu_mask', workgroupSize: 64, layout: 'grid' };
const COLUMN_SUMS: KernelProgram = { label: 'Bias.columnSums', wgsl: biasWgsl, entryPoint: 'column_sums', workgroupSize: 64, layout: 'grid' };

/** Z (rows x units, row-major) += b, then relu(Z) in place if `relu`, recorded into `encoder` after whatever wrote Z. */
export function recordAddBias(device: GPUDevice, encoder: GPUCommandEncoder, z: GPUBuffer, bias: GPUBuffer, rows: number, units: number, relu = false): void {
  const program = relu ? ADD_BIAS_RELU : ADD_BIAS;
  const pass = encoder.beginComputePass({ label: program.label });
  dispatch(device, pass, program, { 0: shapeParams(device, rows, units), 1: bias, 2: z }, rows, units);
  pass.end();
}

/** dZ = dY where Y > 0, else 0 (all rows x units): the gradient through a ReLU whose output is Y. */
export function recordReluMask(device: GPUDevice, encoder: GPUCommandEncoder, dy: GPUBuffer, y: GPUBuffer, dz: GPUBuffer, rows: number, units: number): void {
  const pass = encoder.beginComputePass({ label: RELU_MASK.label });
  dispatch(device, pass, RELU_MASK, { 0: shapeParams(device, rows, units), 1: dy, 2: dz, 3: y }, rows, units);
  pass.end();
}

/** db (units) = the column sums of dZ (rows x units, row-major). */
export function recordColumnSums(device: GPUDevice, encoder: GPUCommandEncoder, dz: GPUBuffer, db: GPUBuffer, rows: number, units: number): void {
  const pass = encoder.beginComputePass({ label: COLUMN_SUMS.label });
  dispatch(device, pass, COLUMN_SUMS, { 0: shapeParams(device, rows, units), 1: dz, 2: db }, units, 1);
  pass.end();
}
