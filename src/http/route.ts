/**
 * A route is declared once: method, path, role, schemas and what answers it.
 * The server compiles validators and serializers from it and the OpenAPI
 * document is generated from the same declarations.
 */
import type { JSONSchema } from '../contract/validate.js';
import type { Role } from './auth.js';
import type { RawInput, RouteInput } from '../contract/input.js';
import type { AppContext } from './context.js';
import type { Handle } from '../contract/handle.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** A reply with a status or headers other than the route's declared success. */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

/**
 * A reply whose body is written as it is produced (CSV exports), with
 * backpressure: the next block is taken only once the client has read the
 * previous one. Any route may return one; it declares the body's type in
 * `produces`. An error after the first block closes the connection (the status
 * line is gone), so a client sees a truncated body, never a complete-looking one.
 */
export class Streamed {
  constructor(
    readonly body: AsyncIterableIterator<Uint8Array>,
    readonly headers: Record<string, string> = {},
  ) {}
}

interface RouteBase {
  method: Method;
  /** OpenAPI-style template, e.g. `/admin/masters/{id}`. */
  path: string;
  role: Role;
  summary: string;
  /** Longer text for the OpenAPI document: defaults, windows, delays a caller must know. */
  description?: string;
  tags: string[];
  params?: JSONSchema;
  query?: JSONSchema;
  /** Largest accepted body in bytes; default 1 MiB. */
  bodyLimit?: number;
  /** Success status and its body schema (null: empty body); error statuses are documented automatically. */
  success: { status: number; schema: JSONSchema | null; description?: string };
  /** Serve the result as this content type instead of JSON (e.g. Prometheus text). */
  produces?: string;
  /** Request headers the handler reads (lower-case), e.g. accept-encoding for precompressed assets; read only for such routes. */
  headers?: string[];
}

export interface ActorRoute extends RouteBase {
  /** The handle's body schema; its parser says where the body is parsed (`bytes`: by the actor, with this schema). */
  body?: JSONSchema;
  /** The actor message that answers, exported by its domain; the payload is the RouteInput. */
  handle: Handle;
}

/** What a route declares beside its handle: its params, query and body schemas are the handle's. */
export type ActorRouteSpec = Omit<ActorRoute, 'handle' | 'params' | 'query' | 'body'>;

/** An actor route: the validators, the handler's input type and the OpenAPI document all read the handle's schemas. */
export const actorRoute = (handle: Handle, spec: ActorRouteSpec): ActorRoute => ({ ...spec, ...handle.input, handle }) as ActorRoute;

export interface HandlerRoute extends RouteBase {
  body?: JSONSchema;
  handler: (input: RouteInput, app: AppContext) => Promise<unknown> | unknown;
}

/**
 * A route whose body's bytes go, unparsed, to the actor message of its handle
 * (log ingestion): the handle declares the body schema and the parser
 * (`ndjson`: JSON or newline-delimited records, which also widens the accepted
 * media types), and the actor parses the bytes with the validator compiled from
 * that schema. The handler may refuse the bytes first (size rules).
 */
export interface RawRoute extends RouteBase {
  /** The handle's body schema (for the document: the actor validates). */
  body?: JSONSchema;
  ingests: Handle;
  handler: (input: RawInput, app: AppContext) => Promise<unknown> | unknown;
}

export type Route = ActorRoute | HandlerRoute | RawRoute;

/** Typed constructors: a handler's parameters are inferred from the kind of route. */
export const handlerRoute = (r: HandlerRoute): HandlerRoute => r;
export const rawRoute = (handle: Handle, spec: Omit<RawRoute, 'ingests' | 'body'>): RawRoute => ({ ...spec, body: handle.input.body as JSONSchema, ingests: handle });

export const isRawRoute = (r: Route): r is RawRoute => 'ingests' in r;

/** Whether a route takes newline-delimited JSON besides JSON (its handle's parser is `ndjson`). */
export const takesNdjson = (r: Route): boolean => isRawRoute(r) && r.ingests.input.parser === 'ndjson';
export const isActorRoute = (r: Route): r is ActorRoute => 'handle' in r;

/** The actor message an actor route reaches. */
export const handleOf = (r: ActorRoute): Handle => r.handle;
