/**
 * What a route hands to its handler or actor: plain data only, declared here so
 * that the domains (src/actors) read it without depending on the HTTP layer.
 */
import type { Principal } from './principal.js';

/** What a handler or an actor receives: plain data only. */
export interface RouteInput<B = any, Q = any, P = any> {
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  requestId: string;
  /** The request headers the route declared in `headers` (lower-case names); empty otherwise. */
  headers?: Record<string, string>;
}

/** A raw-body route (log ingestion) receives the bytes and their content type. */
export interface RawInput {
  body: Buffer;
  contentType: string;
  requestId: string;
}
