/**
 * Writes a streamed reply (route.ts, `Streamed`) to uWS: status and headers,
 * then each block as a chunk, waiting for the socket to drain whenever uWS
 * reports backpressure, so a slow client slows the store's read instead of
 * filling memory. Writes after an await are corked, as everywhere.
 */
import type { Streamed } from './route.js';
import { statusLine, type Exchange } from './reply.js';

/**
 * Resolves true once the body was written and the response ended, false when
 * the client went away first (the body's iteration is then left, which
 * cancels the query behind it). Rejects when the body fails after the first
 * block: the connection is then closed, so the client sees a truncated reply.
 */
export async function sendStream(ex: Exchange, status: number, contentType: string, reply: Streamed): Promise<boolean> {
  const { res } = ex;
  const body = reply.body;
  if (ex.aborted || ex.done) {
    await body.return?.();
    return false;
  }
  ex.done = true;
  let wake: (() => void) | null = null;
  ex.onAbort = () => wake?.();
  const drained = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
      res.onWritable(() => {
        wake = null;
        resolve();
        return true;
      });
    });

  res.cork(() => {
    res.writeStatus(statusLine(status));
    res.writeHeader('X-Request-ID', ex.requestId);
    if (!reply.headers['Content-Type']) res.writeHeader('Content-Type', contentType);
    for (const k in reply.headers) res.writeHeader(k, reply.headers[k]!);
  });
  try {
    for (;;) {
      const next = await body.next();
      if (ex.aborted) return false;
      if (next.done) break;
      let ok = true;
      res.cork(() => (ok = res.write(next.value)));
      if (!ok) await drained();
      if (ex.aborted) return false;
    }
  } catch (err) {
    if (!ex.aborted) res.close();
    throw err;
  } finally {
    await body.return?.();
  }
  res.cork(() => res.end());
  return true;
}
