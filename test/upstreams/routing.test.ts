import t from 'tap';
import { Redis } from 'ioredis';
import { adminToken, eventually, startTestService } from '../helpers/harness.js';

t.test('routing tables in the store: groups, keys, bindings, capabilities, versions, notifications', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const store = svc.service.context.store;
  const req = (m: string, p: string, body?: unknown) => svc.request(m, p, { token: adminToken, body });
  const messages: any[] = [];
  const unsubscribe = await store.subscribe('gateway:config', (m) => messages.push(JSON.parse(m)));
  t.teardown(() => unsubscribe());
  const snapshot = async (key: string) => JSON.parse((await store.get(`route:binding:${key}`)) ?? 'null');
  const version = async () => Number(await store.get('route:version'));
  /** Waits for the store to hold a snapshot of `key` at least as new as the last change. */
  const settled = async (key: string) => {
    await eventually(async () => (await snapshot(key))?.version === (await version()) && (await version()) > 0);
    return snapshot(key);
  };

  await req('POST', '/admin/models', { name: 'm-a', kind: 'chat', context_window: 128000, max_output_tokens: 8000, cost_per_token: 0.001, supports_vision: true, supports_functions: true, supports_tool_choice: true });
  await req('POST', '/admin/models', { name: 'm-b', kind: 'chat', context_window: 32000, max_output_tokens: 4000, cost_per_token: 0.002, supports_functions: true });
  const gA = (await req('POST', '/admin/provider-groups', { name: 'ga', type: 'openai', base_url: 'https://a.example', models: ['m-a', 'm-x'], static_headers: { 'X-A': '1' } })).json;
  const gB = (await req('POST', '/admin/provider-groups', { name: 'gb', type: 'anthropic', base_url: 'https://b.example', models: ['m-b'] })).json;
  const k1 = (await req('POST', '/admin/api-keys', { group_id: gA.id, api_key: 'ka-1111', weight: 2 })).json;
  const k2 = (await req('POST', '/admin/api-keys', { group_id: gA.id, api_key: 'ka-2222', weight: 3, ban_until: new Date(svc.service.clock.now() + 3600_000).toISOString() })).json;
  const k3 = (await req('POST', '/admin/api-keys', { group_id: gB.id, api_key: 'kb-3333', weight: 5 })).json;
  await req('POST', '/admin/api-keys', { group_id: gB.id, api_key: 'kb-4444', weight: 1, status: 'manual_disabled' });
  await req('POST', '/admin/api-keys', { group_id: gB.id, api_key: 'kb-5555', weight: 0 });

  t.equal((await req('POST', '/admin/namespaces', { name: 'prod', description: 'production' })).status, 201);
  t.equal((await req('POST', '/admin/namespaces', { name: 'prod' })).status, 409);
  t.equal((await req('POST', '/admin/namespaces', { name: 'has.dot' })).status, 400, 'a dot would make the bindingKey ambiguous');

  const bA = await req('POST', '/admin/bindings', { namespace: 'prod', public_model: 'chat', group_id: gA.id, selector_type: 'exact', selector_value: 'm-a', weight: 70 });
  t.equal(bA.status, 201);
  t.match(bA.json, { binding_key: 'prod.chat', status: 'active', weight: 70, selector_type: 'exact' });
  const bB = (await req('POST', '/admin/bindings', { namespace: 'prod', public_model: 'chat', group_id: gB.id, selector_value: 'm-b', weight: 30 })).json;

  // Bad bindings.
  const noResolve = await req('POST', '/admin/bindings', { namespace: 'prod', public_model: 'chat', group_id: gB.id, selector_value: 'm-a' });
  t.equal(noResolve.status, 400);
  t.ok('selector_value' in noResolve.json.data);
  const defaulted = await req('POST', '/admin/bindings', { namespace: 'prod', public_model: 'gpt', group_id: gB.id });
  t.equal(defaulted.status, 400, 'selector_value defaults to public_model, which gb lacks');
  t.same(Object.keys((await req('POST', '/admin/bindings', { namespace: 'nope', public_model: 'chat', group_id: 999, selector_value: 'm-a' })).json.data).sort(), ['group_id', 'namespace']);
  t.equal((await req('POST', '/admin/bindings', { namespace: 'prod', public_model: 'chat', group_id: gA.id, selector_value: 'm-a' })).status, 409, 'same target twice');
  t.equal((await req('POST', '/admin/bindings', { namespace: 'prod', public_model: 'chat', group_id: gA.id, selector_type: 'regex', selector_value: 'm-a' })).status, 400);
  t.equal((await req('POST', '/admin/bindings', { namespace: 'prod', public_model: 'chat', group_id: gA.id, selector_value: 'm-x', weight: -1 })).status, 400);
  t.equal((await req('POST', '/admin/bindings', { namespace: 'prod', group_id: gA.id })).status, 400);

  // Groups and keys as the DP reads them.
  await eventually(async () => (await store.hgetall(`route:group:${gB.id}:keys`))[k3.id]);
  const ga = await store.hgetall(`route:group:${gA.id}`);
  t.match(ga, { id: String(gA.id), name: 'ga', type: 'openai', base_url: 'https://a.example', models: '["m-a","m-x"]', static_headers: '{"X-A":"1"}', headers_profile: 'default' });
  const gaKeys = await store.hgetall(`route:group:${gA.id}:keys`);
  t.same(Object.keys(gaKeys), [String(k1.id)], 'the banned key is left out');
  t.same(JSON.parse(gaKeys[k1.id]!), { id: k1.id, weight: 2, api_key: 'ka-1111', access_token: '', expires_at: 0, account_id: '', project_id: '', ban_until: 0 });
  t.same(Object.keys(await store.hgetall(`route:group:${gB.id}:keys`)), [String(k3.id)], 'disabled and zero-weight keys are left out');
  t.same((await store.smembers('route:groups')).sort(), [String(gA.id), String(gB.id)].sort());

  // The bindingKey snapshot: weighted candidates and aggregated capabilities.
  let s = await settled('prod.chat');
  t.match(s, { binding_key: 'prod.chat', namespace: 'prod', public_model: 'chat', namespace_status: 'active', available: true, total_weight: 100 });
  t.same(s.candidates, [
    { binding_id: bA.json.id, group_id: gA.id, group_name: 'ga', group_type: 'openai', upstream_model: 'm-a', weight: 70, key_count: 1, key_weight: 2 },
    { binding_id: bB.id, group_id: gB.id, group_name: 'gb', group_type: 'anthropic', upstream_model: 'm-b', weight: 30, key_count: 1, key_weight: 5 },
  ]);
  t.same(s.capabilities, {
    models: ['m-a', 'm-b'], unknown_models: [], kinds: ['chat'], context_window: 32000, max_output_tokens: 4000, cost_per_token: 0.002,
    cost_per_input_token: 0.002, cost_per_output_token: 0.002, supports_fim: false, supports_functions: true, supports_tool_choice: false, supports_vision: false,
  });
  t.same(await store.smembers('route:bindings'), ['prod.chat']);
  const msg = messages.find((m) => m.kind === 'routing' && m.ids.includes('prod.chat'));
  t.ok(msg, 'a routing change was published');
  t.type(msg.version, 'number');

  // A model change re-synchronizes the bindingKeys resolving to it.
  let v0 = await version();
  const models = (await req('GET', '/admin/models')).json;
  const mb = models.find((m: any) => m.name === 'm-b');
  t.equal((await req('PUT', `/admin/models/${mb.id}`, { context_window: 16000, supports_vision: true })).status, 200);
  s = await settled('prod.chat');
  t.ok(s.version > v0, 'the version grows');
  t.equal(s.capabilities.context_window, 16000);
  t.equal(s.capabilities.supports_vision, true, 'every resolved model supports vision now');
  t.ok(messages.some((m) => m.version === s.version && m.ids.includes('prod.chat')), 'the model change was announced with its version');

  // A disabled group leaves the tables; capabilities keep counting it.
  v0 = await version();
  await req('PUT', `/admin/provider-groups/${gB.id}`, { status: 'manual_disabled' });
  s = await settled('prod.chat');
  t.ok(s.version > v0);
  t.same(s.candidates.map((c: any) => c.group_id), [gA.id]);
  t.equal(s.total_weight, 70);
  t.equal(s.capabilities.context_window, 16000);
  t.same(await store.hgetall(`route:group:${gB.id}`), {});
  t.same(await store.smembers('route:groups'), [String(gA.id)]);

  // No upstream available: the snapshot stays, marked unavailable.
  await req('PUT', `/admin/api-keys/${k1.id}`, { ban_until: new Date(svc.service.clock.now() + 60_000).toISOString(), ban_reason: '429s' });
  s = await settled('prod.chat');
  t.same(s.candidates, []);
  t.equal(s.available, false);
  t.same(await store.hgetall(`route:group:${gA.id}:keys`), {});

  // Ban expiry: the job brings the keys back once ban_until passed.
  svc.service.clock.advance(2 * 3600_000);
  const tick = await svc.service.system.ask<any>('upstream-jobs', 'tick');
  t.same(tick.bans.lifted.sort(), [k1.id, k2.id].sort());
  s = await settled('prod.chat');
  t.equal(s.available, true);
  t.same(s.candidates[0].key_count, 2);
  t.equal(s.candidates[0].key_weight, 5);
  t.equal((await req('GET', `/admin/api-keys/${k2.id}`)).json.ban_until, null);

  // Namespace status travels in the snapshot.
  await req('PUT', '/admin/namespaces/prod', { status: 'suspended' });
  s = await settled('prod.chat');
  t.match(s, { namespace_status: 'suspended', available: false });
  t.equal((await req('PUT', '/admin/namespaces/nope', { status: 'active' })).status, 404);
  t.equal((await req('PUT', '/admin/namespaces/prod', { status: 'deleted' })).status, 400);
  await req('PUT', '/admin/namespaces/prod', { status: 'active' });
  const nsList = await req('GET', '/admin/namespaces');
  t.match(nsList.json, { total: 1, page: 1, limit: 50, items: [{ name: 'prod', description: 'production', status: 'active' }] });

  // Binding status, update, batch.
  const batch = await req('POST', '/admin/bindings/batch', {
    items: [
      { namespace: 'prod', public_model: 'fast', group_id: gA.id, selector_value: 'm-x', weight: 1 },
      { namespace: 'prod', public_model: 'fast', group_id: gA.id, selector_value: 'm-a', weight: 0 },
    ],
  });
  t.equal(batch.status, 201);
  t.equal(batch.json.total, 2);
  s = await settled('prod.fast');
  t.same(s.candidates.map((c: any) => c.upstream_model), ['m-x'], 'a zero-weight binding is not a candidate');
  t.match(s.capabilities, { models: ['m-a', 'm-x'], unknown_models: ['m-x'], context_window: 128000 }, 'models missing from the registry are listed and skipped');
  const badBatch = await req('POST', '/admin/bindings/batch', { items: [{ namespace: 'prod', public_model: 'z', group_id: gA.id, selector_value: 'm-a' }, { namespace: 'prod', public_model: 'z', group_id: gA.id, selector_value: 'zzz' }] });
  t.equal(badBatch.status, 400);
  t.ok('items.1.selector_value' in badBatch.json.data);
  t.equal((await req('GET', '/admin/bindings?public_model=z')).json.total, 0, 'a failed batch creates nothing');

  const bs = await req('PUT', '/admin/bindings/batch/status', { ids: [bA.json.id, 999], status: 'disabled' });
  t.same(bs.json, { updated: 1, ids: [bA.json.id], not_found: [999] });
  s = await settled('prod.chat');
  t.same(s.candidates, [], 'gb is disabled and the ga binding too');
  t.equal(s.capabilities.models.join(), 'm-b', 'capabilities only over active bindings');
  await req('PUT', '/admin/bindings/batch/status', { ids: [bA.json.id], status: 'active' });
  t.equal((await req('PUT', `/admin/bindings/${bA.json.id}`, { selector_value: 'nope' })).status, 400);
  const moved = await req('PUT', `/admin/bindings/${bA.json.id}`, { public_model: 'moved', weight: 9 });
  t.match(moved.json, { binding_key: 'prod.moved', weight: 9 });
  s = await settled('prod.moved');
  t.equal(s.candidates[0].weight, 9);
  t.same((await snapshot('prod.chat')).candidates, [], 'the old bindingKey was re-written too');
  t.equal((await req('GET', `/admin/bindings/${bA.json.id}`)).json.public_model, 'moved');
  t.equal((await req('GET', '/admin/bindings/9999')).status, 404);
  t.equal((await req('GET', `/admin/bindings?namespace=prod&group_id=${gA.id}`)).json.total, 3);

  // Deleting a referenced group: 409 listing the bindings, then force.
  const refused = await req('DELETE', `/admin/provider-groups/${gA.id}`);
  t.equal(refused.status, 409);
  t.same(refused.json.data.bindings.map((b: any) => b.binding_key).sort(), ['prod.fast', 'prod.fast', 'prod.moved']);
  const forced = await req('DELETE', `/admin/provider-groups/${gA.id}?force=true`);
  t.equal(forced.status, 200);
  t.equal(forced.json.disabled_bindings.length, 3);
  t.equal((await req('GET', `/admin/bindings/${bA.json.id}`)).json.status, 'disabled');
  s = await settled('prod.moved');
  t.same(s.candidates, []);
  t.same(await store.hgetall(`route:group:${gA.id}`), {});

  // A deleted binding takes its bindingKey's snapshot away when it was the last.
  await req('DELETE', `/admin/bindings/${bA.json.id}`);
  await eventually(async () => (await store.get('route:binding:prod.moved')) === null);
  t.equal(await store.get('route:binding:prod.moved'), null);
  t.notOk((await store.smembers('route:bindings')).includes('prod.moved'));
  t.equal((await req('DELETE', `/admin/bindings/${bA.json.id}`)).status, 404);
});

t.test('POST /admin/sync/snapshot writes everything and removes stale routing keys', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  if (!svc.usingRedis) return t.pass('needs Redis to plant stale keys');
  const req = (m: string, p: string, body?: unknown) => svc.request(m, p, { token: adminToken, body });
  const redis = new Redis(svc.config.redisUrl!);
  t.teardown(() => redis.disconnect());
  const g = (await req('POST', '/admin/provider-groups', { name: 'g', type: 'openai', base_url: 'https://a.example', models: ['m'] })).json;
  await req('POST', '/admin/api-keys', { group_id: g.id, api_key: 'secret-1' });
  await req('POST', '/admin/namespaces', { name: 'ns' });
  await req('POST', '/admin/bindings', { namespace: 'ns', public_model: 'm', group_id: g.id });
  await eventually(async () => redis.get('route:binding:ns.m'));
  await redis.set('route:binding:gone.model', '{}');
  await redis.hset('route:group:999', 'name', 'ghost');
  await redis.del(`route:group:${g.id}`, 'route:binding:ns.m');
  const before = Number(await redis.get('route:version'));

  const r = await req('POST', '/admin/sync/snapshot');
  t.equal(r.status, 200);
  t.match(r.json, { status: 'ok', groups: 1, binding_keys: 1, removed: 2, removed_binding_keys: ['gone.model'], removed_groups: [999] });
  t.ok(r.json.version > before);
  await eventually(async () => Number(await redis.get('route:version')) === r.json.version);
  t.equal(await redis.get('route:binding:gone.model'), null);
  t.equal(await redis.exists('route:group:999'), 0);
  t.equal(await redis.hget(`route:group:${g.id}`, 'name'), 'g');
  t.equal(JSON.parse((await redis.get('route:binding:ns.m'))!).version, r.json.version);
  t.equal(await redis.hget('meta:features', 'log_request_body_enabled'), 'true', 'flags are part of the full write');
  t.equal((await req('POST', '/admin/sync/snapshot', {})).status, 200);
});
