// The TOC pipeline in Node against a real HTTP server: batches arrive compressed,
// with the GPU index structures, and a corrupt batch is named and skipped.
import { afterEach, describe, expect, it } from 'vitest';
import type { Batch, PipelineEvent, PipelineOptions, TocBatchMessage } from '../../../src/pipeline/api.js';
import { shuffleBatches, TocPipeline } from '../../../src/pipeline/toc-pipeline.js';
import type { TocManifest, TocSplitEntry } from '../../../src/toc/dataset.js';
import { decode } from '../../../src/toc/ops.js';
import { startTestServer, type TestServer } from '../../support/http-server.js';
import { testPipelineOptions } from '../../support/pipeline-options.js';
import { buildDataset, COLS, ROWS, row } from '../../support/toc-toy.js';

const base = buildDataset();
const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function drain(files: Map<string, Uint8Array>, over: Partial<PipelineOptions> = {}) {
  const server = await startTestServer(files);
  servers.push(server);
  const events: PipelineEvent[] = [];
  const p = new TocPipeline((e) => events.push(e));
  const info = await p.open(testPipelineOptions(`${server.url}manifest.json`, { fidelity: 1, ...over }));
  const batches: TocBatchMessage[] = [];
  for (let b: Batch | null; (b = await p.next()); ) {
    if (b.kind !== 'toc') throw new Error('expected TOC batches');
    batches.push(b);
  }
  return { info, batches, server, warnings: events.flatMap((e) => (e.type === 'warning' ? [e.message] : [])) };
}

describe('TOC shuffle buffer', () => {
  const split = (rowsPerBatch: number, batches: number): TocSplitEntry => ({
    records: [{ file: 'r0.tocr', batches: Array.from({ length: batches }, () => ({ rows: rowsPerBatch }) as TocSplitEntry['records'][0]['batches'][0]) }],
  });
  it("holds as many of the split's own batches as hold about the rows asked, and at least 2", () => {
    expect(shuffleBatches(512, split(250, 40))).toBe(2);
    expect(shuffleBatches(5000, split(250, 40))).toBe(20);
    // 2,000-row batches: before, the buffer counted 250-row batches, so 5,000 rows held 20 batches (40,000 rows).
    expect(shuffleBatches(5000, split(2000, 4))).toBe(3);
    expect(shuffleBatches(16000, split(2000, 4))).toBe(8);
    expect(shuffleBatches(1, split(2000, 4))).toBe(2);
  });
});

describe('TOC pipeline', () => {
  it('streams every batch compressed, one Range request per record, and the rows decode exactly', async () => {
    const { info, batches, server, warnings } = await drain(base);
    expect(warnings).toEqual([]);
    expect(info).toMatchObject({ kind: 'tabular', inputShape: [COLS], examples: ROWS, classes: ['a', 'b', 'c'] });
    expect(batches).toHaveLength(10);
    expect(server.requests.filter((r) => r.path.endsWith('.tocr') && r.status === 206)).toHaveLength(3);
    let r = 0;
    for (const b of batches) {
      const dense = decode(b.batch);
      // The runs layout came along, built from this batch.
      expect(b.layout.rowBounds.length).toBe(b.size + 1);
      expect(b.layout.model.nnz).toBe(dense.data.filter((x) => x !== 0).length);
      for (let i = 0; i < b.size; i++, r++) {
        const want = new Float64Array(COLS);
        const { cols, vals, label } = row(r);
        cols.forEach((c, k) => (want[c] = Math.fround(vals[k]!)));
        expect(Array.from(dense.data.subarray(i * COLS, (i + 1) * COLS))).toEqual(Array.from(want));
        expect(b.y[i]).toBe(label);
      }
    }
  });

  it("lays batches out for the model's k: tocColumns, 'classes' (the manifest's 3), or 64 when left out", async () => {
    for (const [over, k] of [
      [{}, 64],
      [{ tocColumns: 1 }, 1],
      [{ tocColumns: 'classes' }, 3],
    ] as Array<[Partial<PipelineOptions>, number]>) {
      const { batches } = await drain(base, over);
      for (const b of batches) {
        expect(b.layout.k).toBe(k);
        expect(b.layout.cost.k).toBe(k);
      }
    }
  });

  it('batch echoing with e = 2 hands over every batch twice without fetching more', async () => {
    const { batches, server } = await drain(base, { echoFactor: 2 });
    expect(batches).toHaveLength(20);
    // Each copy says it is one, whole: half the rows handed over are echoed.
    expect(batches.map((b) => b.echoed! / b.size).sort()).toEqual([...Array(10).fill(0), ...Array(10).fill(1)]);
    expect(server.requests.filter((r) => r.path.endsWith('.tocr'))).toHaveLength(3);
  });

  it('a corrupt batch is reported with record, batch and byte offset, and the others still arrive', async () => {
    const files = new Map(base);
    const manifest = JSON.parse(new TextDecoder().decode(files.get('manifest.json'))) as TocManifest;
    const record = manifest.splits.train.records[1]!;
    const frame = record.batches[2]!;
    const bytes = files.get(record.file)!.slice();
    bytes.fill(0xff, frame.offset + frame.bytes - 12, frame.offset + frame.bytes); // scribble over the end of its TOC data
    files.set(record.file, bytes);
    const { batches, warnings } = await drain(files);
    expect(batches).toHaveLength(9);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`${record.file} batch 2: .*byte \\d+.*batch skipped`));
  });

  it('a truncated record keeps the batches that arrived whole', async () => {
    const files = new Map(base);
    const manifest = JSON.parse(new TextDecoder().decode(files.get('manifest.json'))) as TocManifest;
    const record = manifest.splits.train.records[0]!;
    files.set(record.file, files.get(record.file)!.subarray(0, record.batches[3]!.offset + 5));
    const { batches, warnings } = await drain(files);
    expect(batches).toHaveLength(9);
    expect(warnings.join('\n')).toMatch(new RegExp(`${record.file}, batch 3 \\(byte ${record.batches[3]!.offset}\\): truncated`));
  });
});
