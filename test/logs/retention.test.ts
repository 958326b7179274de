import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';

const day = 86_400_000;
const svc = await startTestService();
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const ch = svc.service.context.clickhouse;
const retention = () =>
  svc.service.system.ask<{ partitions_dropped: number; deleted_by_age: number; deleted_by_count: number; bodies_cleared: number; projections_restored: number }>('logs', 'retention');
const createdAts = async () =>
  (await svc.request('GET', '/admin/logs?limit=200', admin)).json.items.map((i: { createdAt: string }) => i.createdAt).sort();

// "Now" is moved to a fixed instant on every thread; records carry times relative to it.
const now = Date.UTC(2026, 2, 15, 12, 0, 0);
svc.service.clock.set(now);
const at = (daysAgo: number, hours = 0) => new Date(now - daysAgo * day + hours * 3_600_000).toISOString();

t.test('retention drops whole old days, trims the boundary day, and the rollups follow', async (t) => {
  const rows = [45, 40, 31, 30.5, 29, 2, 0].map((d, i) => ({ key_id: i + 1, master_id: 1, status_code: 200, latency_ms: 10, createdAt: at(d) }));
  t.equal((await svc.request('POST', '/logs', { body: rows })).status, 202);
  await svc.service.system.ask('logs', 'flush');
  t.equal((await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 30 } })).status, 200);
  const r = await retention();
  t.equal(r.partitions_dropped, 3, 'the days 45, 40 and 31 days back went as whole partitions');
  t.equal(r.deleted_by_age, 1, 'the row 30.5 days back, in the boundary day, was deleted');
  t.equal(r.projections_restored, 0, 'the boundary day is not rewritten for the logs list: the next day drops it');
  t.same(await createdAts(), [at(29), at(2), at(0)]);
  for (const table of ['logs_minute', 'logs_hourly', 'logs_daily', ...[1, 60, 3600, 86_400].flatMap((g) => [`logs_model_grains WHERE grain = ${g}`, `logs_total_grains WHERE grain = ${g}`])]) {
    const [rollup] = await ch.query<{ n: number }>(`SELECT sum(requests) AS n FROM ${table}`);
    t.equal(Number(rollup!.n), 3, `${table} follows`);
  }
  // The day rollups have month partitions: January (45 days back) went whole, February holds days still kept.
  const months = await ch.query<{ partition: string }>(
    "SELECT DISTINCT partition FROM system.parts WHERE database = currentDatabase() AND active AND table = 'logs_daily' ORDER BY partition",
  );
  t.same(months.map((m) => m.partition), ['202602', '202603']);
});

t.test('bodies are kept for log_body_retention_days; the rest of the record stays', async (t) => {
  const rows = [5, 1].map((d) => ({ key_id: 77, master_id: 1, status_code: 200, request_body: `q${d}`, response_body: `a${d}`, createdAt: at(d) }));
  await svc.request('POST', '/logs', { body: rows });
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_body_retention_days: 3 } });
  const r = await retention();
  t.equal(r.bodies_cleared, 1);
  const items = (await svc.request('GET', '/admin/logs?key_id=77', admin)).json.items;
  t.same(items.map((i: { request_body: string; response_body: string }) => [i.request_body, i.response_body]), [['q1', 'a1'], ['', '']]);
  t.equal(items.length, 2, 'the old record itself is kept');
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_body_retention_days: 0 } });
  await svc.request('DELETE', `/admin/logs?before=${encodeURIComponent(at(-1))}&key_id=77`, admin);
});

t.test('log_max_records keeps the newest rows', async (t) => {
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_max_records: 2 } });
  const r = await retention();
  t.equal(r.deleted_by_count, 1);
  t.same(await createdAts(), [at(2), at(0)], 'the oldest went first');
});

t.test('time moves on: what was recent ages out', async (t) => {
  svc.service.clock.set(now + 29 * day);
  await retention();
  t.same(await createdAts(), [at(0)], 'the record 2 days old is now 31 days old');
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 0, log_max_records: 0 } });
  svc.service.clock.set(now + 400 * day);
  const r = await retention();
  t.ok(r.partitions_dropped >= 1, 'the default of 30 days applies again once the overrides are cleared');
  t.same(await createdAts(), []);
});
