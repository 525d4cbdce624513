// The lab's runs in IndexedDB, via idb: the record of every run (train/run-record.ts:
// settings, curves, marks), to list and compare them, and the newest checkpoint
// of each recent run (train/checkpoint.ts), so a run survives a reload or a
// crash of the tab. Only the few most recent runs keep a checkpoint: it holds the model.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { validateCheckpoint, type Checkpoint } from '../train/checkpoint.js';
import type { RunRecord } from '../train/run-record.js';

/** Runs whose latest checkpoint is kept. */
const CHECKPOINTS_KEPT = 3;

interface Schema extends DBSchema {
  checkpoints: { key: string; value: Checkpoint; indexes: { savedAt: number } };
  runs: { key: string; value: RunRecord; indexes: { startedAt: number } };
}

/** What another tab wrote: run records only, or checkpoints (a run deleted takes its checkpoint with it). */
export type StoreNews = 'runs' | 'checkpoints';

export class RunStore {
  private db: Promise<IDBPDatabase<Schema>> | undefined;
  /** Tells the lab's other tabs what this one wrote, so their runs table and saved-run line follow without a reload. */
  private readonly news: BroadcastChannel | undefined;

  constructor(private readonly name = 'bytelab-runs') {
    if (typeof BroadcastChannel === 'undefined') return;
    this.news = new BroadcastChannel(`${name}:news`);
    (this.news as { unref?: () => void }).unref?.(); // in Node (unit tests) an open channel would keep the process alive
  }

  /** Hears what other tabs of this lab write (a channel does not hear its own messages: not this tab's writes). */
  onNews(listener: (news: StoreNews) => void): void {
    this.news?.addEventListener('message', (e) => listener((e as MessageEvent<StoreNews>).data));
  }

  private tell(news: StoreNews): void {
    this.news?.postMessage(news);
  }

  private open(): Promise<IDBPDatabase<Schema>> {
    this.db ??= openDB<Schema>(this.name, 1, {
      upgrade(db) {
        db.createObjectStore('checkpoints', { keyPath: 'runId' }).createIndex('savedAt', 'savedAt');
        db.createObjectStore('runs', { keyPath: 'id' }).createIndex('startedAt', 'startedAt');
      },
    });
    return this.db;
  }

  // ---------------------------------------------------------------- checkpoints

  /** Stores the run's newest checkpoint and drops the checkpoints of all but the most recent runs, in one transaction. */
  async saveCheckpoint(checkpoint: Checkpoint): Promise<void> {
    const tx = (await this.open()).transaction('checkpoints', 'readwrite');
    await tx.store.put(checkpoint);
    const byAge = await tx.store.index('savedAt').getAllKeys();
    for (const key of byAge.slice(0, Math.max(0, byAge.length - CHECKPOINTS_KEPT))) await tx.store.delete(key);
    await tx.done;
    this.tell('checkpoints');
  }

  /** The most recently saved checkpoint, checked; undefined when there is none. Throws for one this lab cannot continue. */
  async latestCheckpoint(): Promise<Checkpoint | undefined> {
    const db = await this.open();
    const cursor = await db.transaction('checkpoints').store.index('savedAt').openCursor(null, 'prev');
    return cursor ? validateCheckpoint(cursor.value) : undefined;
  }

  /** Saved runs with a checkpoint (one each, the newest CHECKPOINTS_KEPT runs). */
  async checkpointCount(): Promise<number> {
    return (await this.open()).count('checkpoints');
  }

  async removeCheckpoint(runId: string): Promise<void> {
    await (await this.open()).delete('checkpoints', runId);
    this.tell('checkpoints');
  }

  async clearCheckpoints(): Promise<void> {
    await (await this.open()).clear('checkpoints');
    this.tell('checkpoints');
  }

  // ---------------------------------------------------------------- run records

  async saveRun(run: RunRecord): Promise<void> {
    await (await this.open()).put('runs', run);
    this.tell('runs');
  }

  /** One run's record, as last saved by any tab. */
  async run(id: string): Promise<RunRecord | undefined> {
    return (await this.open()).get('runs', id);
  }

  /** The run started last, if any (its record alone: the others, with their curves, are not read). */
  async newestRun(): Promise<RunRecord | undefined> {
    const cursor = await (await this.open()).transaction('runs').store.index('startedAt').openCursor(null, 'prev');
    return cursor?.value;
  }

  /** Every recorded run, oldest first. */
  async runs(): Promise<RunRecord[]> {
    return (await this.open()).getAllFromIndex('runs', 'startedAt');
  }

  /** Deletes a run's record and its checkpoint. */
  async deleteRun(id: string): Promise<void> {
    const tx = (await this.open()).transaction(['runs', 'checkpoints'], 'readwrite');
    await Promise.all([tx.objectStore('runs').delete(id), tx.objectStore('checkpoints').delete(id), tx.done]);
    this.tell('checkpoints');
  }
}
