/**
 * Secrets of decisions.md: `mk-` (master) or `sk-` (child key) followed by 48
 * base62 characters, stored only as their SHA-256 hex digest.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../contract/hash.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export interface NewSecret {
  secret: string;
  hash: string;
  /** Shown in listings so keys can be told apart; too short to guess anything from. */
  prefix: string;
}

/** 48 uniform base62 characters (rejection sampling: no modulo bias). */
function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(64)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export function newSecret(kind: 'mk' | 'sk'): NewSecret {
  const secret = `${kind}-${base62(48)}`;
  return { secret, hash: sha256Hex(secret), prefix: secret.slice(0, 7) };
}

export const tokenPattern = /^(mk|sk)-[0-9A-Za-z]{48}$/;
