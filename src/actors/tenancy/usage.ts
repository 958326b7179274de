/**
 * Usage of child keys: counters flushed by the data plane and the periodic
 * quota resets. Both mirror quota_used into the token metadata through the
 * outbox so the data plane enforces quota_limit against the same number.
 */
import { defineActor, implement } from '../runtime/actor.js';
import { parseDeclared } from '../../contract/body.js';
import { tenancyUsage } from './handles.js';
import { applyKeyUsage, claimFlush, recordFlush, resetQuotas, type KeyUsage } from '../../storage/postgres/tenancy.js';
import { applyUpstreamUsage } from '../../storage/postgres/upstream-usage.js';
import { quotaResetOp, quotaUsedOp } from '../../storage/redis/writers/tenancy.js';
import { commitChange } from '../outbox/change.js';
import { periodStart } from './quota.js';

/** How long a flush id is remembered. */
const FLUSH_ID_TTL_MS = 10 * 60_000;

/** Sums repeated token hashes of one batch, keeping the latest access. */
function merge(items: KeyUsage[]): KeyUsage[] {
  const byHash = new Map<string, KeyUsage>();
  for (const i of items) {
    const m = byHash.get(i.token_hash);
    if (!m) byHash.set(i.token_hash, { ...i });
    else {
      m.requests += i.requests;
      m.tokens += i.tokens;
      m.last_accessed_at = Math.max(m.last_accessed_at, i.last_accessed_at);
    }
  }
  return [...byHash.values()];
}

export default defineActor({
  name: 'tenancy-usage',
  placement: 'worker',
  handlers: {
    ...implement(tenancyUsage, {
      /** The body arrives as bytes (the handle's parser): parsed and validated here, off the HTTP thread. */
      flush: async (input, ctx) => {
        const body = parseDeclared(tenancyUsage.flush, input.body);
        const now = ctx.now();
        return commitChange(ctx, async (tx, out) => {
          if (body.flush_id) {
            const seen = await claimFlush(tx, body.flush_id, new Date(now).toISOString(), new Date(now - FLUSH_ID_TTL_MS).toISOString());
            if (seen) return seen;
          }
          const items = body.keys ?? [];
          const known = new Set<string>();
          const updated = await applyKeyUsage(tx, merge(items));
          for (const u of updated) known.add(u.token_hash);
          const answer = {
            accepted_keys: items.filter((i) => known.has(i.token_hash)).length,
            accepted_upstream_keys: body.upstream_keys?.length ? await applyUpstreamUsage(tx, body.upstream_keys, now) : 0,
          };
          if (body.flush_id) await recordFlush(tx, body.flush_id, answer);
          // Announced with the ids of the keys written, so caches drop only those.
          const quotaOps = updated.map((u) => quotaUsedOp(u.token_hash, u.quota_used));
          out.change('quota', quotaOps, updated.map((u) => u.id), { idsPerOp: true });
          return answer;
        });
      },
    }),

    /** Zeroes quotas whose period has ended (asked by the quota-reset job). */
    resetQuotas: async (_: unknown, ctx) => {
      const now = ctx.now();
      const reset = await commitChange(ctx, async (tx, out) => {
        let count = 0;
        for (const type of ['daily', 'weekly', 'monthly']) {
          const start = periodStart(type, now)!;
          const rows = await resetQuotas(tx, type, start);
          out.change('quota', rows.map((r) => quotaResetOp(r.token_hash, start)), rows.map((r) => r.id), { idsPerOp: true });
          count += rows.length;
        }
        return count;
      });
      return { reset };
    },
  },
});
