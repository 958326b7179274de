/**
 * The tenancy part of a full store snapshot (docs/store-layout.md, "Full
 * snapshot and refill"): every master's hash (a deleted master as `deleted`,
 * with its raised epoch) and every key's hash (revoked keys included), queued
 * in one transaction.
 */
import type { BaseContext } from '../runtime/actor.js';
import { allTenancy } from '../../storage/postgres/tenancy.js';
import { enqueueChange } from './commit.js';
import { masterMetaOp, tokenMetaOp } from './metadata.js';

export async function snapshotTenancy(ctx: BaseContext): Promise<{ masters: number; keys: number }> {
  return ctx.db.transaction(async (tx) => {
    const { masters, keys } = await allTenancy(tx);
    const now = ctx.now();
    // No ids: the announcements mean "anything of this kind may have changed".
    await enqueueChange(tx, 'masters', now, masters.map((m) => masterMetaOp(m, m.deleted_at !== null)));
    await enqueueChange(tx, 'keys', now, keys.map(tokenMetaOp));
    return { masters: masters.length, keys: keys.length };
  });
}
