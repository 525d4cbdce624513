// A thin dense layer as our kernels (shaders/dense.wgsl): Z = X * W + b where W has
// few columns, the TOC MLP's output layer. tfjs's tiled matmul programs leave most
// of each tile idle at 2..10 units, and on SwiftShader that layer's products cost
// more than the sparse first layer (docs/toc-kernels-log.md, "Session 13"); here each output is
// one invocation's dot product (X and dX read and written as vec4 when the inner size is a
// multiple of 4, session 32), and b's gradient the column sums of bias.wgsl.
import * as tf from '@tensorflow/tfjs';
import denseWgsl from '../../shaders/dense.wgsl?raw';
import { recordColumnSums } from './bias.js';
import { dispatch, shapeParams, type KernelProgram } from './pipelines.js';
import { requireWebgpu, runKernel } from './tfjs-kernel.js';

const program = (entryPoint: string, label: string): KernelProgram => ({ label, wgsl: denseWgsl, entryPoint, workgroupSize: 64, layout: 'grid' });
const FORWARD = program('forward', 'Dense.forward');
const INPUT_GRADIENT = program('input_gradient', 'Dense.inputGradient');
const WEIGHT_GRADIENT = program('weight_gradient', 'Dense.weightGradient');
// X and dX as vec4 when the inner size is a multiple of 4 (bindings 5 and 6 instead of 1 and 4 for them).
const FORWARD4 = program('forward4', 'Dense.forward4');
const INPUT_GRADIENT4 = program('input_gradient4', 'Dense.inputGradient4');
const WEIGHT_GRADIENT4 = program('weight_gradient4', 'Dense.weightGradient4');

function record(
  encoder: GPUCommandEncoder,
  device: GPUDevice,
  kernel: KernelProgram,
  shape: [rows: number, inner: number, units: number],
  buffers: Record<number, GPUBuffer>,
  grid: [number, number],
): void {
  const pass = encoder.beginComputePass({ label: kernel.label });
  dispatch(device, pass, kernel, { 0: shapeParams(device, ...shape), ...buffers }, ...grid);
  pass.end();
}

/** Z = X * W + b for X (rows x inner), W (inner x units), b (units), differentiable in all three. */
export function thinDense(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D): tf.Tensor2D {
  requireWebgpu('thinDense');
  const [rows, inner] = x.shape;
  const units = w.shape[1];
  if (w.shape[0] !== inner || b.shape[0] !== units)
    throw new Error(`thinDense: X is [${x.shape}], W [${w.shape}], b [${b.shape}]: expected W [${inner}, units] and b [units]`);
  const shape: [number, number, number] = [rows, inner, units];
  const quad = inner % 4 === 0;
  const op = tf.customGrad((xIn, wIn, bIn, save) => {
    const [xt, wt, bt] = [xIn, wIn, bIn] as tf.Tensor[];
    (save as tf.GradSaveFunc)([xt!, wt!]);
    const [value] = runKernel([xt!, wt!, bt!], [[rows, units]], 'Dense.z', (encoder, device, [xb, wb, bb], [z]) =>
      quad
        ? record(encoder, device, FORWARD4, shape, { 5: xb!, 2: wb!, 3: bb!, 4: z! }, [rows, units])
        : record(encoder, device, FORWARD, shape, { 1: xb!, 2: wb!, 3: bb!, 4: z! }, [rows, units]),
    );
    // dX, dW and db in one submission, from one copy of dZ.
    const gradFunc = (dz: tf.Tensor, [xs, ws]: tf.Tensor[]) =>
      runKernel([dz, xs!, ws!], [[rows, inner], [inner, units], [units]], 'Dense.gradients', (encoder, device, [g, xb, wb], [dx, dw, db]) => {
        if (quad) {
          record(encoder, device, INPUT_GRADIENT4, shape, { 1: g!, 2: wb!, 6: dx! }, [rows, inner / 4]);
          record(encoder, device, WEIGHT_GRADIENT4, shape, { 5: xb!, 2: g!, 4: dw! }, [inner / 4, units]);
        } else {
          record(encoder, device, INPUT_GRADIENT, shape, { 1: g!, 2: wb!, 4: dx! }, [rows, inner]);
          record(encoder, device, WEIGHT_GRADIENT, shape, { 1: xb!, 2: g!, 4: dw! }, [inner, units]);
        }
        recordColumnSums(device, encoder, g!, db!, rows, units);
      });
    return { value, gradFunc };
  });
  return op(x, w, b) as tf.Tensor2D;
}
