/**
 * Compares a reader's decision with a case's expected one: same outcome, same
 * reason, and when allowed the same candidates (provider group, binding
 * weight, upstream model) with the same keys and key weights.
 */
import type { Decision } from './reader.js';
import type { ConcreteCase } from './kit.js';

/** null when they agree, else what differs. */
export function mismatch(got: Decision, expected: ConcreteCase['expected']): string | null {
  if (got.decision !== expected.decision || got.reason !== expected.reason) {
    return `expected ${expected.decision}/${expected.reason}, got ${got.decision}/${got.reason}`;
  }
  if (!expected.route) return null;
  const have = (got.candidates ?? [])
    .map((c) => ({ group_id: c.group_id, weight: c.weight, upstream_model: c.upstream_model, keys: c.keys.map((k) => [k.id, k.weight]) }))
    .sort((a, b) => a.group_id - b.group_id);
  const want = expected.route.map((r) => ({ group_id: r.group_id, weight: r.weight, upstream_model: r.upstream_model, keys: r.keys.map((k) => [k.id, k.weight]) }));
  return JSON.stringify(have) === JSON.stringify(want) ? null : `expected route ${JSON.stringify(want)}, got ${JSON.stringify(have)}`;
}
