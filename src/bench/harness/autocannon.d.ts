/** The part of autocannon's programmatic API the bench uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface RequestData {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  interface Request extends RequestData {
    setupRequest?: (req: RequestData, context: Record<string, unknown>) => RequestData | null;
  }

  /** autocannon's per-connection client; `_doRequest` and `reqsMade` are internals (see harness/load.ts). */
  interface Client extends EventEmitter {
    reqsMade: number;
    _doRequest(...args: unknown[]): unknown;
  }

  interface Options {
    url: string;
    setupClient?: (client: Client) => void;
    connections?: number;
    pipelining?: number;
    duration?: number;
    timeout?: number;
    requests?: Request[];
  }

  interface Result {
    errors: number;
    timeouts: number;
    resets: number;
    duration: number;
    requests: { sent: number; total: number };
  }

  interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(opts: Options): Instance;
  export default autocannon;
}
