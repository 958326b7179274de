import t from 'tap';
import { startTestService, adminToken } from '../helpers/harness.js';
import { sha256Hex } from '../../src/contract/hash.js';

t.test('masters: create, read, list, update, freeze, delete, reset-key, access; store mirrors each', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const store = svc.service.context.store;
  const admin = (method: string, path: string, body?: unknown) => svc.request(method, path, { token: adminToken, body });

  const c = await admin('POST', '/admin/masters', { name: 'Acme', group: 'default' });
  t.equal(c.status, 201);
  const m = c.json;
  t.match(m.master_key, /^mk-[0-9A-Za-z]{48}$/);
  t.match(m, { name: 'Acme', group: 'default', max_child_keys: 100, global_qps: 0, epoch: 1, status: 'active', default_namespace: '', allowed_namespaces: [], legacy: false, child_keys: 0, deletedAt: { time: null, valid: false } });
  t.equal(m.key_prefix, m.master_key.slice(0, 7));
  t.match(m.createdAt, /Z$/);
  t.same(await store.hgetall(`tenancy:master:${m.id}`), {
    id: String(m.id), name: 'Acme', group: 'default', epoch: '1', status: 'active', global_qps: '0', max_child_keys: '100',
    default_namespace: '', allowed_namespaces: '',
    budget_limit: '-1', budget_used: '0.000000000000', budget_reset_type: 'never', budget_period_start: '0',
  });

  const got = await admin('GET', `/admin/masters/${m.id}`);
  t.equal(got.status, 200);
  t.equal(got.json.master_key, undefined, 'the master key is never shown again');
  t.equal(got.json.name, 'Acme');

  // The master key authenticates (whoami) and is stored as its digest only.
  const who = await svc.request('GET', '/auth/whoami', { token: m.master_key });
  t.equal(who.status, 200);
  t.match(who.json, { type: 'master', role: 'master', id: m.id, name: 'Acme', group: 'default', epoch: 1, status: 'active' });
  const row = await svc.service.context.db.one((await import('slonik')).sql.unsafe`SELECT key_digest FROM masters WHERE id = ${m.id}`) as { key_digest: string };
  t.equal(row.key_digest, sha256Hex(m.master_key));

  // Validation.
  for (const [body, field] of [
    [{ group: 'g' }, 'name'],
    [{ name: 'x' }, 'group'],
    [{ name: 'x', group: 'g', global_qps: -1 }, 'global_qps'],
    [{ name: 'x', group: 'g', global_qps: 'fast' }, 'global_qps'],
    [{ name: 'x', group: 'g', max_child_keys: -5 }, 'max_child_keys'],
    [{ name: 'x'.repeat(101), group: 'g' }, 'name'],
    [{ name: 'x', group: 'g', extra: 1 }, 'extra'],
    [{ name: '', group: 'g' }, 'name'],
  ] as const) {
    const r = await admin('POST', '/admin/masters', body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.equal(r.json.code, 'bad_request');
    t.ok(field in r.json.data, `data names ${field}: ${JSON.stringify(r.json.data)}`);
  }

  // List with page, limit, search.
  for (const name of ['Beta', 'Gamma', 'Delta']) await admin('POST', '/admin/masters', { name, group: name === 'Gamma' ? 'vip' : 'default', global_qps: 5 });
  const all = await admin('GET', '/admin/masters');
  t.match(all.json, { total: 4, page: 1, limit: 50 });
  t.same(all.json.items.map((x: { name: string }) => x.name), ['Acme', 'Beta', 'Gamma', 'Delta']);
  const p2 = await admin('GET', '/admin/masters?page=2&limit=3');
  t.same(p2.json.items.map((x: { name: string }) => x.name), ['Delta']);
  t.match(p2.json, { total: 4, page: 2, limit: 3 });
  t.equal((await admin('GET', '/admin/masters?limit=1000')).json.limit, 200, 'limit clamped');
  t.same((await admin('GET', '/admin/masters?search=vip')).json.items.map((x: { name: string }) => x.name), ['Gamma']);
  t.same((await admin('GET', '/admin/masters?search=ELT')).json.items.map((x: { name: string }) => x.name), ['Delta']);
  t.equal((await admin('GET', '/admin/masters?search=%25')).json.total, 0, 'wildcards are literal');
  t.equal((await admin('GET', '/admin/masters?page=0')).status, 400);
  t.equal((await admin('GET', '/admin/masters?limit=abc')).status, 400);

  // Update.
  const u = await admin('PUT', `/admin/masters/${m.id}`, { name: 'Acme 2', global_qps: 10, max_child_keys: 2 });
  t.match(u.json, { name: 'Acme 2', global_qps: 10, max_child_keys: 2, group: 'default' });
  t.match(await store.hgetall(`tenancy:master:${m.id}`), { name: 'Acme 2', global_qps: '10', max_child_keys: '2' });
  t.equal((await admin('PUT', `/admin/masters/${m.id}`, {})).status, 400);
  t.equal((await admin('PUT', `/admin/masters/${m.id}`, { global_qps: -3 })).status, 400);
  t.equal((await admin('PUT', '/admin/masters/9999', { name: 'x' })).status, 404);
  t.equal((await admin('GET', '/admin/masters/9999')).status, 404);
  t.equal((await admin('GET', '/admin/masters/abc')).status, 400);

  // Freeze / unfreeze.
  const f = await admin('POST', `/admin/masters/${m.id}/freeze`);
  t.equal(f.json.status, 'suspended');
  t.equal((await store.hgetall(`tenancy:master:${m.id}`)).status, 'suspended');
  t.equal((await svc.request('GET', '/auth/whoami', { token: m.master_key })).status, 403, 'a suspended master is refused');
  t.equal((await svc.request('GET', '/v1/tokens', { token: m.master_key })).status, 403);
  t.equal((await svc.request('POST', '/v1/tokens', { token: m.master_key, body: {} })).status, 403, 'issuing needs an active master');
  t.equal((await admin('POST', `/admin/masters/${m.id}/keys`, {})).status, 403);
  t.equal((await admin('POST', `/admin/masters/${m.id}/unfreeze`)).json.status, 'active');
  t.equal((await store.hgetall(`tenancy:master:${m.id}`)).status, 'active');

  // Reset key: new key, epoch+1, old key refused.
  const r = await admin('POST', `/admin/masters/${m.id}/reset-key`);
  t.equal(r.status, 200);
  t.match(r.json.master_key, /^mk-[0-9A-Za-z]{48}$/);
  t.not(r.json.master_key, m.master_key);
  t.equal(r.json.epoch, 2);
  t.equal((await store.hgetall(`tenancy:master:${m.id}`)).epoch, '2');
  t.equal((await svc.request('GET', '/auth/whoami', { token: m.master_key })).status, 401);
  t.equal((await svc.request('GET', '/auth/whoami', { token: r.json.master_key })).json.epoch, 2);

  // Access settings.
  const a = await admin('PUT', `/admin/masters/${m.id}/access`, { default_namespace: 'prod', allowed_namespaces: ['prod', 'dev'] });
  t.match(a.json, { default_namespace: 'prod', allowed_namespaces: ['prod', 'dev'], propagated_keys: 0 });
  t.match(await store.hgetall(`tenancy:master:${m.id}`), { default_namespace: 'prod', allowed_namespaces: 'prod,dev' });
  const bad = await admin('PUT', `/admin/masters/${m.id}/access`, { default_namespace: 'qa', allowed_namespaces: ['prod'] });
  t.equal(bad.status, 400);
  t.ok('default_namespace' in bad.json.data);
  t.equal((await admin('PUT', `/admin/masters/${m.id}/access`, { allowed_namespaces: ['bad name!'] })).status, 400);
  t.equal((await admin('PUT', `/admin/masters/${m.id}/access`, { allowed_namespaces: 'prod' })).status, 400);

  // Delete: soft, epoch+1, store says deleted, key refused, 404 afterwards.
  const d = await admin('DELETE', `/admin/masters/${m.id}`);
  t.equal(d.status, 200);
  t.equal(d.json.epoch, 3);
  t.equal(d.json.deletedAt.valid, true);
  t.match(d.json.deletedAt.time, /Z$/);
  t.match(await store.hgetall(`tenancy:master:${m.id}`), { status: 'deleted', epoch: '3' });
  t.equal((await svc.request('GET', '/auth/whoami', { token: r.json.master_key })).status, 401);
  t.equal((await admin('GET', `/admin/masters/${m.id}`)).status, 404);
  t.equal((await admin('DELETE', `/admin/masters/${m.id}`)).status, 404);
  t.equal((await admin('GET', '/admin/masters')).json.total, 3);

  // Legacy master without a digest: never accepted.
  const { sql } = await import('slonik');
  await svc.service.context.db.query(sql.unsafe`INSERT INTO masters (name, "group", key_digest) VALUES ('legacy', 'default', NULL)`);
  t.equal((await admin('GET', '/admin/masters?search=legacy')).json.items[0].legacy, true);
  t.equal((await svc.request('GET', '/v1/tokens', { token: `mk-${'a'.repeat(48)}` })).status, 401);
  // Master routes need a master key, not the admin token.
  t.equal((await svc.request('GET', '/v1/tokens', { token: adminToken })).status, 401);
  t.equal((await svc.request('GET', '/admin/masters', { token: r.json.master_key })).status, 401);
});
