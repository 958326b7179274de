/**
 * pino JSON logs; pretty only when a terminal is attached. Secrets are redacted
 * by path so that a careless `log.info({ req })` still never prints one.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export const redactPaths = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'x-internal-token',
  '*["x-internal-token"]',
  'api_key',
  '*.api_key',
  'key_secret',
  '*.key_secret',
  'master_key',
  '*.master_key',
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
  'secret',
  '*.secret',
  'password',
  '*.password',
];

/**
 * Errors are logged by type, message, code and stack only: driver errors carry
 * the bound values and details such as `Key (api_key)=(…) already exists`,
 * which may hold a secret.
 */
export function safeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const e = err as Error & { code?: unknown };
  return { type: e.name, message: e.message, ...(e.code !== undefined ? { code: e.code } : {}), stack: e.stack };
}

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    serializers: { err: safeError },
    redact: { paths: redactPaths, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (destination) return pino(options, destination as pino.DestinationStream);
  if (process.stdout.isTTY) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true } } });
  }
  return pino(options);
}
