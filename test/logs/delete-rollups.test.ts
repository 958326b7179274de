/**
 * After a delete by condition (one master's records, one key's, records
 * before a time) and after retention drops whole days, every rollup agrees
 * with the raw table group by group (src/storage/clickhouse/rollup-check.ts),
 * and the list's totals, read from the rollups, equal raw counts.
 */
import t from 'tap';
import { ROLLUPS, rollupName } from '../../src/storage/clickhouse/rollups.js';
import { adminToken, startTestService } from '../helpers/harness.js';
import { checkSource, rollupMismatches } from '../../src/storage/clickhouse/rollup-check.js';

const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '50' } });
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const ch = svc.service.context.clickhouse;
const now = Date.UTC(2026, 2, 15, 12, 0, 0);
svc.service.clock.set(now);
const rawCount = async (where = '1') => Number((await ch.query<{ n: number }>(`SELECT count() AS n FROM logs WHERE ${where}`))[0]!.n);
const listTotal = async (q = '') => (await svc.request('GET', `/admin/logs?limit=1${q}`, admin)).json.total as number;

t.before(async () => {
  const rows = [];
  // 3 masters, 2 keys each, 3 models, over 40 days, several records per minute, hour and day.
  for (let i = 0; i < 1200; i++) {
    const master = 1 + (i % 3);
    rows.push({
      master_id: master,
      key_id: master * 10 + (i % 2),
      model: `m${i % 3}`,
      group: `g${i % 2}`,
      status_code: i % 9 === 0 ? 500 : 200,
      latency_ms: 5 + (i % 50),
      tokens_in: i,
      tokens_out: 2 * i,
      createdAt: new Date(now - Math.floor((i * 40 * 86_400_000) / 1200) - (i % 7) * 1000).toISOString(),
    });
  }
  t.equal((await svc.request('POST', '/logs', { body: rows })).status, 202);
  await svc.service.system.ask('logs', 'flush');
  t.same(await rollupMismatches(ch), [], 'the rollups agree before any deletion');
});

t.test("deleting one master's records: every rollup agrees with the raw table", async (t) => {
  const before = await rawCount('master_id = 2');
  t.ok(before > 0);
  const del = await svc.request('DELETE', `/admin/logs?before=${encodeURIComponent(new Date(now + 86_400_000).toISOString())}&master_id=2`, admin);
  t.equal(del.status, 200);
  t.equal(del.json.deleted, before);
  t.equal(await rawCount('master_id = 2'), 0);
  t.same(await rollupMismatches(ch), [], 'no rollup group differs');
  t.same(await rollupMismatches(ch, { viaSources: true }), [], 'none differs from its source either');
  t.equal(await listTotal('&master_id=2'), 0);
  t.equal(await listTotal(), await rawCount());
  t.equal(await listTotal('&model=m1'), await rawCount("model = 'm1'"));
});

t.test("deleting one key's records before a time inside a day: the rollups still agree", async (t) => {
  const cut = new Date(now - 10 * 86_400_000 + 3_723_000); // not on an hour or a day
  const del = await svc.request('DELETE', `/admin/logs?before=${encodeURIComponent(cut.toISOString())}&key_id=31`, admin);
  t.equal(del.status, 200);
  t.ok(del.json.deleted > 0);
  t.same(await rollupMismatches(ch), []);
  t.equal(await listTotal('&key_id=31'), await rawCount('key_id = 31'));
});

t.test('retention dropping whole days and trimming the boundary day: the rollups still agree', async (t) => {
  t.equal((await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 20 } })).status, 200);
  const r = await svc.service.system.ask<{ partitions_dropped: number }>('logs', 'retention');
  t.ok(r.partitions_dropped > 0);
  t.same(await rollupMismatches(ch), []);
  t.equal(await listTotal(), await rawCount());
  const since = Math.floor(now / 1000) - 5 * 86_400 + 17;
  t.equal(await listTotal(`&since=${since}&master_id=1`), await rawCount(`master_id = 1 AND created_at >= toDateTime64(${since}, 3, 'UTC')`));
});

t.test('the check itself sees a rollup out of step', async (t) => {
  t.ok((await rawCount('master_id = 3')) > 0);
  await ch.command('DELETE FROM logs WHERE master_id = 3'); // raw rows gone, rollups untouched
  const bad = await rollupMismatches(ch);
  t.same(bad.map((m) => m.table).sort(), ROLLUPS.map(rollupName).sort(), 'every rollup is seen out of step');
  t.ok(bad.every((m) => m.groups > 0));
  // Through the sources, the ones computed from raw logs differ; the rest agree with them, as they would after a repair.
  const viaSources = await rollupMismatches(ch, { viaSources: true });
  t.same(viaSources.map((m) => m.table).sort(), ROLLUPS.filter((r) => checkSource(r) === null).map(rollupName).sort(), 'the raw-sourced rollups differ');
});

t.test('through the sources, a rollup out of step with a correct source is seen', async (t) => {
  await ch.command('DELETE FROM logs_hourly WHERE master_id = 1 AND model = {m:String}', { m: 'm0' }); // only logs_hourly loses rows
  const viaSources = await rollupMismatches(ch, { viaSources: true });
  t.ok(viaSources.some((m) => m.table === 'logs_hourly' && m.groups > 0), 'logs_hourly differs from logs_hourly_key');
});
