// Reads the idx format of (Fashion-)MNIST: big-endian header, then raw bytes.
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'fflate';
import type { LabeledImage } from '../../pcr/build.js';

async function readMaybeGzip(path: string): Promise<Uint8Array> {
  const raw = new Uint8Array(await readFile(path));
  return raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw;
}

function parseIdx(bytes: Uint8Array, path: string): { dims: number[]; data: Uint8Array } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.byteLength < 4 || view.getUint16(0) !== 0 || view.getUint8(2) !== 0x08) {
    throw new Error(`${path}: not an unsigned-byte idx file (bad magic at byte 0)`);
  }
  const rank = view.getUint8(3);
  const dims = Array.from({ length: rank }, (_, i) => view.getUint32(4 + 4 * i));
  const start = 4 + 4 * rank;
  const need = dims.reduce((a, b) => a * b, 1);
  if (bytes.byteLength - start < need) {
    throw new Error(`${path}: truncated, header promises ${need} bytes of data after byte ${start}, file has ${bytes.byteLength - start}`);
  }
  return { dims, data: bytes.subarray(start, start + need) };
}

/** Images (rank 3: n x rows x cols) with their labels (rank 1), at most `limit` of them. */
export async function readIdxPair(imagesPath: string, labelsPath: string, limit = Infinity): Promise<{ width: number; height: number; items: LabeledImage[] }> {
  const images = parseIdx(await readMaybeGzip(imagesPath), imagesPath);
  const labels = parseIdx(await readMaybeGzip(labelsPath), labelsPath);
  if (images.dims.length !== 3) throw new Error(`${imagesPath}: expected a rank-3 idx file, got rank ${images.dims.length}`);
  if (labels.dims.length !== 1) throw new Error(`${labelsPath}: expected a rank-1 idx file, got rank ${labels.dims.length}`);
  const [count, height, width] = images.dims as [number, number, number];
  if (labels.dims[0] !== count) throw new Error(`${labelsPath}: ${labels.dims[0]} labels for ${count} images`);
  const n = Math.min(count, limit);
  const size = width * height;
  const items: LabeledImage[] = [];
  for (let i = 0; i < n; i++) {
    items.push({ label: labels.data[i]!, image: { width, height, channels: 1, data: images.data.subarray(i * size, (i + 1) * size) } });
  }
  return { width, height, items };
}
