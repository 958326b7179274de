/**
 * An actor is a named set of message handlers with a placement: `main` (the
 * HTTP thread's event loop, for owners of native resources such as chDB and the
 * shared store) or `worker` (a piscina worker thread, for domain logic).
 * Messages and replies are plain data, so they cross threads unchanged.
 */
import type { Logger } from '../../logger.js';
import type { Config } from '../../config/settings.js';
import type { DatabasePool } from 'slonik';
import type { Handle, HandleInput, InputFrom, InputSchemas } from '../../contract/handle.js';

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

/** A handler for each handle of a domain, its input typed by the handle's schemas. */
export type Implementation<H extends Record<string, Handle<any>>, Ctx> = {
  [K in keyof H]: (input: HandleInput<H[K]>, ctx: Ctx) => Promise<unknown> | unknown;
};

/**
 * The handlers of an actor's handles, keyed by their message names. tsc
 * refuses a missing handler and an input that does not match the schemas;
 * start-up refuses a route whose handle no actor answers (checkHandles).
 */
export function implement<H extends Record<string, Handle<any>>, Ctx extends BaseContext = BaseContext>(
  handles: H,
  impl: Implementation<H, Ctx>,
): Record<string, Handler<Ctx>> {
  const out: Record<string, Handler<Ctx>> = {};
  for (const [key, h] of Object.entries(handles)) out[h.message] = impl[key as keyof H] as Handler<Ctx>;
  return out;
}

/**
 * One handler of a handle, its input typed by the handle's schemas: for an
 * actor whose routed handlers sit among others (the logs actor).
 * `handlerFor<MainContext>()` gives the typed helper for that context.
 */
export const handlerFor =
  <Ctx extends BaseContext>() =>
  <S extends InputSchemas>(_handle: Handle<S>, fn: (input: InputFrom<S>, ctx: Ctx) => Promise<unknown> | unknown): Handler<Ctx> =>
    fn as Handler<Ctx>;

/** One message as it travels to a worker. */
export interface Envelope {
  actor: string;
  type: string;
  payload: unknown;
}

/** A worker's answer: never a thrown error, so typed errors survive the crossing. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: import('../../errors.js').ErrorData };
