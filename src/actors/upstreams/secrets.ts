/** Upstream secrets: shown whole only on the single read, masked everywhere else. */
import type { KeyRow } from '../../storage/postgres/upstreams.js';

/** `****` followed by the last 4 characters; secrets of 4 characters or fewer are hidden entirely. */
export function mask(secret: string | null): string | null {
  if (secret === null) return null;
  if (secret === '') return '';
  return secret.length <= 4 ? '****' : `****${secret.slice(-4)}`;
}

export function maskKey(k: KeyRow): KeyRow {
  return { ...k, api_key: mask(k.api_key) ?? '', access_token: mask(k.access_token), refresh_token: mask(k.refresh_token) };
}
