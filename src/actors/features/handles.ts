/**
 * The feature-flag messages that routes reach, with the schema of a change.
 * Plain data: the HTTP layer imports this module without the actor's code or
 * its stores.
 */
import { handles } from '../../contract/handle.js';

const flagSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    dp_state_store_backend: { type: 'string', enum: ['memory', 'redis'], description: '`memory` (single node) or `redis` (cluster)' },
    dp_proto_cross_upstream: { type: 'boolean' },
    log_request_body_enabled: { type: 'boolean' },
    log_retention_days: { type: 'integer', minimum: 0, maximum: 36500, description: '0 clears the override' },
    log_max_records: { type: 'integer', minimum: 0, description: '0 clears the override' },
    log_body_retention_days: {
      type: 'integer',
      minimum: 0,
      maximum: 36500,
      description: 'days request and response bodies are kept (at most log_retention_days); 0 clears the override: same as log_retention_days',
    },
  },
} as const;

export const features = handles('features', {
  get: {},
  update: { body: flagSchema },
});
