import { Worker } from 'node:worker_threads';

export interface CheckpointOptions {
  /** How often the worker copies the WAL into the database file (a PASSIVE checkpoint). */
  intervalMs: number;
  /**
   * WAL length (frames since it last started over) above which the worker also runs a RESTART
   * checkpoint, so that the next writer starts the WAL over.
   */
  restartFrames: number;
}

/**
 * Moves SQLite's WAL checkpoints off the commit path. With `wal_autocheckpoint` on, the commit
 * that crosses the threshold copies the WAL back into the database and fsyncs it, on the event
 * loop: that commit is the turn's p99. Instead, the store's connection never checkpoints, and a
 * worker thread with its own connection runs a PASSIVE checkpoint every `intervalMs` (it never
 * waits for, nor blocks, the writer). Durability is unchanged: a commit is in the WAL either way.
 * Under a steady stream of commits PASSIVE alone never lets the WAL start over, and it grew by
 * every commit's pages (half a gigabyte in six seconds of the turn benchmark): past
 * `restartFrames` the worker runs a RESTART checkpoint, which holds back writers only while it
 * copies the frames committed since its PASSIVE one.
 */
export class SqliteCheckpointer {
  readonly #worker: Worker;
  #stopped: Promise<void> | null = null;
  #exited = false;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** `onFailure` is told when the worker dies, so the caller can checkpoint on its own again. */
  static start(path: string, options: CheckpointOptions, onFailure: (error: Error) => void): SqliteCheckpointer {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, ...options } });
    const checkpointer = new SqliteCheckpointer(worker);
    worker.unref();
    worker.on('error', (error) => checkpointer.#stopped || onFailure(error));
    worker.on('exit', (code) => {
      checkpointer.#exited = true;
      if (!checkpointer.#stopped) onFailure(new Error(`SQLite checkpointer exited with code ${code}`));
    });
    return checkpointer;
  }

  /** Closes the worker's connection and ends the worker; every call waits for that. */
  stop(): Promise<void> {
    this.#stopped ??= new Promise<void>((resolve) => {
      if (this.#exited) return resolve();
      this.#worker.once('exit', () => resolve());
      // Unreferenced, the worker would let the process end while this waits for it (a script
      // whose last act is to close the store would exit with an unsettled promise).
      this.#worker.ref();
      this.#worker.postMessage('stop');
      // A worker stuck in a checkpoint is ended anyway.
      setTimeout(() => void this.#worker.terminate(), 2000).unref();
    });
    return this.#stopped;
  }
}

// Plain JavaScript, evaluated in the worker: no module loading, nothing to transpile.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { DatabaseSync } = require('node:sqlite');
const db = new DatabaseSync(workerData.path);
db.exec('PRAGMA busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
const timer = setInterval(() => {
  try {
    // A writer starts the WAL over only when every frame was copied before its transaction began,
    // which never happens while commits keep coming: past the limit, RESTART takes the write lock
    // between two commits (busy: the next round tries again) to copy the last frames.
    const { log } = checkpoint.get();
    if (log > workerData.restartFrames) restart.get();
  } catch { /* busy or locked: the next round tries again */ }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;
