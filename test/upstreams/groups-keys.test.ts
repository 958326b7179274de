import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';

t.test('provider groups: validation, defaults, list, read, update', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const req = (m: string, p: string, body?: unknown) => svc.request(m, p, { token: adminToken, body });

  const g = await req('POST', '/admin/provider-groups', {
    name: 'vx', type: 'vertex', base_url: 'https://us-central1-aiplatform.googleapis.com', models: ['gemini-pro'],
    cloud_project: 'p1', static_headers: { 'X-Team': 'core' },
  });
  t.equal(g.status, 201);
  t.match(g.json, { name: 'vx', type: 'vertex', cloud_location: 'global', cloud_project: 'p1', status: 'active', headers_profile: 'default', models: ['gemini-pro'], static_headers: { 'X-Team': 'core' } });
  t.same(g.json.deletedAt, { time: null, valid: false });
  t.match(g.json.createdAt, /Z$/);

  const o = await req('POST', '/admin/provider-groups', { name: 'oa', type: 'openai', base_url: 'http://api.openai.com/v1', models: ['gpt-4o'], headers_profile: 'minimal' });
  t.equal(o.status, 201);
  t.equal(o.json.cloud_location, null, 'no location default outside vertex');
  const loc = await req('POST', '/admin/provider-groups', { name: 'vx2', type: 'vertex', base_url: 'https://x.example', cloud_location: 'europe-west4' });
  t.equal(loc.json.cloud_location, 'europe-west4', 'a given location is kept');

  const bad = [
    [{ name: 'a', type: 'azure', base_url: 'https://x.example' }, 'type'],
    [{ name: 'a', type: 'openai', base_url: 'ftp://x.example' }, 'base_url'],
    [{ name: 'a', type: 'openai', base_url: 'not a url' }, 'base_url'],
    [{ type: 'openai', base_url: 'https://x.example' }, 'name'],
    [{ name: 'a', type: 'openai', base_url: 'https://x.example', headers_profile: 'fancy' }, 'headers_profile'],
    [{ name: 'a', type: 'openai', base_url: 'https://x.example', static_headers: { 'X-A': 1 } }, 'static_headers.X-A'],
    [{ name: 'a', type: 'openai', base_url: 'https://x.example', models: 'gpt' }, 'models'],
    [{ name: 'a'.repeat(101), type: 'openai', base_url: 'https://x.example' }, 'name'],
    [{ name: 'a', type: 'openai', base_url: 'https://x.example', status: 'auto_disabled' }, 'status'],
  ] as const;
  for (const [body, field] of bad) {
    const r = await req('POST', '/admin/provider-groups', body);
    t.equal(r.status, 400, `400 for ${field}`);
    t.equal(r.json.code, 'bad_request');
    t.ok(field in r.json.data, `data names ${field}: ${JSON.stringify(r.json.data)}`);
  }
  const dup = await req('POST', '/admin/provider-groups', { name: 'oa', type: 'openai', base_url: 'https://x.example' });
  t.equal(dup.status, 409);
  t.same(dup.json.data, { name: 'already exists' });

  const list = await req('GET', '/admin/provider-groups?page=1&limit=2');
  t.equal(list.json.total, 3);
  t.equal(list.json.items.length, 2);
  t.equal(list.json.limit, 2);
  t.equal((await req('GET', '/admin/provider-groups?limit=500')).json.limit, 200, 'limit clamped');
  const search = await req('GET', '/admin/provider-groups?search=openai');
  t.same(search.json.items.map((x: any) => x.name), ['oa']);
  t.equal((await req('GET', '/admin/provider-groups?page=0')).status, 400);

  t.equal((await req('GET', `/admin/provider-groups/${g.json.id}`)).json.name, 'vx');
  t.equal((await req('GET', '/admin/provider-groups/9999')).status, 404);
  t.equal((await req('GET', '/admin/provider-groups/abc')).status, 400);

  const up = await req('PUT', `/admin/provider-groups/${o.json.id}`, { type: 'vertex', status: 'manual_disabled' });
  t.equal(up.status, 200);
  t.match(up.json, { type: 'vertex', cloud_location: 'global', status: 'manual_disabled' }, 'becoming vertex takes the default location');
  t.equal((await req('PUT', `/admin/provider-groups/${o.json.id}`, {})).status, 400, 'empty update');
  t.equal((await req('PUT', '/admin/provider-groups/9999', { name: 'z' })).status, 404);
  t.equal((await req('PUT', `/admin/provider-groups/${o.json.id}`, { name: 'vx' })).status, 409);

  const del = await req('DELETE', `/admin/provider-groups/${loc.json.id}`);
  t.same(del.json, { id: loc.json.id, deleted: true, disabled_bindings: [] });
  t.equal((await req('GET', `/admin/provider-groups/${loc.json.id}`)).status, 404);
  t.equal((await req('DELETE', `/admin/provider-groups/${loc.json.id}`)).status, 404);
});

t.test('upstream keys: CRUD, filters, batches, masking', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const req = (m: string, p: string, body?: unknown) => svc.request(m, p, { token: adminToken, body });
  const g1 = (await req('POST', '/admin/provider-groups', { name: 'g1', type: 'openai', base_url: 'https://a.example', models: ['m'] })).json;
  const g2 = (await req('POST', '/admin/provider-groups', { name: 'g2', type: 'anthropic_oauth', base_url: 'https://b.example', models: ['m'] })).json;

  const k = await req('POST', '/admin/api-keys', { group_id: g1.id, api_key: 'sk-abcdefgh1234', weight: 3, ban_until: '2030-01-02T03:04:05Z' });
  t.equal(k.status, 201);
  t.match(k.json, { group_id: g1.id, api_key: '****1234', weight: 3, status: 'active', auto_ban: true, ban_reason: '', ban_until: '2030-01-02T03:04:05.000Z', access_token: null });
  const o = await req('POST', '/admin/api-keys', {
    group_id: g2.id, access_token: 'at-secret-9999', refresh_token: 'rt-secret-8888', expires_at: '2030-01-01T00:00:00+02:00', account_id: 'acc', project_id: 'proj',
  });
  t.equal(o.status, 201);
  t.match(o.json, { api_key: '', access_token: '****9999', refresh_token: '****8888', expires_at: '2029-12-31T22:00:00.000Z', account_id: 'acc', project_id: 'proj' });

  const full = await req('GET', `/admin/api-keys/${o.json.id}`);
  t.match(full.json, { access_token: 'at-secret-9999', refresh_token: 'rt-secret-8888' }, 'whole on the single read');
  t.equal((await req('GET', `/admin/api-keys/${k.json.id}`)).json.api_key, 'sk-abcdefgh1234');

  const bad = [
    [{ api_key: 'x' }, 'group_id'],
    [{ group_id: g1.id, api_key: 'x', weight: -1 }, 'weight'],
    [{ group_id: g1.id, api_key: 'x', weight: 1.5 }, 'weight'],
    [{ group_id: g1.id, api_key: 'x', status: 'banned' }, 'status'],
    [{ group_id: g1.id, api_key: 'x', ban_until: 'tomorrow' }, 'ban_until'],
    [{ group_id: g1.id }, 'api_key'],
    [{ group_id: 9999, api_key: 'x' }, 'group_id'],
    [{ group_id: g1.id, api_key: 'x', extra: 1 }, 'extra'],
    [{ group_id: g1.id, api_key: 'x'.repeat(8193) }, 'api_key'],
  ] as const;
  for (const [body, field] of bad) {
    const r = await req('POST', '/admin/api-keys', body);
    t.equal(r.status, 400, `400 for ${field}`);
    t.ok(field in r.json.data, `data names ${field}: ${JSON.stringify(r.json.data)}`);
  }

  const batch = await req('POST', '/admin/api-keys/batch', { items: [{ group_id: g1.id, api_key: 'key-one-aaaa' }, { group_id: g1.id, api_key: 'key-two-bbbb', weight: 0 }] });
  t.equal(batch.status, 201);
  t.same(batch.json.items.map((x: any) => x.api_key), ['****aaaa', '****bbbb']);
  const badBatch = await req('POST', '/admin/api-keys/batch', { items: [{ group_id: g1.id, api_key: 'ok' }, { group_id: 777, api_key: 'no' }] });
  t.equal(badBatch.status, 400);
  t.same(badBatch.json.data, { 'items.1.group_id': 'unknown provider group' });
  t.equal((await req('GET', '/admin/api-keys')).json.total, 4, 'a failed batch creates nothing');

  const list = await req('GET', '/admin/api-keys');
  t.equal(list.json.total, 4);
  for (const item of list.json.items) {
    t.notOk(/secret|abcdefgh|key-one/.test(JSON.stringify(item)), 'secrets masked in lists');
  }
  t.same((await req('GET', `/admin/api-keys?group_id=${g2.id}`)).json.items.map((x: any) => x.id), [o.json.id]);

  const st = await req('PUT', '/admin/api-keys/batch/status', { ids: [k.json.id, batch.json.items[0].id, 4242], status: 'manual_disabled' });
  t.same(st.json, { updated: 2, ids: [k.json.id, batch.json.items[0].id], not_found: [4242] });
  t.same((await req('GET', '/admin/api-keys?status=manual_disabled')).json.items.map((x: any) => x.id), [k.json.id, batch.json.items[0].id]);
  t.equal((await req('GET', '/admin/api-keys?status=nope')).status, 400);
  t.equal((await req('PUT', '/admin/api-keys/batch/status', { ids: [k.json.id], status: 'auto_disabled' })).status, 400, 'auto_disabled is not for admins');
  t.equal((await req('PUT', '/admin/api-keys/batch/status', { ids: [], status: 'active' })).status, 400);

  const back = await req('PUT', `/admin/api-keys/${k.json.id}`, { status: 'active' });
  t.match(back.json, { status: 'active', ban_until: null, ban_reason: '' }, 'reactivation lifts the ban');
  const upd = await req('PUT', `/admin/api-keys/${k.json.id}`, { weight: 7, ban_reason: 'flaky', api_key: 'sk-new-zzzz' });
  t.match(upd.json, { weight: 7, ban_reason: 'flaky', api_key: '****zzzz' });
  t.equal((await req('PUT', '/admin/api-keys/9999', { weight: 1 })).status, 404);
  t.equal((await req('PUT', `/admin/api-keys/${k.json.id}`, { group_id: 9999 })).status, 400);

  const bd = await req('POST', '/admin/api-keys/batch/delete', { ids: [batch.json.items[0].id, 5555] });
  t.same(bd.json, { deleted: 1, ids: [batch.json.items[0].id], not_found: [5555] });
  t.same((await req('DELETE', `/admin/api-keys/${k.json.id}`)).json, { id: k.json.id, deleted: true });
  t.equal((await req('GET', `/admin/api-keys/${k.json.id}`)).status, 404);
  t.equal((await req('DELETE', `/admin/api-keys/${k.json.id}`)).status, 404);
  t.equal((await req('GET', '/admin/api-keys')).json.total, 2);
});
