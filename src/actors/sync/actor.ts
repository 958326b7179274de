/**
 * Configuration versions as the data plane applies them: nodes acknowledge
 * the version they run; the admin sees every node's lag behind the version
 * the control plane has delivered.
 */
import { defineActor, implement } from '../runtime/actor.js';
import { configSync } from './handles.js';
import { configVersion, listNodes, recordAck } from '../../storage/postgres/sync-state.js';

export default defineActor({
  name: 'config-sync',
  placement: 'worker',
  handlers: {
    ...implement(configSync, {
      ack: async ({ body }, ctx) => {
        await recordAck(ctx.db, body.node_id, body.version, ctx.now());
        const current = await configVersion(ctx.db);
        return { node_id: body.node_id, version: body.version, config_version: current.version, lag: Math.max(0, current.version - body.version) };
      },
    }),

    nodes: async (_: unknown, ctx) => {
      const [current, nodes] = await Promise.all([configVersion(ctx.db), listNodes(ctx.db)]);
      const now = ctx.now();
      return {
        config_version: current.version,
        config_updated_at: current.updated_at,
        // `applied_version`: the node's own version, never confused with config_version, the one delivered.
        nodes: nodes.map(({ version, ...n }) => ({
          ...n,
          applied_version: version,
          lag: Math.max(0, current.version - version),
          seconds_since_seen: Math.max(0, Math.round((now - Date.parse(n.last_seen_at)) / 1000)),
        })),
      };
    },
  },
});
