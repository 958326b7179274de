/**
 * An actor is a named set of message handlers with a placement: `main` (the
 * HTTP thread's event loop, for owners of native resources such as chDB and the
 * shared store) or `worker` (a piscina worker thread, for domain logic).
 * Messages and replies are plain data, so they cross threads unchanged.
 */
import type { Logger } from '../../logger.js';
import type { Config } from '../../config/settings.js';
import type { DatabasePool } from 'slonik';

export type Placement = 'main' | 'worker';

/** What every actor can reach, wherever it runs. */
export interface BaseContext {
  config: Config;
  log: Logger;
  db: DatabasePool;
  /** Request/reply to another actor (any placement). */
  ask<R = unknown>(actor: string, type: string, payload?: unknown): Promise<R>;
  /** Fire and forget to another actor; failures are logged. */
  tell(actor: string, type: string, payload?: unknown): void;
  /** Milliseconds since the epoch, from the system clock (tests shift it, on every thread at once). */
  now(): number;
}

export type Handler<Ctx, P = any, R = unknown> = (payload: P, ctx: Ctx) => Promise<R> | R;

export interface ActorDefinition<Ctx extends BaseContext = BaseContext> {
  name: string;
  placement: Placement;
  /** Messages processed at once (main placement); default 1, a serial mailbox. */
  concurrency?: number;
  handlers: Record<string, Handler<Ctx>>;
  /** Starts background work (timers); main placement only. */
  start?(ctx: Ctx): Promise<void> | void;
  /** Flushes buffers and stops background work at shutdown; main placement only. */
  stop?(ctx: Ctx): Promise<void> | void;
}

/** Identity helper that keeps handler payload types inferred. */
export function defineActor<Ctx extends BaseContext>(def: ActorDefinition<Ctx>): ActorDefinition<Ctx> {
  return def;
}

/** One message as it travels to a worker. */
export interface Envelope {
  actor: string;
  type: string;
  payload: unknown;
}

/** A worker's answer: never a thrown error, so typed errors survive the crossing. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: import('../../errors.js').ErrorData };
