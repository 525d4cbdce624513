// Exact resume (tape.ts): a pipeline reopened with the tape of a run and the
// number of batches that run handed out continues with the batches the run
// handed out next: the same examples (ids), labels and pixels, in the same
// order, although the run's live controls changed at moments only the tape
// remembers. Real HTTP server, real wasm decoder, real records.
import { afterEach, describe, expect, it } from 'vitest';
import { loadTurboJpegNode } from '../../../src/jpeg/turbo-node.js';
import type { Batch, PipelineOptions } from '../../../src/pipeline/api.js';
import type { BasePipeline } from '../../../src/pipeline/base.js';
import { ImagePipeline } from '../../../src/pipeline/image-pipeline.js';
import { pcrRecords } from '../../../src/pipeline/pcr-records.js';
import type { TapeState } from '../../../src/pipeline/tape.js';
import { TocPipeline } from '../../../src/pipeline/toc-pipeline.js';
import { buildFixture } from '../../support/fixtures.js';
import { startTestServer, type TestServer } from '../../support/http-server.js';
import { testPipelineOptions } from '../../support/pipeline-options.js';
import { buildDataset } from '../../support/toc-toy.js';

const images = await buildFixture({ train: 60, recordSize: 20 }); // 3 records of 20 images
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(files: Map<string, Uint8Array>): Promise<string> {
  const server = await startTestServer(files);
  servers.push(server);
  return `${server.url}manifest.json`;
}

/** What a person would see differ: which examples, their labels, and their pixels (or compressed rows). */
function fingerprint(b: Batch): { ids: number[]; y: number[]; data: number[] } {
  const data = b.kind === 'image' ? Array.from(b.x) : [...b.batch.codes, ...b.batch.firstLayerCol];
  return { ids: Array.from(b.ids), y: Array.from(b.y), data };
}

type Pipe = BasePipeline<unknown> & { setFidelity(level: number): void };

/**
 * Run A: `total` batches, with the controls changed by `changes` after the given
 * batch counts (the pipeline is reading ahead meanwhile), and the tape taken
 * after `at` batches. Run B: a new pipeline resumed from that tape, with the
 * controls as they stood then, for the rest.
 */
async function resumeMatches(
  make: () => Promise<Pipe>,
  options: PipelineOptions,
  changes: Record<number, (p: Pipe) => void>,
  at: number,
  total: number,
  tamper?: (tape: TapeState) => TapeState,
) {
  const a = await make();
  await a.open(options);
  const seen: ReturnType<typeof fingerprint>[] = [];
  let tape: TapeState | undefined;
  let readBySnapshot = 0;
  const controls = { ...options };
  for (let i = 0; i < total; i++) {
    changes[i]?.(a);
    Object.assign(controls, (a as unknown as { options: PipelineOptions }).options);
    if (i === at) {
      tape = a.tapeState();
      readBySnapshot = a.stats.examplesRead;
    }
    const batch = await a.next();
    expect(batch).not.toBeNull();
    expect(batch!.index).toBe(i);
    seen.push(fingerprint(batch!));
  }
  a.close();
  const b = await make();
  // Controls as they stood when the tape was taken (none changes after it in these runs).
  await b.open({ ...controls, resume: { tape: tamper ? tamper(tape!) : tape!, batches: at } });
  const resumed: ReturnType<typeof fingerprint>[] = [];
  for (let i = at; i < total; i++) {
    const batch = await b.next();
    expect(batch!.index).toBe(i);
    resumed.push(fingerprint(batch!));
  }
  b.close();
  return { expected: seen.slice(at), resumed, readBySnapshot, readByResumed: b.stats.examplesRead };
}

describe('exact resume', () => {
  const imageOptions = async (): Promise<PipelineOptions> =>
    testPipelineOptions(await serve(images.files), {
      epochs: Infinity,
      batchSize: 8,
      seed: 7,
      shuffleBuffer: 16,
      augment: true,
      echoFactor: 1.5, // fractional: a Bernoulli draw per example
      requestsInFlight: 3,
      prefetch: 3,
    });
  const imagePipeline = async () => new ImagePipeline(pcrRecords, await loadTurboJpegNode(), () => undefined) as unknown as Pipe;
  // Every live control changes while the pipeline reads ahead: where each took effect is timing, which only the tape knows.
  const imageChanges: Record<number, (p: Pipe) => void> = {
    4: (p) => p.setEchoFactor(2),
    8: (p) => p.setFidelity(2),
    12: (p) => p.setEchoMode('examples-after-augment'),
    16: (p) => p.setShuffleBuffer(6),
    20: (p) => p.setEchoMode('batches'),
    24: (p) => p.setFidelity(4),
  };

  it('an image pipeline resumed from its tape hands out the same examples, labels and pixels as the run it continues', async () => {
    const options = await imageOptions();
    const r = await resumeMatches(imagePipeline, options, imageChanges, 30, 45);
    expect(r.resumed.map((b) => b.ids)).toEqual(r.expected.map((b) => b.ids));
    expect(r.resumed).toEqual(r.expected);
    // The batches before the resume point were worked out, not decoded again: far fewer images decoded than the run had.
    expect(r.readByResumed).toBeLessThan(r.readBySnapshot);
  });

  it('without the tape (the controls as they are now, from the start) the stream differs: the tape is what makes it exact', async () => {
    const options = await imageOptions();
    const blank = (t: TapeState): TapeState => ({ channels: {}, records: t.records, outcomes: t.outcomes });
    const r = await resumeMatches(imagePipeline, options, imageChanges, 30, 36, blank);
    expect(r.resumed.map((b) => b.ids)).not.toEqual(r.expected.map((b) => b.ids));
  });

  it('a table (TOC) pipeline resumed from its tape hands out the same compressed batches in the same order', async () => {
    const url = await serve(buildDataset());
    const options = testPipelineOptions(url, { fidelity: 1, epochs: Infinity, seed: 3, shuffleBuffer: 1000, echoFactor: 1, prefetch: 3 });
    const make = async () => new TocPipeline(() => undefined) as unknown as Pipe;
    const r = await resumeMatches(make, options, { 3: (p) => p.setEchoFactor(2.5), 9: (p) => p.setShuffleBuffer(500) }, 14, 30);
    expect(r.resumed).toEqual(r.expected);
  });

  it('a record the run skipped is skipped again, and one it read whole is read whole, though the server now answers otherwise', async () => {
    // Run A's server lost a record (404): it was skipped. By the resume the server is whole again, but the stream must match A's.
    const broken = new Map(images.files);
    const lost = [...broken.keys()].find((f) => f.endsWith('.pcr'))!;
    broken.delete(lost);
    const options = testPipelineOptions(await serve(broken), { epochs: Infinity, batchSize: 8, seed: 5, shuffleBuffer: 12, augment: true });
    const a = await imagePipeline();
    await a.open(options);
    const seen: number[][] = [];
    for (let i = 0; i < 12; i++) seen.push(Array.from((await a.next())!.ids));
    const tape = a.tapeState();
    a.close();
    expect(tape.outcomes.some(([, kept]) => kept === null)).toBe(true);
    const b = await imagePipeline();
    await b.open({ ...options, manifestUrl: await serve(images.files), resume: { tape, batches: 6 } });
    const resumed: number[][] = [];
    for (let i = 6; i < 12; i++) resumed.push(Array.from((await b.next())!.ids));
    b.close();
    expect(resumed).toEqual(seen.slice(6));
  });
});
