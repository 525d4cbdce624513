// Checkpoints of runs (train/checkpoint.ts) in IndexedDB, via idb: one per run,
// the newest replacing the older, so a run survives a reload or a crash of the
// tab. Only the few most recent runs are kept: a checkpoint holds the model.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { validateCheckpoint, type Checkpoint } from '../train/checkpoint.js';

/** Runs whose latest checkpoint is kept. */
const RUNS_KEPT = 3;

interface Schema extends DBSchema {
  checkpoints: { key: string; value: Checkpoint; indexes: { savedAt: number } };
}

export class CheckpointStore {
  private db: Promise<IDBPDatabase<Schema>> | undefined;

  constructor(private readonly name = 'bytelab-runs') {}

  private open(): Promise<IDBPDatabase<Schema>> {
    this.db ??= openDB<Schema>(this.name, 1, {
      upgrade(db) {
        db.createObjectStore('checkpoints', { keyPath: 'runId' }).createIndex('savedAt', 'savedAt');
      },
    });
    return this.db;
  }

  /** Stores the run's newest checkpoint and drops the checkpoints of all but the most recent runs, in one transaction. */
  async save(checkpoint: Checkpoint): Promise<void> {
    const tx = (await this.open()).transaction('checkpoints', 'readwrite');
    await tx.store.put(checkpoint);
    const byAge = await tx.store.index('savedAt').getAllKeys();
    for (const key of byAge.slice(0, Math.max(0, byAge.length - RUNS_KEPT))) await tx.store.delete(key);
    await tx.done;
  }

  /** The most recently saved checkpoint, checked; undefined when there is none. Throws for one this lab cannot continue. */
  async latest(): Promise<Checkpoint | undefined> {
    const db = await this.open();
    const cursor = await db.transaction('checkpoints').store.index('savedAt').openCursor(null, 'prev');
    return cursor ? validateCheckpoint(cursor.value) : undefined;
  }

  async remove(runId: string): Promise<void> {
    await (await this.open()).delete('checkpoints', runId);
  }

  async clear(): Promise<void> {
    await (await this.open()).clear('checkpoints');
  }
}
