import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const trail = async (qs = '') => {
  const r = await svc.request('GET', `/admin/audit${qs ? `?${qs}` : ''}`, admin);
  t.equal(r.status, 200);
  return r.json;
};

let masterId = 0;
let masterKey = '';

t.test('an admin create: who, what, the new id, and the secret it returned masked', async (t) => {
  const created = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'acme', group: 'default' }, headers: { 'x-request-id': 'audit-create-1' } });
  t.equal(created.status, 201);
  masterId = created.json.id;
  masterKey = created.json.master_key;
  t.match(masterKey, /^mk-/);
  const { items } = await trail(`resource=masters&resource_id=${masterId}`);
  t.equal(items.length, 1);
  t.match(items[0], { actor_role: 'admin', actor_id: '', resource: 'masters', resource_id: String(masterId), action: 'create', method: 'POST', route: '/admin/masters', status: 201, request_id: 'audit-create-1', before: null });
  t.equal(items[0].after.name, 'acme');
  t.equal(items[0].after.master_key, '[masked]');
  t.match(items[0].time, /Z$/);
});

t.test('an update and a state change carry before, after and the diff', async (t) => {
  t.equal((await svc.request('PUT', `/admin/masters/${masterId}`, { ...admin, body: { name: 'acme-renamed' } })).status, 200);
  t.equal((await svc.request('POST', `/admin/masters/${masterId}/freeze`, admin)).status, 200);
  const { items, total } = await trail(`resource=masters&resource_id=${masterId}`);
  t.equal(total, 3);
  const [freeze, update] = items;
  t.equal(update.action, 'update');
  t.same(update.diff.name, { from: 'acme', to: 'acme-renamed' });
  t.equal(update.before.name, 'acme');
  t.equal(freeze.action, 'freeze');
  t.same(freeze.diff.status, { from: 'active', to: 'suspended' });
  t.equal((await svc.request('POST', `/admin/masters/${masterId}/unfreeze`, admin)).status, 200);
});

t.test('flag changes are audited as updates of the features singleton', async (t) => {
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 14 } });
  const { items } = await trail('resource=features');
  t.equal(items[0].action, 'update');
  t.same(items[0].diff.log_retention_days, { from: 30, to: 14 });
});

t.test('tenant writes name the master; child key secrets never reach the trail', async (t) => {
  const issued = await svc.request('POST', '/v1/tokens', { token: masterKey, body: { group: 'default', scopes: 'tests' } });
  t.equal(issued.status, 201, issued.text);
  const { items } = await trail(`actor=master:${masterId}`);
  t.equal(items.length, 1);
  t.match(items[0], { actor_role: 'master', actor_id: String(masterId), resource: 'tokens', action: 'create', resource_id: String(issued.json.id) });
  t.equal(items[0].after.key_secret, '[masked]');
  const raw = await svc.service.context.clickhouse.query<{ n: number }>(
    'SELECT count() AS n FROM audit_log WHERE position(after, {s:String}) > 0 OR position(before, {s:String}) > 0',
    { s: issued.json.key_secret },
  );
  t.equal(Number(raw[0]!.n), 0, 'the secret is stored nowhere in the trail');
});

t.test('upstream secrets are masked', async (t) => {
  const g = await svc.request('POST', '/admin/provider-groups', { ...admin, body: { name: 'oa', type: 'openai', base_url: 'https://api.example.com', models: ['gpt-4o'] } });
  t.equal(g.status, 201, g.text);
  const k = await svc.request('POST', '/admin/api-keys', { ...admin, body: { group_id: g.json.id, api_key: 'sk-upstream-very-secret-1234', weight: 1 } });
  t.equal(k.status, 201, k.text);
  const { items } = await trail('resource=api-keys');
  t.equal(items[0].after.api_key, '[masked]');
  const raw = await svc.service.context.clickhouse.query<{ n: number }>("SELECT count() AS n FROM audit_log WHERE position(after, 'very-secret') > 0");
  t.equal(Number(raw[0]!.n), 0);
});

t.test('reads and refused writes are not audited', async (t) => {
  const before = (await trail()).total;
  await svc.request('GET', '/admin/masters', admin);
  await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'no group' } });
  await svc.request('PUT', '/admin/features', { token: 'wrong', body: { log_retention_days: 1 } });
  t.equal((await trail()).total, before);
});

t.test('filters, paging and bad parameters', async (t) => {
  const all = await trail('limit=2&offset=1');
  t.equal(all.items.length, 2);
  t.equal(all.limit, 2);
  t.equal(all.offset, 1);
  t.ok(all.total >= 6);
  t.equal((await trail('actor=admin')).items.every((i: { actor_role: string }) => i.actor_role === 'admin'), true);
  const now = Math.floor(Date.now() / 1000);
  t.equal((await trail(`since=${now + 3600}`)).total, 0);
  t.ok((await trail(`since=${now - 3600}&until=${now + 3600}`)).total >= 6);
  for (const bad of ['actor=root', 'since=x', 'limit=0', `since=${now}&until=${now - 1}`]) {
    t.equal((await svc.request('GET', `/admin/audit?${bad}`, admin)).status, 400, bad);
  }
  t.equal((await svc.request('GET', '/admin/audit')).status, 401);
});
