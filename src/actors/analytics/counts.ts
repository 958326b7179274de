/** Worker actor: the Postgres side of the dashboard (entity counts). */
import { defineActor } from '../runtime/actor.js';
import { entityCounts } from '../../storage/postgres/analytics.js';

export default defineActor({
  name: 'analytics-counts',
  placement: 'worker',
  handlers: {
    counts: (_: unknown, ctx) => entityCounts(ctx.db),
  },
});
