import t from 'tap';
import { startTestService, adminToken, type TestService } from '../helpers/harness.js';
import { sha256Hex } from '../../src/contract/hash.js';

async function master(svc: TestService, body: Record<string, unknown> = {}) {
  const r = await svc.request('POST', '/admin/masters', { token: adminToken, body: { name: 'm', group: 'default', ...body } });
  return r.json as { id: number; master_key: string };
}

t.test('child keys: issue (admin and master), fields, store metadata, /v1 isolation, update, revoke', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const store = svc.service.context.store;
  const A = await master(svc, { name: 'A', max_child_keys: 3 });
  const B = await master(svc, { name: 'B', group: 'other' });
  const asA = (method: string, path: string, body?: unknown) => svc.request(method, path, { token: A.master_key, body });

  const expires = new Date(Date.now() + 86_400_000).toISOString();
  const issued = await asA('POST', '/v1/tokens', {
    name: 'ci', scopes: 'batch', quota_limit: 1000, quota_reset_type: 'daily', model_limits_enabled: true,
    model_limits: 'gpt-4o, claude-3', allow_ips: '10.0.0.0/8, 192.168.1.5', deny_ips: '::1,2001:db8::/32', expires_at: expires,
  });
  t.equal(issued.status, 201);
  const k = issued.json;
  t.match(k.key_secret, /^sk-[0-9A-Za-z]{48}$/);
  t.match(k, {
    master_id: A.id, name: 'ci', issued_by: 'master', issued_at_epoch: 1, group: 'default', scopes: 'batch', quota_limit: 1000,
    quota_used: 0, quota_reset_type: 'daily', model_limits_enabled: true, model_limits: 'gpt-4o,claude-3',
    allow_ips: '10.0.0.0/8,192.168.1.5', deny_ips: '::1,2001:db8::/32', status: 'active', revoked: false,
    expires_at: new Date(Math.floor(Date.parse(expires) / 1000) * 1000).toISOString(), request_count: 0, last_accessed_at: null,
  });
  const hash = sha256Hex(k.key_secret);
  t.same(await store.hgetall(`tenancy:token:${hash}`), {
    key_id: String(k.id), master_id: String(A.id), status: 'active', revoked: '0',
    expires_at: String(Math.floor(Date.parse(expires) / 1000)), issued_at_epoch: '1', issued_by: 'master', name: 'ci',
    group: 'default', scopes: 'batch', quota_limit: '1000', quota_used: '0', quota_reset_type: 'daily',
    quota_period_start: String(Math.floor(svc.service.clock.now() / 86_400_000) * 86_400), // today's UTC midnight
    model_limits_enabled: '1', model_limits: 'gpt-4o,claude-3', allow_ips: '10.0.0.0/8,192.168.1.5',
    deny_ips: '::1,2001:db8::/32', default_namespace: '', allowed_namespaces: '',
    budget_limit: '-1', budget_used: '0.000000000000', budget_reset_type: 'never', budget_period_start: '0',
  });

  // Defaults, admin issuance.
  const byAdmin = await svc.request('POST', `/admin/masters/${A.id}/keys`, { token: adminToken, body: { scopes: 'ops' } });
  t.equal(byAdmin.status, 201);
  t.match(byAdmin.json, { issued_by: 'admin', quota_limit: -1, quota_reset_type: 'never', model_limits_enabled: false, expires_at: null, group: 'default' });
  t.equal((await store.hgetall(`tenancy:token:${sha256Hex(byAdmin.json.key_secret)}`)).expires_at, '0');
  t.equal((await svc.request('POST', '/admin/masters/999/keys', { token: adminToken, body: {} })).status, 404);

  // Bad inputs.
  for (const [body, field] of [
    [{ quota_limit: -2 }, 'quota_limit'],
    [{ quota_limit: 'lots' }, 'quota_limit'],
    [{ quota_reset_type: 'hourly' }, 'quota_reset_type'],
    [{ status: 'revoked' }, 'status'],
    [{ allow_ips: '10.0.0.0/33' }, 'allow_ips'],
    [{ allow_ips: '10.0.0.1/8/1' }, 'allow_ips'],
    [{ deny_ips: 'not-an-ip' }, 'deny_ips'],
    [{ deny_ips: '300.1.1.1' }, 'deny_ips'],
    [{ expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    [{ expires_at: 'tomorrow' }, 'expires_at'],
    [{ scopes: 'x'.repeat(256) }, 'scopes'],
    [{ model_limits_enabled: 'yes' }, 'model_limits_enabled'],
    [{ unknown: 1 }, 'unknown'],
  ] as const) {
    const r = await asA('POST', '/v1/tokens', body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.ok(field in (r.json.data ?? {}), `${field} in ${JSON.stringify(r.json.data)}`);
  }
  const wrongGroup = await asA('POST', '/v1/tokens', { group: 'other' });
  t.equal(wrongGroup.status, 403, 'invalid group');
  t.equal(wrongGroup.json.code, 'forbidden');
  t.equal((await asA('POST', '/v1/tokens', { group: 'default' })).status, 201, 'own group is valid');

  // max_child_keys: 3 live keys now.
  const capped = await asA('POST', '/v1/tokens', {});
  t.equal(capped.status, 409);
  t.same(capped.json.data, { max_child_keys: 3 });

  // Listing, reading: own keys only.
  const list = await asA('GET', '/v1/tokens');
  t.match(list.json, { total: 3, page: 1, limit: 50 });
  t.equal(list.json.items[0].key_secret, undefined, 'the secret is shown once');
  t.same((await asA('GET', '/v1/tokens?limit=1&page=2')).json.items.map((x: { id: number }) => x.id), [byAdmin.json.id]);
  t.same((await asA('GET', '/v1/tokens?search=ci')).json.items.map((x: { id: number }) => x.id), [k.id]);
  t.equal((await asA('GET', `/v1/tokens/${k.id}`)).json.name, 'ci');
  const bKey = (await svc.request('POST', '/v1/tokens', { token: B.master_key, body: {} })).json;
  t.equal(bKey.group, 'other');
  for (const [method, path, body] of [
    ['GET', `/v1/tokens/${bKey.id}`, undefined], ['PUT', `/v1/tokens/${bKey.id}`, { name: 'x' }], ['POST', `/v1/tokens/${bKey.id}/revoke`, undefined],
  ] as const) {
    const r = await asA(method, path, body);
    t.equal(r.status, 404, `${method} ${path}: another tenant's key is not found`);
  }
  t.equal((await svc.request('GET', '/v1/tokens', { token: B.master_key })).json.total, 1);
  t.equal((await svc.request('GET', `/admin/masters/${A.id}/keys`, { token: adminToken })).json.total, 3);
  t.equal((await svc.request('GET', `/admin/keys/${bKey.id}`, { token: adminToken })).json.master_id, B.id);
  t.equal((await svc.request('GET', '/admin/keys/99999', { token: adminToken })).status, 404);
  t.equal((await svc.request('GET', '/v1/tokens', {})).status, 401);
  t.equal((await svc.request('GET', '/v1/tokens', { token: k.key_secret })).status, 401, 'a child key is not a master key');

  // Update.
  const upd = await asA('PUT', `/v1/tokens/${k.id}`, { status: 'suspended', quota_limit: -1, expires_at: null, allow_ips: '', quota_reset_type: 'monthly' });
  t.equal(upd.status, 200);
  t.match(upd.json, { status: 'suspended', quota_limit: -1, expires_at: null, allow_ips: '', quota_reset_type: 'monthly' });
  t.match(await store.hgetall(`tenancy:token:${hash}`), { status: 'suspended', quota_limit: '-1', expires_at: '0', allow_ips: '', quota_reset_type: 'monthly' });
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 401, 'suspended key');
  t.equal((await asA('PUT', `/v1/tokens/${k.id}`, { status: 'active' })).json.status, 'active');
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 200);
  t.equal((await asA('PUT', `/v1/tokens/${k.id}`, {})).status, 400);
  t.equal((await asA('PUT', `/v1/tokens/${k.id}`, { status: 'deleted' })).status, 400);
  t.equal((await asA('PUT', `/v1/tokens/${k.id}`, { deny_ips: '1.2.3.4/99' })).status, 400);
  t.equal((await asA('PUT', `/v1/tokens/${k.id}`, { expires_at: new Date(Date.now() - 1000).toISOString() })).status, 400);

  // Revoke: final.
  const rev = await asA('POST', `/v1/tokens/${k.id}/revoke`);
  t.equal(rev.status, 200);
  t.equal(rev.json.revoked, true);
  t.match(rev.json.revoked_at, /Z$/);
  t.equal((await store.hgetall(`tenancy:token:${hash}`)).revoked, '1');
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 401);
  t.equal((await asA('POST', `/v1/tokens/${k.id}/revoke`)).status, 409);
  t.equal((await asA('PUT', `/v1/tokens/${k.id}`, { name: 'again' })).status, 409);
  // A revoked key frees a place under the cap; admin revoke through the master path.
  t.equal((await asA('POST', '/v1/tokens', {})).status, 201);
  const adminRev = await svc.request('POST', `/admin/masters/${A.id}/keys/${byAdmin.json.id}/revoke`, { token: adminToken });
  t.equal(adminRev.json.revoked, true);
  t.equal((await svc.request('POST', `/admin/masters/${B.id}/keys/${byAdmin.json.id}/revoke`, { token: adminToken })).status, 404);
});

t.test('epochs, freeze and namespaces: child keys follow their master in the CP and in the store', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const store = svc.service.context.store;
  const admin = (method: string, path: string, body?: unknown) => svc.request(method, path, { token: adminToken, body });
  const M = await master(svc);
  const issue = async (body = {}) => (await svc.request('POST', '/v1/tokens', { token: M.master_key, body })).json;
  const k1 = await issue();
  const who = (key: string) => svc.request('GET', '/auth/whoami', { token: key });
  t.equal((await who(k1.key_secret)).status, 200);

  await admin('POST', `/admin/masters/${M.id}/freeze`);
  t.equal((await who(k1.key_secret)).status, 401, 'a frozen master\'s keys fail');
  await admin('POST', `/admin/masters/${M.id}/unfreeze`);
  t.equal((await who(k1.key_secret)).status, 200);

  const reset = (await admin('POST', `/admin/masters/${M.id}/reset-key`)).json;
  t.equal((await who(k1.key_secret)).status, 401, 'old-epoch key fails at once');
  t.equal((await store.hgetall(`tenancy:token:${sha256Hex(k1.key_secret)}`)).issued_at_epoch, '1');
  t.equal((await store.hgetall(`tenancy:master:${M.id}`)).epoch, '2');
  const k2 = (await svc.request('POST', '/v1/tokens', { token: reset.master_key, body: {} })).json;
  t.equal(k2.issued_at_epoch, 2);
  t.equal((await who(k2.key_secret)).status, 200);

  // Access propagation.
  await admin('PUT', `/admin/masters/${M.id}/access`, { default_namespace: 'a', allowed_namespaces: ['a', 'b'] });
  t.match((await admin('GET', `/admin/keys/${k2.id}`)).json, { default_namespace: '', allowed_namespaces: [] }, 'no propagation unless asked');
  const k3 = (await svc.request('POST', '/v1/tokens', { token: reset.master_key, body: {} })).json;
  t.match(k3, { default_namespace: 'a', allowed_namespaces: ['a', 'b'] }, 'new keys inherit');
  t.equal((await svc.request('POST', '/v1/tokens', { token: reset.master_key, body: { allowed_namespaces: ['c'] } })).status, 400, 'a key cannot widen its master');
  const prop = await admin('PUT', `/admin/masters/${M.id}/access`, { default_namespace: 'b', allowed_namespaces: ['b'], propagate: true });
  t.equal(prop.json.propagated_keys, 3, 'every unrevoked key (k1 included, revocation is separate from epochs)');
  t.match(await store.hgetall(`tenancy:token:${sha256Hex(k2.key_secret)}`), { default_namespace: 'b', allowed_namespaces: 'b' });
  const ka = await admin('PUT', `/admin/keys/${k2.id}/access`, { default_namespace: '' , allowed_namespaces: [] });
  t.match(ka.json, { default_namespace: '', allowed_namespaces: [] });
  t.equal((await admin('PUT', `/admin/keys/${k2.id}/access`, { allowed_namespaces: ['zzz'] })).status, 400);
  t.equal((await admin('PUT', `/admin/keys/${k2.id}/access`, {})).status, 400);
  t.equal((await admin('PUT', '/admin/keys/9999/access', { default_namespace: 'b' })).status, 404);

  // Delete: every key fails; the store says so.
  await admin('DELETE', `/admin/masters/${M.id}`);
  t.equal((await who(k2.key_secret)).status, 401);
  t.match(await store.hgetall(`tenancy:master:${M.id}`), { status: 'deleted', epoch: '3' });
  t.equal((await svc.request('GET', '/v1/tokens', { token: reset.master_key })).status, 401);
});

t.test('whoami: admin, master, key; store metadata checked before the database', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const store = svc.service.context.store;
  const M = await master(svc, { name: 'W' });
  t.same((await svc.request('GET', '/auth/whoami', { token: adminToken })).json, { type: 'admin', role: 'admin' });
  t.equal((await svc.request('GET', '/auth/whoami')).status, 401);
  t.equal((await svc.request('GET', '/auth/whoami', { token: 'sk-nope' })).status, 401);
  const k = (await svc.request('POST', '/v1/tokens', { token: M.master_key, body: { name: 'w', allow_ips: '1.2.3.4', default_namespace: '' } })).json;
  const r = await svc.request('GET', '/auth/whoami', { token: k.key_secret });
  t.equal(r.status, 200);
  t.same(r.json, {
    type: 'key', role: 'key', id: k.id, master_id: M.id, name: 'w', issued_by: 'master', issued_at_epoch: 1, group: 'default',
    scopes: '', quota_limit: -1, quota_used: 0, quota_reset_type: 'never', model_limits_enabled: false, model_limits: '',
    allow_ips: '1.2.3.4', deny_ips: '', default_namespace: '', allowed_namespaces: [], status: 'active', expires_at: null,
  });

  const key = `tenancy:token:${sha256Hex(k.key_secret)}`;
  const set = (fields: Record<string, string>) => store.apply([{ op: 'hset', key, fields }]);
  // Served from the store alone: a value only the store holds shows up.
  await set({ name: 'from-store', issued_at_epoch: ' 1 ', expires_at: '\t0\n' });
  const fromStore = await svc.request('GET', '/auth/whoami', { token: k.key_secret });
  t.equal(fromStore.status, 200, 'whitespace-trimmed integers parse');
  t.equal(fromStore.json.name, 'from-store');
  // Unparsable values: 400.
  for (const [field, value] of [['expires_at', 'soon'], ['revoked', ''], ['issued_at_epoch', '1.5'], ['master_id', 'x']]) {
    await set({ [field]: value });
    const bad = await svc.request('GET', '/auth/whoami', { token: k.key_secret });
    t.equal(bad.status, 400, `${field}=${JSON.stringify(value)}`);
    t.ok(field in bad.json.data);
    await set({ expires_at: '0', revoked: '0', issued_at_epoch: '1', master_id: String(M.id) });
  }
  await store.apply([{ op: 'hset', key: `tenancy:master:${M.id}`, fields: { epoch: 'two' } }]);
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 400, 'master epoch unparsable');
  await store.apply([{ op: 'hset', key: `tenancy:master:${M.id}`, fields: { epoch: '1' } }]);
  // The store decides even when the database says otherwise.
  for (const [fields, why] of [
    [{ status: 'suspended' }, 'suspended'],
    [{ revoked: '1' }, 'revoked'],
    [{ expires_at: String(Math.floor(Date.now() / 1000) - 5) }, 'expired'],
    [{ issued_at_epoch: '0' }, 'old epoch'],
  ] as const) {
    await set(fields);
    t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 401, why);
    await set({ status: 'active', revoked: '0', expires_at: '0', issued_at_epoch: '1' });
  }
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 200);
  // Expiry by the clock alone.
  await set({ expires_at: String(Math.floor(Date.now() / 1000) + 3600) });
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 200);
  svc.service.clock.advance(3601_000);
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 401, 'expired');
  svc.service.clock.advance(-3601_000);
  await set({ expires_at: '0' });
  // Metadata missing (store flushed, not yet delivered): the database decides.
  await store.apply([{ op: 'del', key }]);
  const db = await svc.request('GET', '/auth/whoami', { token: k.key_secret });
  t.equal(db.status, 200);
  t.equal(db.json.name, 'w');
  // Incomplete metadata: checked, then completed from the database.
  await store.apply([{ op: 'hset', key, fields: { master_id: String(M.id), status: 'active', revoked: '0', expires_at: '0', issued_at_epoch: '1' } }]);
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).json.name, 'w');
  await store.apply([{ op: 'hset', key, fields: { revoked: '1' } }]);
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 401, 'incomplete metadata still checked first');
});

t.test('failed authentications with master keys are limited per address', async (t) => {
  const svc = await startTestService({ env: { SVC_AUTH_FAIL_LIMIT: '3' } });
  t.teardown(() => svc.stop());
  const M = await master(svc);
  for (let i = 0; i < 3; i++) t.equal((await svc.request('GET', '/v1/tokens', { token: `mk-${'x'.repeat(48)}` })).status, 401);
  // The address is throttled for bad master keys: another bad one gets 429, a valid one still passes
  // (docs/architecture.md, "Authentication": bad tries from a shared egress cannot lock out good credentials).
  const blocked = await svc.request('GET', '/v1/tokens', { token: `mk-${'y'.repeat(48)}` });
  t.equal(blocked.status, 429);
  t.ok(Number(blocked.headers.get('retry-after')) > 0);
  t.equal((await svc.request('GET', '/v1/tokens', { token: M.master_key })).status, 200, 'a valid master key passes the throttled address');
  t.equal((await svc.request('GET', '/auth/whoami', { token: M.master_key })).status, 200);
});
