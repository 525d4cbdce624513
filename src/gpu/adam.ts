// The lab's optimiser: tfjs's Adam, with its update on the webgpu backend done by
// one dispatch per variable (shaders/adam.wgsl) and all variables in one
// submission, where tfjs runs a dozen elementwise programs per variable. The
// state is tfjs's own (moments as optimiser weights, the iteration count), so
// checkpoints save and restore it as before; other backends run tfjs's update.
import * as tf from '@tensorflow/tfjs';
import adamWgsl from '../../shaders/adam.wgsl?raw';
import { dispatch, shapeParams, type KernelProgram } from './pipelines.js';
import { runKernel, scratchBuffer } from './tfjs-kernel.js';

const ADAM: KernelProgram = { label: 'Adam', wgsl: adamWgsl, entryPoint: 'adam', workgroupSize: 64, layout: 'flat' };

/** tfjs's defaults (tf.train.adam). */
const BETA1 = 0.9;
const BETA2 = 0.999;

/** AdamOptimizer's per-variable moments (private in its type, plain fields at run time). */
interface Moments {
  accumulatedFirstMoment: { originalName: string; variable: tf.Variable }[];
  accumulatedSecondMoment: { originalName: string; variable: tf.Variable }[];
}

/** What Optimizer.minimize passes: gradients by variable name (tfjs's types for it are not exported). */
type Gradients = Parameters<tf.AdamOptimizer['applyGradients']>[0];

/** beta^(t + 2) from beta^(t + 1): one more f32 product, as tfjs's accBeta advances each step. */
const nextPower = (power: number, beta: number) => Math.fround(power * Math.fround(beta));

/** beta^(t + 1) as tfjs's Adam keeps it after t steps: the f32 product of t + 1 betas. */
function accumulatedPower(beta: number, steps: number): number {
  let power = Math.fround(beta);
  for (let i = 0; i < steps; i++) power = nextPower(power, beta);
  return power;
}

/** Adam as the lab runs it: betaPowers are readable and settable numbers (a checkpoint keeps them). */
export class LabAdam extends tf.AdamOptimizer {
  /**
   * beta1^(t + 1) and beta2^(t + 1) after t steps, the f32 products tfjs keeps in its accBeta variables (f32
   * multiplication rounds the same on the CPU, in WGSL and in Math.fround). Kept here, a step needs no GPU scalar.
   */
  private powers: [number, number] = [Math.fround(this.beta1), Math.fround(this.beta2)];

  get betaPowers(): [number, number] {
    return [...this.powers];
  }

  /** Restores a checkpoint's powers; tfjs's own variables too, for the update other backends run. */
  set betaPowers(powers: [number, number]) {
    this.powers = [Math.fround(powers[0]), Math.fround(powers[1])];
    const acc = this as unknown as { accBeta1: tf.Variable; accBeta2: tf.Variable };
    tf.tidy(() => {
      acc.accBeta1.assign(tf.scalar(this.powers[0]));
      acc.accBeta2.assign(tf.scalar(this.powers[1]));
    });
  }

  /** tfjs's restore of the moments and iteration count; the powers follow the count (a checkpoint then sets its saved ones). */
  override async setWeights(weightValues: Parameters<tf.AdamOptimizer['setWeights']>[0]): Promise<void> {
    await super.setWeights(weightValues);
    this.powers = [accumulatedPower(this.beta1, this.iterations), accumulatedPower(this.beta2, this.iterations)];
  }

  override applyGradients(variableGradients: Gradients): void {
    if (tf.getBackend() === 'webgpu') this.fusedUpdate(variableGradients);
    else super.applyGradients(variableGradients);
    this.powers = [nextPower(this.powers[0], this.beta1), nextPower(this.powers[1], this.beta2)];
  }

  private fusedUpdate(variableGradients: Gradients): void {
    const named = Array.isArray(variableGradients)
      ? variableGradients.map((g) => [g.name, g.tensor] as const)
      : Object.entries(variableGradients).map(([name, g]) => [name, g] as const);
    const state = this as unknown as Moments;
    const updates: { value: tf.Variable; first: tf.Variable; second: tf.Variable; gradient: tf.Tensor }[] = [];
    for (const [i, [name, gradient]] of named.entries()) {
      const value = tf.engine().registeredVariables[name]!;
      // Made on first use, as tfjs's Adam makes them (a checkpoint's restore sets them instead).
      state.accumulatedFirstMoment[i] ??= { originalName: `${name}/m`, variable: tf.tidy(() => tf.zerosLike(value).variable(false)) };
      state.accumulatedSecondMoment[i] ??= { originalName: `${name}/v`, variable: tf.tidy(() => tf.zerosLike(value).variable(false)) };
      if (gradient == null) continue;
      updates.push({ value, first: state.accumulatedFirstMoment[i]!.variable, second: state.accumulatedSecondMoment[i]!.variable, gradient });
    }
    // The shader's Step struct, each value rounded to f32 as tfjs's scalars are (1 - beta: a JS number made a scalar).
    const { beta1, beta2, epsilon, learningRate, powers } = this;
    const constants = Float32Array.from([beta1, 1 - beta1, beta2, 1 - beta2, 1 - powers[0], 1 - powers[1], epsilon, -learningRate]);
    const inputs = updates.flatMap((u) => [u.value, u.first, u.second, u.gradient]);
    const shapes = updates.flatMap((u) => [u.value.shape, u.value.shape, u.value.shape]);
    const outputs = runKernel(inputs, shapes, 'Adam', (encoder, device, buffers, outs) => {
      const step = scratchBuffer(device, 'Adam.step', constants.byteLength);
      device.queue.writeBuffer(step, 0, constants);
      const pass = encoder.beginComputePass({ label: 'Adam' });
      for (const [j, u] of updates.entries()) {
        const [value, first, second, gradient] = buffers.slice(4 * j, 4 * j + 4);
        const [newValue, newFirst, newSecond] = outs.slice(3 * j, 3 * j + 3);
        const reads = { 0: shapeParams(device, u.value.size), 1: step, 2: value!, 3: first!, 4: second!, 5: gradient! };
        dispatch(device, pass, ADAM, { ...reads, 6: newValue!, 7: newFirst!, 8: newSecond! }, u.value.size, 1);
      }
      pass.end();
    });
    for (const [j, u] of updates.entries()) {
      u.value.assign(outputs[3 * j]!);
      u.first.assign(outputs[3 * j + 1]!);
      u.second.assign(outputs[3 * j + 2]!);
    }
    tf.dispose(outputs);
    this.incrementIterations();
  }
}

/** Adam with tfjs's defaults (beta1 0.9, beta2 0.999, the backend's epsilon), fused on webgpu; tf.train.adam elsewhere. */
export function adam(learningRate: number): LabAdam {
  return new LabAdam(learningRate, BETA1, BETA2);
}
