import { Worker } from 'node:worker_threads';

/**
 * Moves SQLite's WAL checkpoints off the commit path. With `wal_autocheckpoint` on, the commit
 * that crosses the threshold copies the WAL back into the database and fsyncs it, on the event
 * loop: that commit is the turn's p99. Instead, the store's connection never checkpoints, and a
 * worker thread with its own connection runs a PASSIVE checkpoint every `intervalMs` (it never
 * waits for, nor blocks, the writer). Durability is unchanged: a commit is in the WAL either way.
 */
export class SqliteCheckpointer {
  readonly #worker: Worker;
  #stopped = false;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** `onFailure` is told when the worker dies, so the caller can checkpoint on its own again. */
  static start(path: string, intervalMs: number, onFailure: (error: Error) => void): SqliteCheckpointer {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, intervalMs } });
    const checkpointer = new SqliteCheckpointer(worker);
    worker.unref();
    worker.on('error', (error) => checkpointer.#stopped || onFailure(error));
    worker.on('exit', (code) => checkpointer.#stopped || onFailure(new Error(`SQLite checkpointer exited with code ${code}`)));
    return checkpointer;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.#worker.terminate();
  }
}

// Plain JavaScript, evaluated in the worker: no module loading, nothing to transpile.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
setInterval(() => {
  try { checkpoint.get(); } catch { /* busy or locked: the next round tries again */ }
}, workerData.intervalMs);
`;
