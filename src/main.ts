#!/usr/bin/env node
/**
 * Start-up: configuration, then the service; SIGTERM/SIGINT stop it in
 * reverse order and exit 0. A bad setting or a refused migration stops the
 * process with one line.
 */
import { ConfigError, loadConfig } from './config/load.js';
import { createLogger } from './logger.js';
import { loadBuildInfo } from './version.js';
import { startService } from './service.js';
import { MigrationError } from './storage/migrations/files.js';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--version') || args.includes('-v')) {
    process.stdout.write(`${loadBuildInfo().version}\n`);
    return;
  }
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const service = await startService(config, log);

  let signalled = false;
  const shutdown = (signal: string): void => {
    if (signalled) return;
    signalled = true;
    log.info({ signal }, 'shutting down');
    service
      .stop()
      .then(() => {
        log.info('stopped');
        log.flush?.();
        process.exit(0);
      })
      .catch((err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  // A migration refusal is the operator's to fix: one line naming the file, no stack.
  if (err instanceof MigrationError) {
    process.stderr.write(`failed to start: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
