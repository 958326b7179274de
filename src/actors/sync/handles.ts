/**
 * The configuration-sync messages that routes reach: a data-plane node
 * acknowledging the version it applied. Plain data: the HTTP layer imports
 * this module without the actor's code or its store.
 */
import { handles } from '../../contract/handle.js';

export const configSync = handles('config-sync', {
  ack: {
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['node_id', 'version'],
      properties: {
        node_id: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
        version: { type: 'integer', minimum: 0 },
      },
    },
  },
});
