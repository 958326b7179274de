import t from 'tap';
import { adminToken, eventually, internalToken, startTestService } from '../helpers/harness.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const internal = { headers: { 'x-internal-token': internalToken } };
const status = async () => (await svc.request('GET', '/admin/sync/status', admin)).json;
const store = svc.service.context.store;

t.test('every change that reaches the store raises the global configuration version, in the store too', async (t) => {
  const v0 = (await status()).config_version;
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 9 } });
  const v1 = (await status()).config_version;
  t.ok(v1 > v0, `raised (${v0} -> ${v1})`);
  t.equal(await store.get('meta:config:version'), String(v1), 'the data plane reads the same version');
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 10 } });
  const v2 = (await status()).config_version;
  t.ok(v2 > v1);
  t.equal(await store.get('meta:config:version'), String(v2));
});

t.test('data-plane nodes acknowledge versions; the admin sees each node, its lag and last-seen time', async (t) => {
  const current = (await status()).config_version;
  const a = await svc.request('POST', '/internal/config/ack', { ...internal, body: { node_id: 'dp-a', version: current } });
  t.equal(a.status, 200);
  t.same(a.json, { node_id: 'dp-a', version: current, config_version: current, lag: 0 });
  t.equal((await svc.request('POST', '/internal/config/ack', { ...internal, body: { node_id: 'dp-b', version: current - 1 } })).status, 200);
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 11 } });
  const s = await status();
  const next = s.config_version;
  t.ok(next > current);
  t.same(s.nodes.map((n: { node_id: string; applied_version: number; lag: number }) => [n.node_id, n.applied_version, n.lag]), [
    ['dp-a', current, next - current],
    ['dp-b', current - 1, next - current + 1],
  ]);
  t.match(s.nodes[0].last_seen_at, /Z$/);
  t.ok(s.nodes[0].seconds_since_seen >= 0);
  t.match(s.outbox, { pending: 0, dead: 0, retrying: 0, store_reachable: true });
  // One time format (RFC 3339) and one name per thing.
  t.match(s.config_updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
  t.match(s.outbox.last_delivery_at, /^\d{4}-\d\d-\d\dT.*Z$/);
  t.ok(s.outbox.delivered_since_start > 0);
  for (const gone of ['deadLettered', 'lastDeliveryAt', 'storeReachable', 'delivered', 'failures']) t.notOk(gone in s.outbox, `no ${gone}`);
  t.notOk('version' in s.nodes[0], 'a node\'s version is applied_version, not a second "version"');
  // A node catching up moves its own row only.
  await svc.request('POST', '/internal/config/ack', { ...internal, body: { node_id: 'dp-b', version: next } });
  const after = await status();
  t.same(after.nodes.map((n: { lag: number }) => n.lag), [next - current, 0]);
});

t.test('acks need the internal token and a valid body', async (t) => {
  t.equal((await svc.request('POST', '/internal/config/ack', { body: { node_id: 'x', version: 1 } })).status, 401);
  for (const body of [{}, { node_id: '', version: 1 }, { node_id: 'x', version: -1 }, { node_id: 'x', version: 'one' }, { node_id: 'has space', version: 1 }, { node_id: 'x', version: 1, extra: true }]) {
    const r = await svc.request('POST', '/internal/config/ack', { ...internal, body });
    t.equal(r.status, 400, JSON.stringify(body));
  }
  t.equal((await svc.request('GET', '/admin/sync/status')).status, 401);
});

t.test('the version survives a restart of the relay from the database', async (t) => {
  const v = (await status()).config_version;
  t.ok(await eventually(async () => (await store.get('meta:config:version')) === String(v)));
});
