/**
 * Receiving request bodies within two bounds: each body's own limit, and the
 * bytes held for all bodies still being received (SVC_BODY_MEMORY_BYTES), so
 * that slow uploads cannot pin unbounded memory. A declared Content-Length is
 * reserved whole before the first byte is read; a chunked body reserves as it
 * arrives. What a body held is given back when it completes or is aborted.
 */
import type { HttpResponse } from 'uWebSockets.js';

/** The bytes held by unfinished bodies across all requests, against one cap. */
export class BodyBudget {
  private heldBytes = 0;

  constructor(readonly cap: number) {}

  get held(): number {
    return this.heldBytes;
  }

  take(bytes: number): boolean {
    if (this.heldBytes + bytes > this.cap) return false;
    this.heldBytes += bytes;
    return true;
  }

  give(bytes: number): void {
    this.heldBytes -= bytes;
  }
}

/** Why a body was not read: over its own limit, or no room in the budget. */
export type BodyRefusal = 'too_large' | 'busy';

/**
 * A body over its limit, of up to this many bytes, is read to its end and
 * dropped before the 413 is answered: a connection closed while the client is
 * still sending is reset, and the client may then see only the reset (EPIPE
 * in fetch), never the 413. Past it the refusal is answered at once and the
 * connection cut, so a huge upload costs no more than this.
 */
export const DRAIN_BYTES = 64 * 1024 * 1024;

/**
 * Reads one body into a single buffer (uWS chunks are only valid inside the
 * callback, so each is copied once). `done` is called once, with the body or
 * a refusal: over `limit` (declared or as it arrives; the rest is read and
 * dropped first, up to DRAIN_BYTES, holding nothing) or no room in the budget
 * (at once, nothing more read). The caller then answers and closes the
 * connection. Returns what to call when the request is aborted.
 */
export function readBody(
  res: HttpResponse,
  limit: number,
  declared: number | undefined,
  budget: BodyBudget,
  crossesThreads: boolean,
  done: (body: Buffer | BodyRefusal) => void,
): () => void {
  let held = 0;
  let settled = false;
  const settle = (outcome: Buffer | BodyRefusal): void => {
    settled = true;
    budget.give(held);
    held = 0;
    done(outcome);
  };
  const abort = (): void => {
    if (settled) return;
    settled = true;
    budget.give(held);
    held = 0;
  };

  if (declared !== undefined) {
    if (!(declared <= limit)) {
      if (declared <= DRAIN_BYTES) dropRest(res, 0, () => settled || settle('too_large'));
      else settle('too_large');
      return abort;
    }
    // No room: answered at once (a stalled upload must not wait for its own end to hear it), the rest not read.
    if (!budget.take(declared)) {
      settle('busy');
      return abort;
    }
    held = declared;
    // One buffer of the declared size: no chunk list, no final concatenation. A body sent to a worker thread gets
    // its own memory (it is cloned with its whole backing store); others take small sizes from the shared pool,
    // which spares a backing store per request (about 1 µs and GC work on the ingest path).
    const body = crossesThreads ? Buffer.allocUnsafeSlow(declared) : Buffer.allocUnsafe(declared);
    let at = 0;
    res.onData((chunk, isLast) => {
      if (settled) return;
      const n = Math.min(chunk.byteLength, declared - at);
      if (n > 0) body.set(new Uint8Array(chunk, 0, n), at);
      at += n;
      if (isLast) settle(at === declared ? body : body.subarray(0, at));
    });
    return abort;
  }

  const chunks: Buffer[] = [];
  res.onData((chunk, isLast) => {
    if (settled) return;
    const n = chunk.byteLength;
    if (held + n > limit) {
      const read = held + n;
      budget.give(held);
      held = 0;
      if (isLast || read > DRAIN_BYTES) return settle('too_large');
      return dropRest(res, read, () => settled || settle('too_large'));
    }
    if (n > 0 && !budget.take(n)) return settle('busy');
    held += n;
    if (n > 0) chunks.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
    if (isLast) settle(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, held));
  });
  return abort;
}

/** Reads and drops the rest of a body (`read` bytes of it seen), then calls `then`: at its end, or past DRAIN_BYTES. */
function dropRest(res: HttpResponse, read: number, then: () => void): void {
  let dropped = read;
  let called = false;
  res.onData((chunk, isLast) => {
    if (called) return;
    dropped += chunk.byteLength;
    if (isLast || dropped > DRAIN_BYTES) {
      called = true;
      then();
    }
  });
}
