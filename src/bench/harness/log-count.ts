/**
 * How many log records the service has stored: GET /admin/logs?limit=1, whose
 * `total` is an exact count() in ClickHouse (the service itself is not changed
 * for the bench).
 */
import { bearer, call } from './http.js';
import { benchAdminToken } from './service.js';
import { pollUntil } from './wait.js';

export async function storedLogs(base: string): Promise<number> {
  const r = await call(base, 'GET', '/admin/logs?limit=1', { headers: bearer(benchAdminToken) });
  if (r.status !== 200) throw new Error(`GET /admin/logs answered ${r.status}: ${JSON.stringify(r.json)}`);
  return (r.json as { total: number }).total;
}

/**
 * Waits until the stored count reaches `expected`, or has not moved for
 * `quietMs` (past the writer's flush interval, so nothing is still buffered).
 * `at` is when the count was first seen at its final value.
 */
export async function settleStored(
  base: string,
  expected: number,
  quietMs = 5000,
): Promise<{ stored: number; reached: boolean; at: number }> {
  let since = performance.now();
  let last = -1;
  let firstAt = since;
  const r = await pollUntil(
    () => storedLogs(base),
    (n) => {
      const now = performance.now();
      if (n !== last) {
        last = n;
        since = now;
        firstAt = now;
      }
      return n >= expected || now - since >= quietMs;
    },
    { everyMs: 50, timeoutMs: 300_000 },
  );
  return { stored: r.value, reached: r.value === expected, at: firstAt };
}

/** How many records were stored since the count was `before`, once `accepted` more are in or the count stops moving. */
export async function storedSince(base: string, before: number, accepted: number): Promise<number> {
  return (await settleStored(base, before + accepted)).stored - before;
}
