import { loadConfig, loadDotEnv, ConfigError } from './config/config.ts';
import { describeError, isStoreUnavailable } from './core/errors.ts';
import { createLogger } from './core/logger.ts';
import { startServer } from './server.ts';
import { GoDatabaseError } from './store/go-database-check.ts';
import { SqliteOpenError } from './store/open-store.ts';

/** How long after `SHUTDOWN_TIMEOUT_MS` the process exits even if closing has not finished. */
const SHUTDOWN_GRACE_MS = 5000;

/** Start-up: environment (and an optional .env) → config → server; SIGTERM/SIGINT drain and exit. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(loadDotEnv('.env', process.env));
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`PromptPipe cannot start: invalid configuration\n${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const logger = createLogger({ level: config.log.level, redact: config.log.redact });
  for (const warning of config.warnings) logger.warn(warning);
  const server = await startServer(config, logger);
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down: draining turns and deliveries');
    // Draining is bounded by the shutdown timeout; closing connections to a database that does
    // not answer is not, so the process does not wait for that past a grace period.
    setTimeout(() => {
      logger.error(
        { graceMs: SHUTDOWN_GRACE_MS },
        'shutdown did not finish in time (is the database answering?); exiting anyway',
      );
      process.exit(1);
    }, config.server.shutdownTimeoutMs + SHUTDOWN_GRACE_MS).unref();
    server.close().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** What a DATABASE_URL asks for that the server does not have: a password, a database, a role, SSL. */
const URL_PROBLEMS = [
  /password authentication failed/,
  /database ".*" does not exist/,
  /role ".*" does not exist/,
  /^The server does not support SSL connections$/,
];

/** The start-up failures people cause by configuration, said in their terms; undefined for the rest. */
function startupProblem(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const env = process.env;
  if (code === 'EADDRINUSE')
    return (
      `PORT ${env.PORT ?? '8080'} is already in use on ${env.HOST ?? '127.0.0.1'}: ` +
      'stop the other server or set PORT'
    );
  if (code === 'EACCES') return `PORT ${env.PORT ?? '8080'} needs privileges on this machine: use a PORT above 1023`;
  if (code === 'EADDRNOTAVAIL') return `HOST ${env.HOST ?? ''} is not an address of this machine`;
  if (error instanceof GoDatabaseError || error instanceof SqliteOpenError) return error.message;
  if (isStoreUnavailable(error)) {
    const message = (error as Error).message.replace(/; retry shortly$/, '');
    return `DATABASE_URL: ${message} (${describeError((error as Error).cause)})`;
  }
  if (code === 'ENOTFOUND' || code === 'ECONNREFUSED')
    return `DATABASE_URL: the database cannot be reached (${describeError(error)})`;
  // pg's connect timeout: an address that takes the connection and never answers (a firewall, a black hole).
  if (
    /^(timeout expired|Connection terminated due to connection timeout)$/.test(
      (error as Error | undefined)?.message ?? '',
    )
  )
    return (
      'DATABASE_URL: the database did not answer within DATABASE_CONNECT_TIMEOUT_MS ' +
      `(${env.DATABASE_CONNECT_TIMEOUT_MS ?? 5000} ms)`
    );
  if (URL_PROBLEMS.some((problem) => problem.test(describeError(error))))
    return `DATABASE_URL: ${describeError(error)}`;
  // PostgreSQL refused the connection before any query: for what the URL says (pg_hba.conf, no
  // user name, classes 28, 3D and 08), or for its own state (too many connections, starting up).
  const refusal = error as { severity?: unknown; code?: unknown } | undefined;
  if (refusal?.severity === 'FATAL')
    return /^(28|3D|08)/.test(String(refusal.code))
      ? `DATABASE_URL: ${describeError(error)}`
      : `PostgreSQL refused the connection: ${describeError(error)}`;
  return undefined;
}

main().catch((error) => {
  // Configuration files (assistant profiles, MCP servers) are read as the server starts.
  if (error instanceof ConfigError) {
    process.stderr.write(`PromptPipe cannot start: invalid configuration\n${error.message}\n`);
    process.exit(78);
  }
  const known = startupProblem(error);
  // A problem a newcomer can fix gets one line naming the variable; anything else its stack.
  process.stderr.write(
    known
      ? `PromptPipe cannot start: ${known}\n`
      : `PromptPipe failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
