/**
 * Audit records never hold a secret: values under secret-bearing field names
 * and credential headers in header maps are masked wherever they sit in the
 * document (the rule of src/actors/secret-names.ts), and the diff is computed
 * on the masked documents.
 */
import { isHeaderMap, isSecretField, maskHeaderValues } from '../secret-names.js';

export const masked = '[masked]';

const maskWhole = (): string => masked;

export function maskSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecrets);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (isSecretField(k) && v !== null && v !== '') out[k] = masked;
    else if (isHeaderMap(k) && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      out[k] = maskHeaderValues(v as Record<string, string>, maskWhole);
    } else out[k] = maskSecrets(v);
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
