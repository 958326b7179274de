#!/usr/bin/env node
/**
 * Start-up: arguments, configuration, then the service; SIGTERM/SIGINT stop it in reverse order and exit 0.
 * Any start-up failure (a bad setting, a port or data directory in use, a store out of reach) stops the process
 * with one line on stderr; the stack is printed only at SVC_LOG_LEVEL=debug or trace.
 */
import { ConfigError, loadConfig } from './config/load.js';
import { loadBuildInfo } from './version.js';
import { parseArgs, usage } from './cli.js';

let verbose = false;

async function main(): Promise<void> {
  const command = parseArgs(process.argv.slice(2));
  switch (command.kind) {
    case 'help':
      process.stdout.write(usage());
      return;
    case 'version':
      process.stdout.write(`${loadBuildInfo().version}\n`);
      return;
    case 'error':
      process.stderr.write(`${command.message}\n`);
      process.exit(2);
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
  verbose = config.logLevel === 'debug' || config.logLevel === 'trace';
  // Loaded here, so that --help and a bad setting answer without loading the whole service.
  const [{ createLogger }, { startService }] = await Promise.all([import('./logger.js'), import('./service.js')]);
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

/** The error and its causes on one line. */
function oneLine(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && parts.length < 4; e = (e as { cause?: unknown }).cause) {
    parts.push(e instanceof Error ? e.message : String(e));
    if (!(e instanceof Error)) break;
  }
  return parts.join(': ').replace(/\s*\n\s*/g, ' ');
}

main().catch((err: unknown) => {
  process.stderr.write(`failed to start: ${oneLine(err)}\n`);
  if (verbose && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
