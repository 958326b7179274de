/** GET /admin/logs/freshness and /v1/logs/freshness: the newest stored record, so a chart can say how fresh it is. */
import type { Principal } from '../../contract/principal.js';
import type { ClickHouseReader } from '../../storage/clickhouse/client.js';
import { newestRecordMs } from '../../storage/clickhouse/freshness.js';

export async function freshness(ch: ClickHouseReader, principal: Principal, now: number) {
  const newest = await newestRecordMs(ch, principal.type === 'master' ? principal.id : undefined);
  return {
    newest_record_at: newest === null ? null : new Date(newest).toISOString(),
    checked_at: new Date(now).toISOString(),
    age_ms: newest === null ? null : Math.max(0, now - newest),
  };
}
