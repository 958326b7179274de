/**
 * PUT /admin/keys/{id}: the admin edits the limits of any master's child key and suspends or resumes it (the console's
 * master page uses it), with the same rules as a master's PUT /v1/tokens/{id} on its own keys.
 */
import t from 'tap';
import { startTestService, adminToken } from '../helpers/harness.js';
import { sha256Hex } from '../../src/contract/hash.js';

t.test('admin: edit limits, suspend and resume any child key; refused to masters; bad input and missing keys', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const admin = { token: adminToken };
  const store = svc.service.context.store;
  const m = (await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'A', group: 'default' } })).json as { id: number; master_key: string };
  const other = (await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'B', group: 'default' } })).json as { id: number; master_key: string };
  const k = (await svc.request('POST', `/admin/masters/${m.id}/keys`, { ...admin, body: { name: 'ci' } })).json as { id: number; key_secret: string };
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 200, 'the key works before');

  const limits = await svc.request('PUT', `/admin/keys/${k.id}`, { ...admin, body: { quota_limit: 5000, quota_reset_type: 'monthly', model_limits: 'gpt-4o', model_limits_enabled: true, name: 'ci-2' } });
  t.equal(limits.status, 200, limits.text);
  t.match(limits.json, { id: k.id, master_id: m.id, name: 'ci-2', quota_limit: 5000, quota_reset_type: 'monthly', model_limits: 'gpt-4o', model_limits_enabled: true, status: 'active' });
  t.match(await store.hgetall(`tenancy:token:${sha256Hex(k.key_secret)}`), { quota_limit: '5000', quota_reset_type: 'monthly', model_limits: 'gpt-4o' }, 'the data plane sees the limits');

  const suspended = await svc.request('PUT', `/admin/keys/${k.id}`, { ...admin, body: { status: 'suspended' } });
  t.equal(suspended.json.status, 'suspended');
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 401, 'a suspended key is refused');
  t.equal((await store.hgetall(`tenancy:token:${sha256Hex(k.key_secret)}`)).status, 'suspended');
  t.equal((await svc.request('PUT', `/admin/keys/${k.id}`, { ...admin, body: { status: 'active' } })).json.status, 'active');
  t.equal((await svc.request('GET', '/auth/whoami', { token: k.key_secret })).status, 200, 'resumed');

  // The same rules as the tenant's update: a 400 names the field, an empty body is refused.
  const bad = await svc.request('PUT', `/admin/keys/${k.id}`, { ...admin, body: { quota_limit: -2 } });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.json.data), /quota_limit/);
  t.equal((await svc.request('PUT', `/admin/keys/${k.id}`, { ...admin, body: { allow_ips: '10.0.0.0/33' } })).status, 400);
  t.equal((await svc.request('PUT', `/admin/keys/${k.id}`, { ...admin, body: {} })).status, 400);
  t.equal((await svc.request('PUT', `/admin/keys/${k.id}`, { ...admin, body: { status: 'revoked' } })).status, 400);
  t.equal((await svc.request('PUT', '/admin/keys/999999', { ...admin, body: { status: 'suspended' } })).status, 404);

  // Only the admin: a master (even the key's own) and a child key are refused here; masters use /v1/tokens/{id}.
  t.equal((await svc.request('PUT', `/admin/keys/${k.id}`, { token: m.master_key, body: { status: 'suspended' } })).status, 401);
  t.equal((await svc.request('PUT', `/admin/keys/${k.id}`, { token: k.key_secret, body: { status: 'suspended' } })).status, 401);
  t.equal((await svc.request('PUT', `/v1/tokens/${k.id}`, { token: other.master_key, body: { status: 'suspended' } })).status, 404, "another master cannot reach it");

  // A revoked key cannot be changed; the change is in the audit trail.
  t.equal((await svc.request('POST', `/admin/masters/${m.id}/keys/${k.id}/revoke`, admin)).status, 200);
  t.equal((await svc.request('PUT', `/admin/keys/${k.id}`, { ...admin, body: { status: 'active' } })).status, 409);
  const audit = await svc.request('GET', `/admin/audit?resource=keys&limit=50`, admin);
  t.ok(
    (audit.json.items as Array<{ method?: string; path?: string; resource_id?: string | number }>).some((i) => i.method === 'PUT' && String(i.resource_id) === String(k.id)),
    'the edit is audited',
  );
});
