/**
 * The audit messages that routes reach, with the schema of the trail's query.
 * Plain data: the HTTP layer imports this module without the actor's code or
 * its store.
 */
import { handles } from '../../contract/handle.js';
import { unixTime } from '../../contract/value-rules.js';

/** A name or a comma-separated list of them (resources and actions are plain words). */
const names = { type: 'string', maxLength: 500, pattern: '^[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*$' } as const;

export const audit = handles('audit', {
  list: {
    query: {
      type: 'object',
      properties: {
        resource: { ...names, description: 'one resource or several, comma-separated: e.g. masters, api-keys, features, models, bindings' },
        action: { ...names, description: 'one action or several, comma-separated: create, update, delete, freeze, batch.status, ...' },
        resource_id: { type: 'string', maxLength: 200 },
        actor: { type: 'string', maxLength: 100, pattern: '^(admin|master(:\\d+)?)$', description: '`admin`, `master` or `master:<id>`' },
        since: unixTime('Unix seconds, inclusive'),
        until: unixTime('Unix seconds, exclusive'),
        limit: { type: 'integer', minimum: 1, default: 50, description: 'at most 200' },
        offset: { type: 'integer', minimum: 0, default: 0 },
      },
    },
  },
});
