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

/** What a person would see differ: which examples, their labels, their pixels (or compressed rows), and the copies among them. */
function fingerprint(b: Batch): { ids: number[]; y: number[]; data: number[]; echoed: number | undefined } {
  const data = b.kind === 'image' ? Array.from(b.x) : [...b.batch.codes, ...b.batch.firstLayerCol];
  // echoed: the fresh examples trained after a resume count on as the run's would have.
  return { ids: Array.from(b.ids), y: Array.from(b.y), data, echoed: b.echoed };
}

type Pipe = BasePipeline<unknown> & { setFidelity(level: number): void };

/** The changes made before batch `at` (resumeMatches changes nothing after its tape is taken). */
const changesBefore = (changes: Record<number, (p: Pipe) => void>, at: number) => Object.fromEntries(Object.entries(changes).filter(([i]) => +i < at));

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
  // Through JSON, as any store that is not IndexedDB's structured clone would give it back.
  const saved = JSON.parse(JSON.stringify(tamper ? tamper(tape!) : tape!)) as TapeState;
  await b.open({ ...controls, resume: { tape: saved, batches: at } });
  const resumed: ReturnType<typeof fingerprint>[] = [];
  for (let i = at; i < total; i++) {
    const batch = await b.next();
    expect(batch!.index).toBe(i);
    resumed.push(fingerprint(batch!));
  }
  b.close();
  const { examplesRead: readByResumed, examplesReread: rereadByResumed, recordsFetched: fetchedByResumed, batchesWorkedOut: workedOut } = b.stats;
  const { records: recordsByResumed, examples: examplesByResumed } = b.tapeState();
  return {
    expected: seen.slice(at),
    resumed,
    readBySnapshot,
    readByResumed,
    rereadByResumed,
    fetchedByResumed,
    recordsByResumed,
    examplesByResumed,
    workedOut,
    tape: tape!,
  };
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
    expect(r.readByResumed + r.rereadByResumed).toBeLessThan(r.readBySnapshot);
    // Records the run before had read are read again only for the examples still to be trained on, and those reads are not
    // fresh examples (the lab's "epochs read" would count them twice): examplesRead counts only records past the tape.
    expect(r.rereadByResumed).toBeGreaterThan(0);
    expect(r.readByResumed + r.rereadByResumed).toBe(20 * r.fetchedByResumed);
    expect(r.readByResumed).toBeLessThanOrEqual(20 * (r.recordsByResumed - r.tape.records + options.requestsInFlight!));
    // The tapes count the examples of the records consumed (20 each), across the resume: what a checkpoint carries on from.
    expect(r.tape.examples).toBe(20 * r.tape.records);
    expect(r.examplesByResumed).toBe(20 * r.recordsByResumed);
  });

  it('without the tape (the controls as they are now, from the start) the stream differs: the tape is what makes it exact', async () => {
    const options = await imageOptions();
    const blank = (t: TapeState): TapeState => ({ channels: {}, records: t.records, outcomes: t.outcomes });
    const r = await resumeMatches(imagePipeline, options, imageChanges, 30, 36, blank);
    expect(r.resumed.map((b) => b.ids)).not.toEqual(r.expected.map((b) => b.ids));
  });

  it('resumed from the latest stream snapshot, it works out only the batches after it, and hands out the same batches at every point', async () => {
    // A snapshot after every batch, a resume at every batch: snapshots fall where each echo stage owes copies, the shuffle buffer
    // shrinks, the fidelity changes. The run changes its controls only before the resume point (resumeMatches' rule).
    const options = { ...(await imageOptions()), snapshotEvery: 1 };
    const owing = new Set<string>();
    for (let at = 1; at <= 44; at++) {
      const r = await resumeMatches(imagePipeline, options, changesBefore(imageChanges, at), at, 48);
      expect(r.resumed, `resumed at batch ${at}`).toEqual(r.expected);
      const from = r.tape.snapshots!.filter((s) => s.batch <= at).at(-1)!;
      expect(r.workedOut, `resumed at batch ${at}`).toBe(at - from.batch);
      expect(r.workedOut).toBeLessThan(8);
      for (const [stage, held] of Object.entries(from.held as Record<string, { left?: number }>)) if (held.left) owing.add(stage);
    }
    expect([...owing].sort()).toEqual(['batches', 'early', 'late']);
    // Without snapshots (a tape saved before they existed) the same stream comes from working out every batch.
    const whole = await resumeMatches(imagePipeline, options, imageChanges, 30, 40, (t) => ({ ...t, snapshots: undefined }));
    expect(whole.resumed).toEqual(whole.expected);
    expect(whole.workedOut).toBe(30);
  });

  it('resumed while the shuffle buffer warms up (it emits before it is full), it hands out the same batches', async () => {
    // 48 examples: the buffer grows two in, one out over the first 96 arrivals (about 6 batches of 8), so snapshots 1-5 hold it part full.
    const options = { ...(await imageOptions()), shuffleBuffer: 48, snapshotEvery: 1 };
    const warming: number[] = [];
    for (let at = 1; at <= 8; at++) {
      const r = await resumeMatches(imagePipeline, options, {}, at, 12);
      expect(r.resumed, `resumed at batch ${at}`).toEqual(r.expected);
      const { capacity, items } = (r.tape.snapshots!.find((s) => s.batch === at)!.held as { shuffle: { capacity: number; items: unknown[] } }).shuffle;
      if (capacity < 48) warming.push(at);
      expect(items.length).toBeLessThanOrEqual(Math.ceil(capacity));
    }
    expect(warming.length).toBeGreaterThanOrEqual(4);
    // And from the start, without snapshots: the warm-up is worked out again the same way.
    const whole = await resumeMatches(imagePipeline, options, {}, 3, 10, (t) => ({ ...t, snapshots: undefined }));
    expect(whole.resumed).toEqual(whole.expected);
  });

  it('a run taped before the shuffle buffer warmed up resumes with the order it had: a full buffer before the first batch', async () => {
    // A pipeline resumed from an empty tape of that time (no shuffleWarmUp) at batch 0 is such a run, from its start.
    const before = { channels: {}, records: 0, outcomes: [] } satisfies TapeState;
    const options = { ...(await imageOptions()), resume: { tape: before, batches: 0 } };
    const old = await resumeMatches(imagePipeline, options, {}, 5, 12);
    expect(old.tape.shuffleWarmUp).toBe(false);
    expect(old.resumed).toEqual(old.expected);
    // Its first batch came out of a full buffer of 16: not what a run of today hands out first.
    const today = await resumeMatches(imagePipeline, await imageOptions(), {}, 5, 12);
    expect(today.tape.shuffleWarmUp).toBe(true);
    expect(today.expected.map((b) => b.ids)).not.toEqual(old.expected.map((b) => b.ids));
    // Resumed as if it warmed up, the old run would go on with other examples: the flag is what keeps it exact.
    const wrong = await resumeMatches(imagePipeline, options, {}, 5, 12, (t) => ({ ...t, shuffleWarmUp: true }));
    expect(wrong.resumed).not.toEqual(wrong.expected);
  });

  it('a snapshot taken while the shuffle buffer drains at the end of the last epoch restores the same last batches and the same end', async () => {
    const options = testPipelineOptions(await serve(images.files), { epochs: 2, batchSize: 8, seed: 9, shuffleBuffer: 30, augment: true, snapshotEvery: 1 });
    const a = await imagePipeline();
    await a.open(options);
    const all: number[][] = [];
    for (let batch = await a.next(); batch; batch = await a.next()) all.push(Array.from(batch.ids));
    const tape = a.tapeState();
    a.close();
    expect(all.length).toBe(15); // 120 examples in batches of 8
    const at = all.length - 2; // the buffer (30) is draining by then: the last record's examples went in before batch 12
    expect((tape.snapshots!.find((s) => s.batch === at)!.held as { shuffle: { draining: boolean } }).shuffle.draining).toBe(true);
    const b = await imagePipeline();
    await b.open({ ...options, resume: { tape, batches: at } });
    const rest: number[][] = [];
    for (let batch = await b.next(); batch; batch = await b.next()) rest.push(Array.from(batch.ids));
    b.close();
    expect(b.stats.batchesWorkedOut).toBe(0);
    expect(rest).toEqual(all.slice(at));
  });

  it('a snapshot naming data its tape does not hold is refused with a message saying so', async () => {
    const options = { ...(await imageOptions()), snapshotEvery: 4 };
    const a = await imagePipeline();
    await a.open(options);
    for (let i = 0; i < 12; i++) await a.next();
    const tape = a.tapeState();
    a.close();
    const bad = structuredClone(tape);
    for (const snap of bad.snapshots!) (snap.held as { shuffle: { items: number[][] } }).shuffle.items[0] = [10_000, 0, 0];
    const b = await imagePipeline();
    await b.open({ ...options, resume: { tape: bad, batches: 8 } });
    await expect(b.next()).rejects.toThrow(/stream snapshot names example 10000/);
    b.close();
  });

  it('a table (TOC) pipeline resumed from its tape hands out the same compressed batches in the same order', async () => {
    const url = await serve(buildDataset());
    const options = testPipelineOptions(url, { fidelity: 1, epochs: Infinity, seed: 3, shuffleBuffer: 1000, echoFactor: 1, prefetch: 3 });
    const make = async () => new TocPipeline(() => undefined) as unknown as Pipe;
    const changes = { 3: (p: Pipe) => p.setEchoFactor(2.5), 9: (p: Pipe) => p.setShuffleBuffer(500) };
    const r = await resumeMatches(make, options, changes, 14, 30);
    expect(r.resumed).toEqual(r.expected);
    // Rows read again to continue are not fresh rows (see the image test).
    expect(r.rereadByResumed).toBeGreaterThan(0);
    for (const at of [7, 14, 22]) {
      const s = await resumeMatches(make, { ...options, snapshotEvery: 3 }, changesBefore(changes, at), at, 30);
      expect(s.resumed, `resumed at batch ${at}`).toEqual(s.expected);
      expect(s.workedOut).toBeLessThan(at);
    }
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
