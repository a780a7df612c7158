import { loadConfig, loadDotEnv, ConfigError } from './config/config.ts';
import { createLogger } from './core/logger.ts';
import { startServer } from './server.ts';

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

main().catch((error) => {
  // Configuration files (assistant profiles, MCP servers) are read as the server starts.
  if (error instanceof ConfigError) {
    process.stderr.write(`PromptPipe cannot start: invalid configuration\n${error.message}\n`);
    process.exit(78);
  }
  process.stderr.write(`PromptPipe failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
