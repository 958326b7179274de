/**
 * The request head limit. uWebSockets.js 20.30 parses a request head (request
 * line, headers, blank line) of any size when it arrives in one read, but
 * keeps at most 4096 bytes of a head that arrives in several reads, and closes
 * the connection without an answer when that is not enough. How a head is cut
 * into reads is up to the network, so a head over 4096 bytes is read or
 * dropped by chance: it works on loopback and fails on a real network, or
 * fails once in a while under load. (Later uWS versions answer 431 and read
 * UWS_HTTP_MAX_HEADERS_SIZE; this one does neither.)
 * The service makes the common case certain: a URL (path and query) over
 * MAX_TARGET_BYTES is refused with 414 whenever its head reaches the service,
 * and a URL within it leaves about 1 KB of the 4096 for the method, the version
 * and the headers. The header block itself is not measured here: reading every
 * header costs about 1 µs a request on the ingest path.
 */
import { AppError } from '../errors.js';

/** What uWS keeps of a head arriving in several reads. */
export const MAX_HEAD_BYTES = 4096;
/** The longest URL (path, `?` and query, as sent) the service accepts. */
export const MAX_TARGET_BYTES = 3072;

/** The length of the request target, from what uWS split into path and query. */
export const targetBytes = (path: string, rawQuery: string): number => path.length + (rawQuery ? rawQuery.length + 1 : 0);

export const targetTooLong = (length: number): AppError =>
  new AppError(
    'bad_request',
    `URL (path and query) longer than ${MAX_TARGET_BYTES} bytes; the whole request head must fit in ${MAX_HEAD_BYTES} bytes`,
    { limit: MAX_TARGET_BYTES, length, head_limit: MAX_HEAD_BYTES },
    undefined,
    414,
  );
