import t from 'tap';
import { adminToken, internalToken, startTestService } from '../helpers/harness.js';

const svc = await startTestService();
t.teardown(() => svc.stop());

const scrape = async (): Promise<string> => {
  const r = await svc.request('GET', '/metrics', { headers: { 'x-internal-token': internalToken } });
  t.equal(r.status, 200);
  return r.text;
};
/** The value of one series, e.g. value(text, 'logs_stored_total') or with labels. */
const value = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : undefined;
};

t.test('/metrics needs the internal or the admin token', async (t) => {
  t.equal((await svc.request('GET', '/metrics')).status, 401);
  t.equal((await svc.request('GET', '/metrics', { headers: { 'x-internal-token': 'wrong' } })).status, 401);
  const byAdmin = await svc.request('GET', '/metrics', { token: adminToken });
  t.equal(byAdmin.status, 200);
  t.match(byAdmin.headers.get('content-type'), /^text\/plain/);
});

t.test('metrics move as expected under known traffic', async (t) => {
  const before = await scrape();
  const accepted0 = value(before, 'logs_accepted_total') ?? 0;
  const stored0 = value(before, 'logs_stored_total') ?? 0;
  const invalid0 = value(before, 'logs_rejected_total{reason="invalid"}') ?? 0;
  const rec = { key_id: 1, master_id: 1, status_code: 200 };
  t.equal((await svc.request('POST', '/logs', { body: rec })).status, 202);
  t.equal((await svc.request('POST', '/logs', { body: [rec, rec] })).status, 202);
  t.equal((await svc.request('POST', '/logs', { body: [rec, { key_id: 'x' }, { nope: 1 }] })).status, 400);
  await svc.service.system.ask('logs', 'flush');
  const after = await scrape();
  t.equal(value(after, 'logs_accepted_total')! - accepted0, 3);
  t.equal(value(after, 'logs_stored_total')! - stored0, 3);
  t.equal(value(after, 'logs_rejected_total{reason="invalid"}')! - invalid0, 2, 'the two invalid records of the refused batch');
  t.equal(value(after, 'logs_rejected_total{reason="backpressure"}'), 0);
  t.equal(value(after, 'http_requests_total{route="/logs",method="POST",status="202"}'), 2);
  t.equal(value(after, 'http_requests_total{route="/logs",method="POST",status="400"}'), 1);
  t.equal(value(after, 'http_request_duration_seconds_count{route="/logs",method="POST"}'), 3);
  t.ok(value(after, 'log_writer_batch_records_count')! >= 1, 'batch sizes observed');
  t.ok(value(after, 'log_writer_batch_records_sum')! >= 3);
  t.ok(value(after, 'clickhouse_insert_seconds_count')! >= 1, 'insert latency observed');
  t.equal(value(after, 'log_spool_bytes'), 0);
  t.equal(value(after, 'log_pending_records'), 0);
  for (const up of ['store_up', 'database_up', 'clickhouse_up']) t.equal(value(after, up), 1, up);
  t.equal(value(after, 'outbox_depth'), 0);
  t.ok(after.includes('actor_mailbox_depth{actor="logs"}'), 'mailbox depth per actor');
  t.ok(after.includes('actor_mailbox_depth{actor="workers"}'));
  t.ok(after.includes('nodejs_eventloop_lag_seconds'), 'event-loop lag');
  t.ok(after.includes('outbox_lag_seconds'));
  for (const series of ['identity_cache_hits_total', 'identity_cache_misses_total', 'identity_cache_entries']) {
    t.ok(value(after, series)! >= 0, series);
  }
  // Announcements of other runs on a shared Redis count too: only the series are checked here.
  for (const scope of ['all', 'keys']) t.ok(value(after, `identity_cache_invalidations_total{scope="${scope}"}`)! >= 0, scope);
});

t.test('a flag change flows through the outbox and is counted', async (t) => {
  const before = value(await scrape(), 'outbox_delivered_total') ?? 0;
  await svc.request('PUT', '/admin/features', { token: adminToken, body: { log_retention_days: 12 } });
  const after = value(await scrape(), 'outbox_delivered_total')!;
  t.equal(after - before, 1);
});
