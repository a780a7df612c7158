import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type KyselyPlugin,
} from 'kysely';
import type { SqlDialect } from '../../src/store/query-context.ts';
import type { Database } from '../../src/store/schema.ts';

/** A Kysely of the dialect that compiles queries and runs none (a test reads the SQL it would send). */
export function compileOnlyKysely(dialect: SqlDialect, plugins: KyselyPlugin[] = []): Kysely<Database> {
  const [Adapter, Introspector, Compiler] =
    dialect === 'postgres'
      ? [PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler]
      : [SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler];
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => new Adapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (kysely) => new Introspector(kysely),
      createQueryCompiler: () => new Compiler(),
    },
    plugins,
  });
}
