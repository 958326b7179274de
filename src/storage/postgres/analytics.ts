/** What the dashboard counts in Postgres: live masters, usable child keys, upstream keys. */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { int } from './row-types.js';

const entityCountsRow = z.object({ masters: int, keys: int, upstream_keys: int });
export type EntityCounts = z.infer<typeof entityCountsRow>;

/** Deleted masters, revoked keys (and keys of deleted masters) and deleted upstream keys are not counted. */
export async function entityCounts(db: CommonQueryMethods): Promise<EntityCounts> {
  return db.one(sql.type(entityCountsRow)`
    SELECT
      (SELECT count(*) FROM masters WHERE deleted_at IS NULL)::int8 AS masters,
      (SELECT count(*) FROM child_keys k JOIN masters m ON m.id = k.master_id
        WHERE NOT k.revoked AND m.deleted_at IS NULL)::int8 AS keys,
      (SELECT count(*) FROM upstream_keys WHERE deleted_at IS NULL)::int8 AS upstream_keys`);
}
