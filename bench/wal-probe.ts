// Throw-away probe (not committed): which b-trees each commit writes. Checkpoints off, WAL parsed.
import { SqliteCheckpointer } from '../src/store/sqlite-checkpointer.ts';
(SqliteCheckpointer as unknown as { start: () => null }).start = () => null;
const { readFileSync } = await import('node:fs');
const { DatabaseSync } = await import('node:sqlite');
(globalThis as any).__walProbe = (file: string) => {
  const wal = readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const db = new DatabaseSync(file);
  const names = new Map<number, string>();
  for (const r of db.prepare('select name, pageno from dbstat').all() as any[]) names.set(r.pageno, r.name);
  db.close();
  const commits: Map<string, number>[] = [];
  let current = new Map<string, number>();
  for (let off = 32; off + 24 + pageSize <= wal.length; off += 24 + pageSize) {
    const page = wal.readUInt32BE(off);
    const name = names.get(page) ?? `?${page}`;
    current.set(name, (current.get(name) ?? 0) + 1);
    if (wal.readUInt32BE(off + 4) !== 0) { commits.push(current); current = new Map(); }
  }
  const last = commits.slice(-400);
  const total = new Map<string, number>();
  for (const c of last) for (const [k, v] of c) total.set(k, (total.get(k) ?? 0) + v);
  console.error('commits', last.length, 'frames/commit', ([...total.values()].reduce((a, b) => a + b, 0) / last.length).toFixed(1));
  for (const [k, v] of [...total].sort((a, b) => b[1] - a[1])) console.error((v / last.length).toFixed(2).padStart(7), k);
};
