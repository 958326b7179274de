/**
 * A full snapshot: every key the data plane reads, written from the database
 * through the outbox (docs/store-layout.md, "Full snapshot and refill"). Asked
 * by POST /admin/sync/snapshot and by the store watch when the store lost its
 * data. Runs on the main thread because it reads which routing keys the store
 * holds (to delete stale ones).
 *
 * Order of the entries, which the relay delivers in id order:
 *   1. `cp:store:snapshot` (the snapshot has started);
 *   2. every master and key; 3. the flags; 4. the routing tables;
 *   5. `meta:layout_version`, last, with a `snapshot` announcement.
 * A data plane that reads the layout version therefore reads a complete store,
 * and a store holding the layout version without (1) was emptied mid-way.
 */
import type { ActorDefinition } from '../runtime/actor.js';
import type { MainContext } from '../main-context.js';
import { lockSnapshotStart, pendingSetOf } from '../../storage/postgres/outbox.js';
import { configChange, keys, routingKeys } from '../../storage/redis/layout.js';
import type { StoreOp } from '../../storage/redis/store.js';
import { layoutVersionOp, snapshotStartedOp } from '../../storage/redis/writers/markers.js';
import { commitChange } from '../outbox/change.js';

export interface SnapshotResult {
  status: 'ok' | 'in_progress';
  reason: string;
  masters?: number;
  keys?: number;
  version?: number;
  groups?: number;
  binding_keys?: number;
  removed?: number;
  removed_binding_keys?: string[];
  removed_groups?: number[];
}

export function fullSync(): ActorDefinition<MainContext> {
  return {
    name: 'sync',
    placement: 'main',
    handlers: {
      /**
       * `reason`: `admin` (always writes) or why the store watch asks; the
       * watch's requests are skipped while another snapshot is still queued.
       */
      snapshot: async ({ reason = 'admin' }: { reason?: string } = {}, ctx): Promise<SnapshotResult> => {
        const started = await commitChange(
          ctx,
          async (tx, out) => {
            await lockSnapshotStart(tx);
            if (reason !== 'admin' && (await pendingSetOf(tx, [keys.snapshotStarted, keys.layoutVersion]))) return false;
            out.entry([snapshotStartedOp(ctx.now())]);
            return true;
          },
          { deliver: 'later' },
        );
        if (!started) return { status: 'in_progress', reason };
        // With the store down there is nothing to compare against: write everything, remove nothing.
        const present = (await Promise.all(routingKeys.patterns.map((p) => ctx.store.scan(p))).catch(() => [])).flat();
        const tenancy = await ctx.ask<{ masters: number; keys: number }>('masters', 'snapshot');
        const flagOps = await ctx.ask<StoreOp[]>('features', 'snapshotOps');
        await commitChange(ctx, async (_, out) => out.change('features', flagOps), { deliver: 'later' });
        const routing = await ctx.ask<Record<string, unknown>>('upstreams', 'snapshot', { present });
        await commitChange(ctx, async (_, out) => out.entry([layoutVersionOp(), configChange('snapshot', ctx.now())]));
        return { status: 'ok', reason, ...tenancy, ...routing };
      },
    },
  };
}
