import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
const admin = { token: adminToken };

t.test('GET /health reports every store up, with an uptime duration', async (t) => {
  const r = await svc.request('GET', '/health');
  t.equal(r.status, 200);
  t.match(r.json, { status: 'ok', database: 'up', store: 'up', clickhouse: 'up' });
  t.match(r.json.uptime, /^(\d+h)?(\d+m)?\d+s$/);
  t.equal(r.headers.get('content-type'), 'application/json');
});

t.test('GET /status and /about carry the version and repository', async (t) => {
  const s = await svc.request('GET', '/status');
  t.equal(s.status, 200);
  t.equal(s.json.status, 'ok');
  t.equal(s.json.version, svc.service.build.version);
  t.match(s.json.version, /^\d+\.\d+\.\d+/);
  const a = await svc.request('GET', '/about');
  t.equal(a.json.name, 'gateway-control-plane');
  t.type(a.json.repository, 'string');
  t.ok(a.json.repository.length > 0);
});

t.test('X-Request-ID is generated, or kept when the caller sends one', async (t) => {
  const gen = await svc.request('GET', '/status');
  t.match(gen.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  const kept = await svc.request('GET', '/status', { headers: { 'x-request-id': 'caller-abc-123' } });
  t.equal(kept.headers.get('x-request-id'), 'caller-abc-123');
  const err = await svc.request('GET', '/nope', { headers: { 'x-request-id': 'caller-err-1' } });
  t.equal(err.json.request_id, 'caller-err-1', 'errors carry it in the envelope too');
});

t.test('unknown route: 404 in the envelope', async (t) => {
  const r = await svc.request('GET', '/no/such/route');
  t.equal(r.status, 404);
  t.same(Object.keys(r.json).sort(), ['code', 'data', 'message', 'request_id']);
  t.equal(r.json.code, 'not_found');
});

t.test('wrong method on a known path: 405 with Allow', async (t) => {
  const r = await svc.request('DELETE', '/status');
  t.equal(r.status, 405);
  t.equal(r.headers.get('allow'), 'GET');
  t.equal(r.json.code, 'bad_request');
  t.same(r.json.data.allowed, ['GET']);
});

t.test('admin routes: missing, malformed and wrong tokens are 401; the right one passes', async (t) => {
  for (const headers of [{} as Record<string, string>, { authorization: 'Basic abc' }, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${adminToken}x` }]) {
    const r = await svc.request('GET', '/admin/features', { headers });
    t.equal(r.status, 401, JSON.stringify(headers));
    t.equal(r.json.code, 'unauthorized');
  }
  const ok = await svc.request('GET', '/admin/features', admin);
  t.equal(ok.status, 200);
});

t.test('invalid JSON is 400; wrong types name the field', async (t) => {
  const bad = await svc.request('PUT', '/admin/features', { ...admin, rawBody: '{"log_retention_days": ', headers: { 'content-type': 'application/json' } });
  t.equal(bad.status, 400);
  t.equal(bad.json.code, 'bad_request');
  t.match(bad.json.message, /invalid JSON/);
  const typed = await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 'ten', dp_proto_cross_upstream: 'yes' } });
  t.equal(typed.status, 400);
  t.ok(typed.json.data.log_retention_days);
  t.ok(typed.json.data.dp_proto_cross_upstream);
});

t.test('bodies over 1 MiB are 413', async (t) => {
  const big = JSON.stringify({ dp_state_store_backend: 'x'.repeat(1024 * 1024 + 10) });
  const r = await svc.request('PUT', '/admin/features', { ...admin, rawBody: big, headers: { 'content-type': 'application/json' } });
  t.equal(r.status, 413);
  t.equal(r.json.code, 'payload_too_large');
  const after = await svc.request('GET', '/status');
  t.equal(after.status, 200, 'the server goes on serving');
});

t.test('feature flags: defaults, typed updates, log overrides in their own keys, 0 clears', async (t) => {
  const get = await svc.request('GET', '/admin/features', admin);
  t.same(get.json, {
    dp_state_store_backend: 'memory',
    dp_proto_cross_upstream: true,
    log_request_body_enabled: true,
    log_retention_days: 30,
    log_max_records: 1000000,
    log_body_retention_days: 30,
  });
  const put = await svc.request('PUT', '/admin/features', {
    ...admin,
    body: { dp_state_store_backend: 'redis', log_request_body_enabled: false, log_retention_days: 7, log_max_records: 5000 },
  });
  t.equal(put.status, 200);
  t.match(put.json, { dp_state_store_backend: 'redis', log_request_body_enabled: false, log_retention_days: 7, log_max_records: 5000 });
  const store = svc.service.context.store;
  t.same(await store.hgetall('meta:features'), {
    dp_state_store_backend: 'redis',
    dp_proto_cross_upstream: 'true',
    log_request_body_enabled: 'false',
    log_body_retention_days: '7',
  });
  t.equal(await store.get('meta:log:retention_days'), '7');
  t.equal(await store.get('meta:log:max_records'), '5000');

  const cleared = await svc.request('PUT', '/admin/features', { ...admin, body: { log_retention_days: 0 } });
  t.equal(cleared.json.log_retention_days, 30, 'back to the default');
  t.equal(cleared.json.log_max_records, 5000, 'the other override stays');
  t.equal(cleared.json.log_body_retention_days, 30, 'bodies follow the retention unless overridden');
  const body = await svc.request('PUT', '/admin/features', { ...admin, body: { log_body_retention_days: 3 } });
  t.equal(body.json.log_body_retention_days, 3);
  const capped = await svc.request('PUT', '/admin/features', { ...admin, body: { log_body_retention_days: 90 } });
  t.equal(capped.json.log_body_retention_days, 30, 'bodies never outlive their records');
  await svc.request('PUT', '/admin/features', { ...admin, body: { log_body_retention_days: 0 } });
  t.equal(await store.get('meta:log:retention_days'), null);
  t.equal((await svc.request('GET', '/admin/features', admin)).json.log_retention_days, 30);
});

t.test('feature flags: unknown flag, wrong type, negative value, empty body are 400', async (t) => {
  for (const body of [{ no_such_flag: true }, { log_request_body_enabled: 'false' }, { log_max_records: -1 }, {}, { dp_state_store_backend: 'etcd' }]) {
    const r = await svc.request('PUT', '/admin/features', { ...admin, body });
    t.equal(r.status, 400, JSON.stringify(body));
    t.equal(r.json.code, 'bad_request');
  }
  const unknown = await svc.request('PUT', '/admin/features', { ...admin, body: { no_such_flag: 1 } });
  t.ok(unknown.json.data.no_such_flag, 'names the unknown flag');
});

t.test('a flag change is announced on the config channel', async (t) => {
  const messages: string[] = [];
  const unsubscribe = await svc.service.context.store.subscribe('gateway:config', (m) => messages.push(m));
  await svc.request('PUT', '/admin/features', { ...admin, body: { dp_proto_cross_upstream: false } });
  const deadline = Date.now() + 3000;
  while (messages.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await unsubscribe();
  t.equal(messages.length, 1);
  t.equal(JSON.parse(messages[0]!).kind, 'features');
});

t.test('swagger: the page, its assets and an OpenAPI 3.1 document of every route', async (t) => {
  const page = await svc.request('GET', '/swagger/index.html');
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /text\/html/);
  t.match(page.text, /swagger-ui-bundle\.js/);
  t.notMatch(page.text, /https?:\/\//, 'no CDN');
  const bundle = await svc.request('GET', '/swagger/swagger-ui-bundle.js');
  t.equal(bundle.status, 200);
  t.ok(bundle.text.length > 100_000);
  t.equal((await svc.request('GET', '/swagger/../../etc/passwd')).status, 404);
  const doc = await svc.request('GET', '/swagger/doc.json');
  t.equal(doc.json.openapi, '3.1.0');
  for (const [path, method] of [['/health', 'get'], ['/admin/features', 'put'], ['/swagger/doc.json', 'get']] as const) {
    t.ok(doc.json.paths[path]?.[method], `${method} ${path} documented`);
  }
  t.ok(doc.json.paths['/admin/features'].put.requestBody, 'request schema documented');
  t.same(doc.json.paths['/admin/features'].get.security, [{ AdminAuth: [] }]);
});

t.test('swagger: nothing on the page is fetched from another origin (no validator badge, no external $ref)', async (t) => {
  const init = await svc.request('GET', '/swagger/swagger-init.js');
  t.equal(init.status, 200);
  t.match(init.text, /validatorUrl: null/, 'the public validator badge is off');
  t.notMatch(init.text, /https?:\/\//);
  for (const css of ['swagger-ui.css', 'index.css']) {
    const r = await svc.request('GET', `/swagger/${css}`);
    t.equal(r.status, 200);
    t.notMatch(r.text, /(url\(\s*["']?https?:|@import)/, `${css} loads nothing from elsewhere`);
  }
  const doc = await svc.request('GET', '/swagger/doc.json');
  t.notMatch(doc.text, /"\$ref":"https?:/, 'every $ref is local');
});

t.test('the store and database are what the service says they are', async (t) => {
  t.equal(svc.service.context.store.kind, svc.usingRedis ? 'redis' : 'memory');
  t.equal(svc.service.context.database.embedded, !svc.usingPostgres);
});
