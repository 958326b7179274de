/** The global configuration version and the data-plane nodes' acknowledgements (sql/postgres/005). */
import { sql, type CommonQueryMethods } from 'slonik';

export async function configVersion(db: CommonQueryMethods): Promise<{ version: number; updated_at: string }> {
  return (await db.one(sql.unsafe`SELECT version, updated_at FROM config_state WHERE id = 1`)) as { version: number; updated_at: string };
}

export async function recordAck(db: CommonQueryMethods, nodeId: string, version: number, at: number): Promise<void> {
  const seen = new Date(at).toISOString();
  await db.query(sql.unsafe`
    INSERT INTO dp_nodes (node_id, version, first_seen_at, last_seen_at) VALUES (${nodeId}, ${version}, ${seen}, ${seen})
    ON CONFLICT (node_id) DO UPDATE SET version = EXCLUDED.version, last_seen_at = EXCLUDED.last_seen_at`);
}

export interface DpNode {
  node_id: string;
  version: number;
  first_seen_at: string;
  last_seen_at: string;
}

export async function listNodes(db: CommonQueryMethods): Promise<DpNode[]> {
  return (await db.any(sql.unsafe`SELECT node_id, version, first_seen_at, last_seen_at FROM dp_nodes ORDER BY node_id`)) as DpNode[];
}
