/**
 * Audit records never hold a secret: values under secret-bearing field names
 * are masked wherever they sit in the document, and the diff is computed on
 * the masked documents.
 */
const secretField = /^(master_key|key_secret|api_key|access_token|refresh_token|secret|password)$/i;

export const masked = '[masked]';

export function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = secretField.test(k) && v !== null && v !== '' ? masked : maskSecrets(v);
  }
  return out;
}

/** Top-level fields whose value changed: {field: {from, to}}. */
export function diffOf(before: unknown, after: unknown): Record<string, { from: unknown; to: unknown }> {
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(before) || !isObj(after)) return {};
  const diff: Record<string, { from: unknown; to: unknown }> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) diff[k] = { from: before[k] ?? null, to: after[k] ?? null };
  }
  return diff;
}
