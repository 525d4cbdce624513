// The tfjs CPU backend's Conv2DBackpropFilter reads every value through
// TensorBuffer.get(...) (a varargs call per multiply): one tiny-cnn step on a
// 32-image batch at 32x32 takes ~140 ms, nearly all of it there. This is the
// same sum over flat arrays (channels-last only), ~20x faster, so Node runs
// that train tiny-cnn for hundreds of steps (bench/tiny-cnn-collapse.ts,
// test/unit/train/tiny-cnn-collapse.test.ts) fit in seconds. `useFastConvGrad`
// returns a function that puts the stock kernel back.
import * as tf from '@tensorflow/tfjs';

interface Attrs {
  strides: [number, number] | number;
  pad: 'valid' | 'same' | number;
  dataFormat: 'NHWC' | 'NCHW';
  dimRoundingMode?: 'floor' | 'round' | 'ceil';
  filterShape: [number, number, number, number];
}

type CpuBackend = tf.KernelBackend & {
  data: { get(id: object): { values: Float32Array } };
  makeTensorInfo(shape: number[], dtype: string, values: Float32Array): tf.TensorInfo;
};

const fastKernel: tf.KernelFunc = ({ inputs, backend, attrs }) => {
  const { x, dy } = inputs as { x: tf.TensorInfo; dy: tf.TensorInfo };
  const a = attrs as unknown as Attrs;
  if (a.dataFormat !== 'NHWC') throw new Error('fast Conv2DBackpropFilter: channels-last only');
  const cpu = backend as CpuBackend;
  const info = tf.backend_util.computeConv2DInfo(x.shape as [number, number, number, number], a.filterShape, a.strides, 1, a.pad, a.dimRoundingMode);
  const { batchSize, inHeight, inWidth, inChannels, outHeight, outWidth, outChannels, strideHeight, strideWidth, filterHeight, filterWidth } = info;
  const top = info.padInfo.top;
  const left = info.padInfo.left;
  const xv = cpu.data.get(x.dataId).values;
  const dyv = cpu.data.get(dy.dataId).values;
  const dw = new Float32Array(filterHeight * filterWidth * inChannels * outChannels);
  for (let b = 0; b < batchSize; b++) {
    for (let yR = 0; yR < outHeight; yR++) {
      for (let yC = 0; yC < outWidth; yC++) {
        const dyAt = ((b * outHeight + yR) * outWidth + yC) * outChannels;
        for (let wR = 0; wR < filterHeight; wR++) {
          const xR = yR * strideHeight + wR - top;
          if (xR < 0 || xR >= inHeight) continue;
          for (let wC = 0; wC < filterWidth; wC++) {
            const xC = yC * strideWidth + wC - left;
            if (xC < 0 || xC >= inWidth) continue;
            const xAt = ((b * inHeight + xR) * inWidth + xC) * inChannels;
            const wAt = (wR * filterWidth + wC) * inChannels * outChannels;
            for (let d1 = 0; d1 < inChannels; d1++) {
              const xval = xv[xAt + d1]!;
              const row = wAt + d1 * outChannels;
              for (let d2 = 0; d2 < outChannels; d2++) dw[row + d2]! += xval * dyv[dyAt + d2]!;
            }
          }
        }
      }
    }
  }
  return cpu.makeTensorInfo(a.filterShape, 'float32', dw);
};

/** Swaps the CPU backend's Conv2DBackpropFilter for the flat-array one; returns the undo. */
export function useFastConvGrad(): () => void {
  const stock = tf.getKernel('Conv2DBackpropFilter', 'cpu');
  if (!stock) throw new Error('no CPU Conv2DBackpropFilter registered');
  tf.unregisterKernel('Conv2DBackpropFilter', 'cpu');
  tf.registerKernel({ ...stock, kernelFunc: fastKernel });
  return () => {
    tf.unregisterKernel('Conv2DBackpropFilter', 'cpu');
    tf.registerKernel(stock);
  };
}
