import pg from 'pg';
import { PG_URL } from './requirements.ts';

/**
 * Fresh PostgreSQL schemas for a test file's servers: `next()` names one (`<prefix>_<pid>_<n>`)
 * and gives the env that points a server at it; `dropAll()` (in `afterAll`) removes them all.
 */
export function pgSchemas(prefix: string) {
  const schemas: string[] = [];
  return {
    next(): Record<string, string> {
      schemas.push(`${prefix}_${process.pid}_${schemas.length}`);
      return { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schemas.at(-1)! };
    },
    async dropAll(): Promise<void> {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      for (const schema of schemas) await admin.query(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    },
  };
}
