/** The global configuration version and the data-plane nodes' acknowledgements (sql/postgres/005). */
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { int, noRows, text, time } from './row-types.js';

export async function configVersion(db: CommonQueryMethods): Promise<{ version: number; updated_at: string }> {
  return db.one(sql.type(z.object({ version: int, updated_at: time }))`SELECT version, updated_at FROM config_state WHERE id = 1`);
}

export async function recordAck(db: CommonQueryMethods, nodeId: string, version: number, at: number): Promise<void> {
  const seen = new Date(at).toISOString();
  await db.query(noRows`
    INSERT INTO dp_nodes (node_id, version, first_seen_at, last_seen_at) VALUES (${nodeId}, ${version}, ${seen}, ${seen})
    ON CONFLICT (node_id) DO UPDATE SET version = EXCLUDED.version, last_seen_at = EXCLUDED.last_seen_at`);
}

const dpNode = z.object({ node_id: text, version: int, first_seen_at: time, last_seen_at: time });
export type DpNode = z.infer<typeof dpNode>;

export async function listNodes(db: CommonQueryMethods): Promise<DpNode[]> {
  return [...(await db.any(sql.type(dpNode)`SELECT node_id, version, first_seen_at, last_seen_at FROM dp_nodes ORDER BY node_id`))];
}
