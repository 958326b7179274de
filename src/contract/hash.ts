/**
 * How secrets are kept: as SHA-256 digests. The HTTP layer digests presented
 * tokens, the tenancy domain digests the tokens it issues, and both must agree.
 */
import { hash } from 'node:crypto';

/** SHA-256 hex digest: how tokens are stored and looked up (one-shot hashing, no Hash object). */
export const sha256Hex = (s: string): string => hash('sha256', s, 'hex');
