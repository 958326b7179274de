/**
 * The tenancy part of a full store snapshot (docs/store-layout.md, "Full
 * snapshot and refill"): every master's hash (a deleted master as `deleted`,
 * with its raised epoch) and every key's hash (revoked keys included), queued
 * in one transaction.
 */
import type { BaseContext } from '../runtime/actor.js';
import { allTenancy } from '../../storage/postgres/tenancy.js';
import { masterMetaOp, tokenMetaOp } from '../../storage/redis/writers/tenancy.js';
import { commitChange } from '../outbox/change.js';

export async function snapshotTenancy(ctx: BaseContext): Promise<{ masters: number; keys: number }> {
  return commitChange(
    ctx,
    async (tx, out) => {
      const { masters, keys } = await allTenancy(tx);
      // No ids: the announcements mean "anything of this kind may have changed".
      out.change('masters', masters.map((m) => masterMetaOp(m, m.deleted_at !== null)));
      out.change('keys', keys.map(tokenMetaOp));
      return { masters: masters.length, keys: keys.length };
    },
    { deliver: 'later' }, // the full snapshot delivers its parts when it ends
  );
}
