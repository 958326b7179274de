/**
 * The body of POST /internal/stats/flush. It is parsed and validated by the
 * usage actor on a worker thread, not on the HTTP thread: a flush carries up
 * to 100,000 items (16 MiB), and parsing, validating and cloning them to the
 * worker took the HTTP thread ~1.5 ms per 1,000 keys (docs/performance.md).
 * Same rules and the same 400s as any other route's body.
 */
import { parseJson, validated } from '../../contract/body.js';
import { compileBody, type JSONSchema } from '../../contract/validate.js';
import type { KeyUsage } from '../../storage/postgres/tenancy.js';
import type { UpstreamUsageItem } from '../../storage/postgres/upstream-usage.js';

const count = { type: 'integer', minimum: 0, maximum: 1e12 };

export const flushBodySchema: JSONSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    flush_id: { type: 'string', minLength: 1, maxLength: 128 },
    keys: {
      type: 'array',
      maxItems: 100_000,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          token_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          requests: count,
          tokens: count,
          last_accessed_at: { type: 'integer', minimum: 0, maximum: 253402300799, default: 0 },
        },
        required: ['token_hash', 'requests', 'tokens'],
      },
    },
    upstream_keys: {
      type: 'array',
      maxItems: 100_000,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { id: { type: 'integer', minimum: 1 }, requests: count, success: count, failure: count },
        required: ['id', 'requests', 'success', 'failure'],
      },
    },
  },
};

export interface FlushBody {
  keys?: KeyUsage[];
  upstream_keys?: UpstreamUsageItem[];
  flush_id?: string;
}

const validate = compileBody(flushBodySchema);

/** The flush in `bytes` (the raw request body), or a 400. */
export function parseFlush(bytes: Uint8Array): FlushBody {
  return validated<FlushBody>(validate, parseJson(bytes), 'body');
}
