/**
 * What HTTP-thread handlers may use: configuration, the logger, the build and
 * the actor system's ask/tell. No SQL and no store keys live in src/http.
 */
import type { Config } from '../config/settings.js';
import type { Logger } from '../logger.js';
import type { Authenticator } from './auth.js';
import type { BuildInfo } from '../version.js';

export interface AppContext {
  config: Config;
  log: Logger;
  build: BuildInfo;
  auth: Authenticator;
  startedAt: number;
  now(): number;
  ask<R = unknown>(actor: string, type: string, payload?: unknown): Promise<R>;
  tell(actor: string, type: string, payload?: unknown): void;
}
