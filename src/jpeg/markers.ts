// Reads a JPEG's frame header (SOFn) without decoding: size and component count.
export interface FrameInfo {
  width: number;
  height: number;
  components: number;
}

const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

/** The frame header of a JPEG, or undefined if there is none before the data ends. */
export function jpegFrameInfo(bytes: Uint8Array): FrameInfo | undefined {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
    if (isSof(marker)) {
      if (at + 10 > bytes.length) return undefined;
      return { height: (bytes[at + 5]! << 8) | bytes[at + 6]!, width: (bytes[at + 7]! << 8) | bytes[at + 8]!, components: bytes[at + 9]! };
    }
    at += 2 + length;
  }
  return undefined;
}
