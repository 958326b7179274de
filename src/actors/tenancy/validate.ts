/** Input rules of keys and masters beyond what the JSON Schemas express. */
import { isIP } from 'node:net';
import { badRequest } from '../../errors.js';

/** One IP or CIDR range in canonical text; null when invalid. */
function ipOrCidr(entry: string): string | null {
  const [addr, prefix, ...rest] = entry.split('/');
  if (rest.length > 0 || !addr) return null;
  const family = isIP(addr);
  if (family === 0) return null;
  if (prefix === undefined) return addr;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128)) return null;
  return `${addr}/${Number(prefix)}`;
}

/** A comma-separated list of IPs or CIDR ranges, normalized (trimmed, no empties); 400 naming the field otherwise. */
export function ipList(field: string, value: string): string {
  const entries = value.split(',').map((e) => e.trim()).filter(Boolean);
  const out: string[] = [];
  for (const e of entries) {
    const ok = ipOrCidr(e);
    if (!ok) throw badRequest('invalid IP or CIDR range', { [field]: `not an IP or CIDR range: ${e}` });
    out.push(ok);
  }
  return out.join(',');
}

/** A comma-separated list of names, normalized. */
export const nameList = (value: string): string =>
  value.split(',').map((e) => e.trim()).filter(Boolean).join(',');

/** An expiry in the future, truncated to whole seconds (the store's unit); null stays null (never). */
export function expiry(value: string | null | undefined, nowMs: number): string | null {
  if (value === null || value === undefined) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw badRequest('invalid expires_at', { expires_at: 'must be an RFC 3339 time' });
  if (ms <= nowMs) throw badRequest('expires_at is in the past', { expires_at: 'must be in the future' });
  return new Date(Math.floor(ms / 1000) * 1000).toISOString();
}

/**
 * Namespace settings: the default must be one of the allowed ones when a list
 * is given, and a key may only narrow what its master allows.
 */
export function namespaces(defaultNs: string, allowed: string[], within?: string[]): { default_namespace: string; allowed_namespaces: string[] } {
  const unique = [...new Set(allowed)];
  if (defaultNs && unique.length > 0 && !unique.includes(defaultNs)) {
    throw badRequest('default_namespace must be one of allowed_namespaces', { default_namespace: 'not in allowed_namespaces' });
  }
  if (within && within.length > 0) {
    const outside = unique.filter((n) => !within.includes(n));
    if (outside.length > 0) {
      throw badRequest('namespaces outside what the master allows', { allowed_namespaces: `not allowed for the master: ${outside.join(', ')}` });
    }
    if (defaultNs && !within.includes(defaultNs)) {
      throw badRequest('namespace outside what the master allows', { default_namespace: 'not allowed for the master' });
    }
  }
  return { default_namespace: defaultNs, allowed_namespaces: unique };
}
