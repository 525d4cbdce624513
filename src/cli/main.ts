// Entry point of the `bytelab` command: dispatches to a command family.
import { pcrCommand } from './pcr.js';

const USAGE = `bytelab: build and inspect datasets for the bytelab training lab

  bytelab pcr build --idx IMAGES.gz --labels LABELS.gz [--test-idx .. --test-labels ..] [--limit N] [--record-size N] [--quality Q] --out DIR
  bytelab pcr build --folder DIR [--size WxH] [--channels 1|3] [--test-fraction F] --out DIR
  bytelab pcr inspect DIR [--json]
  bytelab pcr extract DIR --group G [--split NAME] --out DIR

Formats: docs/pcr.md`;

export async function main(argv: string[]): Promise<number> {
  const [family, ...rest] = argv;
  try {
    switch (family) {
      case 'pcr':
        return await pcrCommand(rest);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return family === undefined ? 1 : 0;
      default:
        console.error(`bytelab: unknown command "${family}"\n\n${USAGE}`);
        return 1;
    }
  } catch (err) {
    console.error(`bytelab ${family}: ${(err as Error).message}`);
    return 1;
  }
}
