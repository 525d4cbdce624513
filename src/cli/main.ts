// Entry point of the `bytelab` command: dispatches to a command family.
import { pcrCommand } from './pcr.js';
import { tocCommand } from './toc.js';

const USAGE = `bytelab: build and inspect datasets for the bytelab training lab

  bytelab pcr build --idx IMAGES.gz --labels LABELS.gz [--test-idx .. --test-labels ..] [--limit N] [--record-size N] [--quality Q] --out DIR
  bytelab pcr build --folder DIR [--size WxH] [--channels 1|3|auto] [--test-fraction F] --out DIR
  bytelab pcr generate --task coarse|fine [--size 128] [--train N] [--test N] [--seed S] [--quality Q] [--record-size N] --out DIR
  bytelab pcr inspect DIR [--json] [--mssim [--sample N]]
  bytelab pcr extract DIR --group G [--split NAME] --out DIR
  bytelab pcr export DIR --format reference --out DIR
  bytelab pcr import DIR --format reference [--size WxH] [--channels 1|3|auto] [--classes a,b,c] --out DIR
  bytelab toc build --idx IMAGES.gz --labels LABELS.gz [--test-idx .. --test-labels ..] [--limit N] [--test-limit N] --out DIR
  bytelab toc build --csv FILE --label COLUMN [--drop COL,..] [--test-fraction F] [--limit N] --out DIR
  bytelab toc build --parquet FILE --label 'COLUMN>NUMBER' [--onehot COL,..] [--hour COL] [--weekday COL]
      [--bucket COL:K] [--numeric COL,..] [--limit N] --out DIR
      (all builds: [--batch-size 250|auto] [--batches-per-record 40] [--shuffle SEED] [--column-order source|frequency|auto] [--name NAME])
  bytelab toc inspect DIR [--json] [--sample N|all]

Formats: docs/pcr.md, docs/toc.md`;

export async function main(argv: string[]): Promise<number> {
  const [family, ...rest] = argv;
  try {
    switch (family) {
      case 'pcr':
        return await pcrCommand(rest);
      case 'toc':
        return await tocCommand(rest);
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
