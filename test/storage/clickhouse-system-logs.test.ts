import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';

t.test('the embedded engine keeps no system log tables, so it cannot fill the disk with its own logs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-chlogs-'));
  const ch = await openClickHouse({ dataDir: dir });
  t.teardown(async () => {
    await ch.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 20; i++) await ch.query('SELECT number FROM numbers(10)');
  const logs = await ch.query<{ name: string }>("SELECT name FROM system.tables WHERE database = 'system' AND name LIKE '%\\_log'");
  t.same(logs, [], 'no query_log, part_log, trace_log… tables exist');
});

t.test('the compose ClickHouse bounds every system log table with a TTL', async (t) => {
  const xml = readFileSync(fileURLToPath(new URL('../../../deploy/clickhouse/system-log-ttl.xml', import.meta.url)), 'utf8');
  for (const table of ['query_log', 'query_thread_log', 'part_log', 'trace_log', 'metric_log', 'asynchronous_metric_log', 'text_log', 'processors_profile_log']) {
    t.match(xml, new RegExp(`<${table}><ttl>event_date \\+ INTERVAL \\d+ DAY DELETE</ttl></${table}>`), table);
  }
  const compose = readFileSync(fileURLToPath(new URL('../../../docker-compose.yml', import.meta.url)), 'utf8');
  t.match(compose, /system-log-ttl\.xml:\/etc\/clickhouse-server\/config\.d\/system-log-ttl\.xml/, 'mounted into the server config');
});
