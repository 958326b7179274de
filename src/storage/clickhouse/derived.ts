/**
 * What is computed from a read's rows, kept beside them. The statistics cache
 * (src/actors/analytics/read-cache.ts) hands out the same rows array for every
 * hit, so an answer derived from that array (parsed decimals, a chart's
 * series, bucket labels) is computed once per cached read instead of once per
 * request: a week of hours × 40 models is 6,720 cells to parse, ~0.2 ms a
 * request, more than the rest of a cached answer. Rows that did not come from
 * the cache are a new array each time; their derivations go with them.
 *
 * A derived value is shared by every request the cached rows serve: treat it
 * as read-only. `key` names everything besides the rows the value depends on.
 */
const derivations = new WeakMap<object, Map<string, unknown>>();

export function derived<T>(from: object, key: string, compute: () => T): T {
  let values = derivations.get(from);
  if (!values) derivations.set(from, (values = new Map()));
  if (values.has(key)) return values.get(key) as T;
  const value = compute();
  values.set(key, value);
  return value;
}
