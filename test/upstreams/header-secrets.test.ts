/**
 * Credentials inside a provider group's static_headers are secrets: masked in
 * every answer but the single read and in the audit trail, kept when an edit
 * sends the masked value back, delivered whole to the data plane's store.
 */
import t from 'tap';
import { Redis } from 'ioredis';
import { adminToken, eventually, startTestService } from '../helpers/harness.js';
import { isCredentialHeader } from '../../src/actors/secret-names.js';
import { maskSecrets } from '../../src/actors/audit/mask.js';

t.test('the rule: header names that carry credentials', async (t) => {
  for (const name of ['X-Api-Key', 'Authorization', 'Proxy-Authorization', 'Cookie', 'X-Auth-Token', 'api-key', 'X-Goog-Api-Key', 'X-Client-Secret', 'X-Password', 'X-Amz-Security-Token']) {
    t.ok(isCredentialHeader(name), name);
  }
  for (const name of ['X-Team', 'Accept', 'User-Agent', 'X-Region', 'anthropic-version', 'OpenAI-Organization']) t.notOk(isCredentialHeader(name), name);
  t.same(maskSecrets({ static_headers: { 'X-Api-Key': 'k', 'X-Team': 'core', Authorization: '' } }), {
    static_headers: { 'X-Api-Key': '[masked]', 'X-Team': 'core', Authorization: '' },
  }, 'the audit masks the same headers');
});

t.test('static_headers credentials over HTTP: masked in answers and the audit trail, kept on a masked round trip', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const admin = { token: adminToken };
  const headers = { 'X-Api-Key': 'hk-very-secret-abcd', Authorization: 'Bearer tok-very-secret-wxyz', Cookie: 'sid=very-secret-c00k', 'X-Team': 'core' };
  const created = await svc.request('POST', '/admin/provider-groups', { ...admin, body: { name: 'g1', type: 'openai', base_url: 'https://api.example.com', models: ['m'], static_headers: headers } });
  t.equal(created.status, 201, created.text);
  const shown = { 'X-Api-Key': '****abcd', Authorization: '****wxyz', Cookie: '****c00k', 'X-Team': 'core' };
  t.same(created.json.static_headers, shown, 'the create answer masks credentials');
  const id = created.json.id;

  const list = await svc.request('GET', '/admin/provider-groups', admin);
  t.same(list.json.items[0].static_headers, shown, 'the list masks credentials');
  t.notOk(list.text.includes('very-secret'));
  t.same((await svc.request('GET', `/admin/provider-groups/${id}`, admin)).json.static_headers, headers, 'the single read is whole (as for upstream keys)');

  // An edit form posts back what it was shown, changing one plain header.
  const edited = await svc.request('PUT', `/admin/provider-groups/${id}`, { ...admin, body: { static_headers: { ...shown, 'X-Team': 'infra' } } });
  t.equal(edited.status, 200, edited.text);
  t.same(edited.json.static_headers, { ...shown, 'X-Team': 'infra' });
  t.same((await svc.request('GET', `/admin/provider-groups/${id}`, admin)).json.static_headers, { ...headers, 'X-Team': 'infra' }, 'the stored secrets were kept');

  const replaced = await svc.request('PUT', `/admin/provider-groups/${id}`, { ...admin, body: { static_headers: { 'X-Api-Key': 'hk-new-value-9999', 'X-Team': 'infra' } } });
  t.same(replaced.json.static_headers, { 'X-Api-Key': '****9999', 'X-Team': 'infra' }, 'a new value replaces the secret; absent headers are dropped');
  t.same((await svc.request('GET', `/admin/provider-groups/${id}`, admin)).json.static_headers, { 'X-Api-Key': 'hk-new-value-9999', 'X-Team': 'infra' });

  const trail = await eventually(async () => {
    const r = await svc.request('GET', '/admin/audit?resource=provider-groups', admin);
    return r.json.items.length === 3 ? r : null;
  });
  t.ok(trail, 'three audited writes');
  t.notOk(trail!.text.includes('very-secret'), 'no secret in the trail answer');
  t.notOk(trail!.text.includes('hk-new-value'));
  const update = trail!.json.items.find((e: any) => e.action === 'update' && e.after.static_headers['X-Team'] === 'infra' && e.before.static_headers['X-Team'] === 'core');
  t.same(update.before.static_headers, { 'X-Api-Key': '[masked]', Authorization: '[masked]', Cookie: '[masked]', 'X-Team': 'core' });
  const raw = await svc.service.context.clickhouse.query<{ n: number }>(
    "SELECT count() AS n FROM audit_log WHERE position(after, 'very-secret') > 0 OR position(before, 'very-secret') > 0 OR position(diff, 'very-secret') > 0 OR position(after, 'hk-new') > 0",
  );
  t.equal(Number(raw[0]!.n), 0, 'nothing secret is stored in the trail');

  if (svc.usingRedis) {
    const redis = new Redis(svc.config.redisUrl!);
    t.teardown(() => redis.disconnect());
    const inStore = await eventually(async () => {
      const v = await redis.hget(`route:group:${id}`, 'static_headers');
      return v && JSON.parse(v)['X-Api-Key'] === 'hk-new-value-9999' ? JSON.parse(v) : null;
    });
    t.same(inStore, { 'X-Api-Key': 'hk-new-value-9999', 'X-Team': 'infra' }, 'the data plane reads the real value');
  }

  // Upstream keys follow the same round trip.
  const k = await svc.request('POST', '/admin/api-keys', { ...admin, body: { group_id: id, api_key: 'sk-upstream-secret-7777', weight: 1 } });
  t.equal(k.json.api_key, '****7777');
  const kept = await svc.request('PUT', `/admin/api-keys/${k.json.id}`, { ...admin, body: { api_key: '****7777', weight: 5 } });
  t.equal(kept.status, 200, kept.text);
  t.equal((await svc.request('GET', `/admin/api-keys/${k.json.id}`, admin)).json.api_key, 'sk-upstream-secret-7777', 'a masked key sent back keeps the stored one');
});
