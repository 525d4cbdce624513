// A first layer's bias on the GPU, as our own kernels (shaders/bias.wgsl): added
// to Z in the encoder that computed Z, and its gradient (the column sums of dZ)
// taken without tfjs's reductions; and a ReLU after it, fused the same way. Used
// by tocMatMul when it is given a bias.
import biasWgsl from '../../shaders/bias.wgsl?raw';
import { dispatch, shapeParams, type KernelProgram } from './pipelines.js';

const ADD_BIAS: KernelProgram = { label: 'Bias.add', wgsl: biasWgsl, entryPoint: 'add_bias', workgroupSize: 64, layout: 'grid' };
const ADD_BIAS_RELU: KernelProgram = { ...ADD_BIAS, label: 'Bias.addRelu', constants: { RELU: 1 } };
const COLUMN_SUMS: KernelProgram = { label: 'Bias.columnSums', wgsl: biasWgsl, entryPoint: 'column_sums', workgroupSize: 64, layout: 'grid' };
const RELU_MASK: KernelProgram = { label: 'Bias.reluMask', wgsl: biasWgsl, entryPoint: 'relu_mask', workgroupSize: 64, layout: 'grid' };
// Quad forms (units a multiple of 4): vec4 loads and stores, one invocation per 4 columns.
const ADD_BIAS4: KernelProgram = { ...ADD_BIAS, label: 'Bias.add4', entryPoint: 'add_bias4' };
const ADD_BIAS_RELU4: KernelProgram = { ...ADD_BIAS_RELU, label: 'Bias.addRelu4', entryPoint: 'add_bias4' };
const RELU_MASK4: KernelProgram = { ...RELU_MASK, label: 'Bias.reluMask4', entryPoint: 'relu_mask4' };
const COLUMN_SUMS4: KernelProgram = { ...COLUMN_SUMS, label: 'Bias.columnSums4', entryPoint: 'column_sums4' };

/** Z (rows x units, row-major) += b, then relu(Z) in place if `relu`, recorded into `encoder` after whatever wrote Z. */
export function recordAddBias(device: GPUDevice, encoder: GPUCommandEncoder, z: GPUBuffer, bias: GPUBuffer, rows: number, units: number, relu = false): void {
  const quad = units % 4 === 0;
  const program = quad ? (relu ? ADD_BIAS_RELU4 : ADD_BIAS4) : relu ? ADD_BIAS_RELU : ADD_BIAS;
  const width = quad ? units / 4 : units; // the quad form's params count quads per row
  const buffers: Record<number, GPUBuffer> = quad ? { 4: bias, 5: z } : { 1: bias, 2: z };
  const pass = encoder.beginComputePass({ label: program.label });
  dispatch(device, pass, program, { 0: shapeParams(device, rows, width), ...buffers }, rows, width);
  pass.end();
}

/** dZ = dY where Y > 0, else 0 (all rows x units): the gradient through a ReLU whose output is Y. */
export function recordReluMask(device: GPUDevice, encoder: GPUCommandEncoder, dy: GPUBuffer, y: GPUBuffer, dz: GPUBuffer, rows: number, units: number): void {
  const quad = units % 4 === 0;
  const program = quad ? RELU_MASK4 : RELU_MASK;
  const width = quad ? units / 4 : units;
  const buffers: Record<number, GPUBuffer> = quad ? { 4: dy, 5: dz, 6: y } : { 1: dy, 2: dz, 3: y };
  const pass = encoder.beginComputePass({ label: program.label });
  dispatch(device, pass, program, { 0: shapeParams(device, rows, width), ...buffers }, rows, width);
  pass.end();
}

/** db (units) = the column sums of dZ (rows x units, row-major). */
export function recordColumnSums(device: GPUDevice, encoder: GPUCommandEncoder, dz: GPUBuffer, db: GPUBuffer, rows: number, units: number): void {
  const quad = units % 4 === 0;
  const program = quad ? COLUMN_SUMS4 : COLUMN_SUMS;
  const width = quad ? units / 4 : units;
  const buffers: Record<number, GPUBuffer> = quad ? { 4: dz, 5: db } : { 1: dz, 2: db };
  const pass = encoder.beginComputePass({ label: program.label });
  dispatch(device, pass, program, { 0: shapeParams(device, rows, width), ...buffers }, width, 1);
  pass.end();
}
