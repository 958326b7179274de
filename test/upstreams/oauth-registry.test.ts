import t from 'tap';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminToken, eventually, startTestService } from '../helpers/harness.js';

/** A local HTTP server answering with `handler`; returns its base URL. */
async function serve(t: any, handler: (req: IncomingMessage, body: string) => { status: number; body: unknown }): Promise<string> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const out = handler(req, body);
      res.writeHead(out.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

t.test('OAuth refresh: due tokens are exchanged, failures disable the key', async (t) => {
  const seen: Array<Record<string, string>> = [];
  const provider = await serve(t, (req, body) => {
    const form = Object.fromEntries(new URLSearchParams(body));
    seen.push({ path: req.url!, ...form });
    if (form.refresh_token === 'rt-good' || form.refresh_token === 'rt-rotated') return { status: 200, body: { access_token: 'at-new', refresh_token: 'rt-rotated', expires_in: 3600 } };
    return { status: 400, body: { error: 'invalid_grant' } };
  });
  const svc = await startTestService({ env: { SVC_OAUTH_TOKEN_URLS: `anthropic_oauth=${provider}/anthropic/token, gemini_oauth=${provider}/gemini/token,openai_oauth=http://127.0.0.1:1/token` } });
  t.teardown(() => svc.stop());
  const req = (m: string, p: string, body?: unknown) => svc.request(m, p, { token: adminToken, body });
  const store = svc.service.context.store;
  const now = svc.service.clock.now();
  const ga = (await req('POST', '/admin/provider-groups', { name: 'an', type: 'anthropic_oauth', base_url: 'https://api.anthropic.com' })).json;
  const gg = (await req('POST', '/admin/provider-groups', { name: 'ge', type: 'gemini_oauth', base_url: 'https://g.example' })).json;
  const gp = (await req('POST', '/admin/provider-groups', { name: 'plain', type: 'openai', base_url: 'https://o.example' })).json;
  const soon = new Date(now + 5 * 60_000).toISOString();
  const good = (await req('POST', '/admin/api-keys', { group_id: ga.id, access_token: 'at-old', refresh_token: 'rt-good', expires_at: soon })).json;
  const bad = (await req('POST', '/admin/api-keys', { group_id: gg.id, access_token: 'at-x', refresh_token: 'rt-bad', expires_at: soon })).json;
  const later = (await req('POST', '/admin/api-keys', { group_id: ga.id, access_token: 'at-l', refresh_token: 'rt-good', expires_at: new Date(now + 3600_000).toISOString() })).json;
  await req('POST', '/admin/api-keys', { group_id: gp.id, api_key: 'k', refresh_token: 'rt-good', expires_at: soon });

  const tick = await svc.service.system.ask<any>('upstream-jobs', 'tick');
  t.same(tick.oauth, { refreshed: [good.id], failed: [bad.id] }, 'only OAuth kinds expiring within 10 minutes');
  t.same(seen.map((s) => s.path).sort(), ['/anthropic/token', '/gemini/token'], 'each type at its own token endpoint');
  t.match(seen.find((s) => s.path === '/anthropic/token'), { grant_type: 'refresh_token', refresh_token: 'rt-good' });

  const g = (await req('GET', `/admin/api-keys/${good.id}`)).json;
  t.match(g, { status: 'active', access_token: 'at-new', refresh_token: 'rt-rotated' });
  t.ok(Math.abs(Date.parse(g.expires_at) - (svc.service.clock.now() + 3600_000)) < 5000);
  const b = (await req('GET', `/admin/api-keys/${bad.id}`)).json;
  t.match(b, { status: 'auto_disabled', ban_reason: 'oauth refresh failed: HTTP 400', access_token: 'at-x' });
  t.equal((await req('GET', `/admin/api-keys/${later.id}`)).json.access_token, 'at-l', 'not due yet');

  const entry = await eventually(async () => (await store.hget(`route:group:${ga.id}:keys`, String(good.id))) ?? '');
  t.match(JSON.parse(entry), { access_token: 'at-new', expires_at: Math.floor(Date.parse(g.expires_at) / 1000) }, 'the DP sees the new token, expiry in Unix seconds');
  t.same(await store.hgetall(`route:group:${gg.id}:keys`), {}, 'the disabled key left the tables');

  // An hour later both anthropic keys are due (the rotated refresh token is used); an unreachable provider disables its key.
  const go = (await req('POST', '/admin/provider-groups', { name: 'oo', type: 'openai_oauth', base_url: 'https://o.example' })).json;
  const down = (await req('POST', '/admin/api-keys', { group_id: go.id, refresh_token: 'rt-any' })).json;
  svc.service.clock.advance(55 * 60_000);
  const second = await svc.service.system.ask<any>('upstream-jobs', 'tick');
  t.same(second.oauth.refreshed.sort(), [good.id, later.id].sort(), 'both keys come due an hour later');
  t.same(second.oauth.failed, [down.id], 'a key without expires_at is refreshed at once');
  t.equal(seen.at(-1)!.refresh_token === 'rt-rotated' || seen.at(-2)!.refresh_token === 'rt-rotated', true, 'the rotated refresh token is used');
  t.match((await req('GET', `/admin/api-keys/${down.id}`)).json, { status: 'auto_disabled', ban_reason: 'oauth refresh failed: unreachable' });
  const again = await svc.service.system.ask<any>('upstream-jobs', 'tick');
  t.same(again.oauth, { refreshed: [], failed: [] }, 'nothing due right after a refresh');
});

t.test('model registry: refresh, status, check, rollback, capabilities follow', async (t) => {
  let payload: unknown = {
    version: 'v1',
    models: [
      { name: 'reg-a', kind: 'chat', context_window: 100000, max_output_tokens: 4000, cost_per_token: 0.5, supports_vision: true, supports_functions: true },
      { name: 'reg-b', kind: 'embedding', context_window: 8000 },
    ],
  };
  let status = 200;
  const refs: string[] = [];
  const registry = await serve(t, (req) => {
    refs.push(new URL(req.url!, 'http://x').searchParams.get('ref') ?? '');
    return { status, body: payload };
  });
  const svc = await startTestService({ env: { SVC_MODEL_REGISTRY_URL: `${registry}/registry.json` } });
  t.teardown(() => svc.stop());
  const req = (m: string, p: string, body?: unknown) => svc.request(m, p, { token: adminToken, body });
  const store = svc.service.context.store;

  const empty = await req('GET', '/admin/model-registry/status');
  t.match(empty.json, { configured: true, current: null, previous: null, refreshes: 0, registry_models: 0 });
  t.equal((await req('POST', '/admin/model-registry/rollback')).status, 409, 'nothing to roll back to');

  const g = (await req('POST', '/admin/provider-groups', { name: 'g', type: 'openai', base_url: 'https://a.example', models: ['reg-a', 'custom'] })).json;
  await req('POST', '/admin/api-keys', { group_id: g.id, api_key: 'k-1' });
  await req('POST', '/admin/namespaces', { name: 'ns' });
  await req('POST', '/admin/bindings', { namespace: 'ns', public_model: 'reg-a', group_id: g.id });
  await req('POST', '/admin/models', { name: 'admin-only', context_window: 5 });

  const r1 = await req('POST', '/admin/model-registry/refresh', { ref: 'v1-tag' });
  t.equal(r1.status, 200);
  t.match(r1.json, { current: { ref: 'v1-tag', version: 'v1', models: 2 }, previous: null, refreshes: 1, registry_models: 2, total_models: 3 });
  t.same(refs, ['v1-tag'], 'the ref is passed to the registry');
  const models = (await req('GET', '/admin/models')).json;
  t.match(models.find((m: any) => m.name === 'reg-b'), { kind: 'embedding', context_window: 8000, source: 'registry', supports_vision: false });
  const snap = async () => JSON.parse((await store.get('route:binding:ns.reg-a')) ?? 'null');
  await eventually(async () => (await snap())?.capabilities?.context_window === 100000);
  t.match((await snap()).capabilities, { context_window: 100000, supports_vision: true, cost_per_token: 0.5 }, 'a refresh re-synchronizes bindings');

  const check = await req('POST', '/admin/model-registry/check');
  t.same(check.json, { ok: false, groups: [{ id: g.id, name: 'g', models: 2, unknown_models: ['custom'] }], unknown_models: ['custom'], unserved_models: ['admin-only', 'reg-b'] });

  payload = { version: 'v2', models: [{ name: 'reg-a', context_window: 50000 }, { name: 'reg-c', kind: 'rerank' }] };
  const r2 = await req('POST', '/admin/model-registry/refresh', { ref: 'v2-tag' });
  t.match(r2.json, { current: { ref: 'v2-tag', version: 'v2' }, previous: { ref: 'v1-tag' }, registry_models: 2 });
  const names = (await req('GET', '/admin/models')).json.map((m: any) => m.name).sort();
  t.same(names, ['admin-only', 'reg-a', 'reg-c'], 'registry models gone from the registry are removed; admin ones stay');
  await eventually(async () => (await snap())?.capabilities?.context_window === 50000);
  t.equal((await snap()).capabilities.context_window, 50000);

  const rb = await req('POST', '/admin/model-registry/rollback');
  t.equal(rb.status, 200);
  t.match(rb.json, { current: { ref: 'v1-tag' }, previous: null, refreshes: 1 });
  t.same((await req('GET', '/admin/models')).json.map((m: any) => m.name).sort(), ['admin-only', 'reg-a', 'reg-b']);
  await eventually(async () => (await snap())?.capabilities?.context_window === 100000);
  t.equal((await snap()).capabilities.context_window, 100000, 'the rollback re-synchronizes too');
  t.equal((await req('POST', '/admin/model-registry/rollback')).status, 409);

  // Bad registry answers change nothing.
  payload = { models: [{ name: 'x', kind: 'video' }] };
  const invalid = await req('POST', '/admin/model-registry/refresh', { ref: 'bad' });
  t.equal(invalid.status, 502);
  t.equal(invalid.json.code, 'unavailable');
  payload = { models: [{ name: 'x' }, { name: 'x' }] };
  t.equal((await req('POST', '/admin/model-registry/refresh', {})).status, 502, 'duplicate names');
  t.equal(refs.at(-1), 'main', 'ref defaults to main');
  status = 500;
  t.equal((await req('POST', '/admin/model-registry/refresh', { ref: 'x' })).status, 502);
  t.equal((await req('POST', '/admin/model-registry/refresh', { ref: 5 })).status, 400);
  t.equal((await req('GET', '/admin/model-registry/status')).json.refreshes, 1);
});

t.test('model registry without a source, and model CRUD rules', async (t) => {
  const svc = await startTestService({ env: { SVC_MODEL_REGISTRY_URL: 'http://127.0.0.1:1/reg' } });
  t.teardown(() => svc.stop());
  const req = (m: string, p: string, body?: unknown) => svc.request(m, p, { token: adminToken, body });
  t.equal((await req('POST', '/admin/model-registry/refresh', { ref: 'a' })).status, 503, 'unreachable registry');

  const m = await req('POST', '/admin/models', { name: 'gpt', context_window: 128000, max_output_tokens: 16000, cost_per_token: 0.00001, supports_fim: true, supports_functions: true, supports_tool_choice: true, supports_vision: false });
  t.equal(m.status, 201);
  t.match(m.json, { name: 'gpt', kind: 'chat', context_window: 128000, cost_per_token: 0.00001, supports_fim: true, source: 'admin', deletedAt: { time: null, valid: false } });
  const bad = [
    [{ context_window: 1 }, 'name'],
    [{ name: 'x', kind: 'video' }, 'kind'],
    [{ name: 'x', context_window: -1 }, 'context_window'],
    [{ name: 'x', context_window: 'big' }, 'context_window'],
    [{ name: 'x', cost_per_token: -0.1 }, 'cost_per_token'],
    [{ name: 'x', supports_vision: 'yes' }, 'supports_vision'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 'x', id: 5 }, 'id'],
  ] as const;
  for (const [body, field] of bad) {
    const r = await req('POST', '/admin/models', body);
    t.equal(r.status, 400, `400 for ${field}`);
    t.ok(field in r.json.data, `data names ${field}: ${JSON.stringify(r.json.data)}`);
  }
  t.equal((await req('POST', '/admin/models', { name: 'gpt' })).status, 409);
  t.equal((await req('PUT', '/admin/models/9999', { context_window: 1 })).status, 404);
  t.equal((await req('PUT', `/admin/models/${m.json.id}`, { kind: 'nope' })).status, 400);
  const up = await req('PUT', `/admin/models/${m.json.id}`, { kind: 'completion', context_window: 1000 });
  t.match(up.json, { kind: 'completion', context_window: 1000, supports_fim: true });
  t.equal((await req('GET', '/admin/models')).json.length, 1);
  t.equal((await req('GET', `/admin/models/${m.json.id}`)).json.name, 'gpt');
  t.same((await req('DELETE', `/admin/models/${m.json.id}`)).json, { id: m.json.id, deleted: true });
  t.equal((await req('DELETE', `/admin/models/${m.json.id}`)).status, 404);
  t.equal((await req('GET', `/admin/models/${m.json.id}`)).status, 404);
  t.equal((await req('POST', '/admin/models', { name: 'gpt' })).status, 201, 'the name is free again');
});
