/** Upstream secrets: shown whole only on the single read, masked everywhere else. */
import type { GroupRow, KeyRow } from '../../storage/postgres/upstreams.js';
import { maskHeaderValues } from '../secret-names.js';

/** `****` followed by the last 4 characters; secrets of 4 characters or fewer are hidden entirely. */
export function mask(secret: string | null): string | null {
  if (secret === null) return null;
  if (secret === '') return '';
  return secret.length <= 4 ? '****' : `****${secret.slice(-4)}`;
}

const maskText = (secret: string): string => mask(secret) ?? '';

export function maskKey(k: KeyRow): KeyRow {
  return { ...k, api_key: mask(k.api_key) ?? '', access_token: mask(k.access_token), refresh_token: mask(k.refresh_token) };
}

/** A provider group with the values of its credential headers (X-Api-Key, Authorization, ...) masked. */
export function maskGroup(g: GroupRow): GroupRow {
  const headers = maskHeaderValues(g.static_headers, maskText);
  return headers === g.static_headers ? g : { ...g, static_headers: headers };
}

/**
 * A value sent back exactly as it was shown masked means "unchanged": the
 * stored secret is kept (an edit form posts back what it was given).
 */
export function unmasked(given: string, stored: string | null | undefined): string {
  return stored && given === mask(stored) ? stored : given;
}

/** Incoming static headers with masked credential values replaced by the stored ones. */
export function keepMaskedHeaders(given: Record<string, string>, stored: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in given) out[name] = unmasked(given[name]!, stored[name]);
  return out;
}
