/**
 * A typed handle names one message of an actor and the schemas of what its
 * route hands it. A domain declares its handles in `src/actors/<domain>/handles.ts`
 * (plain data and types, nothing that runs on a worker or touches a store), so
 * the HTTP layer can import them; the actor implements every handle with a
 * handler whose input type is inferred from the same schemas (json-schema-to-ts,
 * a type-only import), and a route takes its schemas from its handle.
 */
import type { FromSchema, JSONSchema as Inferable } from 'json-schema-to-ts';
import type { RouteInput } from './input.js';

/**
 * How a body's bytes become the value its schema describes. `json` (the
 * default): the HTTP thread parses and validates it. `bytes`: the bytes go to
 * the actor as they are, which parses them as JSON with the validator compiled
 * from this same declaration (`parseDeclared`, ./body.ts), off the HTTP thread.
 * `ndjson`: JSON or newline-delimited JSON records, parsed where the route says
 * (log ingestion: the logs actor, record by record).
 */
export type BodyParser = 'json' | 'ndjson' | 'bytes';

/** What a message receives from its route, each a literal schema (`as const`) so that its type can be read. */
export interface InputSchemas {
  readonly params?: object;
  readonly query?: object;
  readonly body?: object;
  readonly parser?: BodyParser;
}

/** The value a validator lets through, as a type; `unknown` where the route declares no schema. */
export type Validated<S> = S extends Inferable ? FromSchema<S> : unknown;

/** What a handler receives for the message whose schemas are `S`. */
export type InputFrom<S extends InputSchemas> = RouteInput<
  S['parser'] extends 'bytes' ? Uint8Array : Validated<S['body']>,
  Validated<S['query']>,
  Validated<S['params']>
>;

export interface Handle<S extends InputSchemas = InputSchemas> {
  readonly actor: string;
  readonly message: string;
  readonly input: S;
}

/** The input type of a handle's handler. */
export type HandleInput<H> = H extends Handle<infer S> ? InputFrom<S> : never;

/** The handles of one actor, keyed by message name. */
export type Handles<M extends Record<string, InputSchemas>> = { readonly [K in keyof M & string]: Handle<M[K]> };

/**
 * Declares the messages of `actor` that routes reach, each with its input
 * schemas. The key is the message name, so a handle cannot name a message of
 * another spelling.
 */
export function handles<const M extends Record<string, InputSchemas>>(actor: string, messages: M): Handles<M> {
  const out: Record<string, Handle> = {};
  for (const [message, input] of Object.entries(messages)) out[message] = Object.freeze({ actor, message, input });
  return Object.freeze(out) as Handles<M>;
}

/** `actor.message`, as start-up errors and logs name a handle. */
export const handleName = (h: Handle): string => `${h.actor}.${h.message}`;
