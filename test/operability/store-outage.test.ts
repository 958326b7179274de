/**
 * A store that cannot be reached answers 503 `unavailable` with Retry-After
 * and the store's name, never 500: Postgres and Redis each behind a TCP proxy
 * the test stops, ClickHouse over HTTP (@clickhouse/client) at a closed port.
 */
import t, { type Test } from 'tap';
import net from 'node:net';
import http from 'node:http';
import { adminToken, eventually, freshDatabase, postgresAvailable, redisAvailable, startTestService, type TestResponse } from '../helpers/harness.js';

const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15';

/** Forwards connections on a local port to `target`; stop() refuses new ones and cuts the open ones, start() listens again. */
async function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const start = async (): Promise<void> => {
    server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      }
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  };
  const stop = async (): Promise<void> => {
    if (!server?.listening) return;
    const closed = new Promise((resolve) => server!.close(resolve));
    for (const s of sockets) s.destroy();
    await closed;
  };
  await start();
  return { port: () => port, start, stop };
}

function assertOutage(t: Test, r: TestResponse, store: string, what: string): void {
  t.equal(r.status, 503, `${what}: 503 (${r.text})`);
  t.equal(r.json?.code, 'unavailable', `${what}: unavailable`);
  t.same(r.json?.data, { store }, `${what}: names ${store}`);
  t.ok(Number(r.headers.get('retry-after')) > 0, `${what}: Retry-After`);
  t.ok(r.json?.request_id, `${what}: request id`);
}

t.test('Postgres unreachable: admin writes and reads answer 503 naming postgres; ingestion goes on', async (t) => {
  if (!(await postgresAvailable())) return t.plan(0, 'needs the real Postgres');
  const db = await freshDatabase();
  t.teardown(() => db.drop());
  const proxy = await tcpProxy({ host: '127.0.0.1', port: 5432 });
  const url = new URL(db.url);
  url.port = String(proxy.port());
  const svc = await startTestService({ databaseUrl: url.toString() });
  t.teardown(async () => {
    await svc.stop();
    await proxy.stop(); // a listening proxy would keep the test process alive
  });
  const admin = { token: adminToken };
  const m = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'before', group: 'default' } });
  t.equal(m.status, 201, m.text);

  await proxy.stop();
  assertOutage(t, await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'during', group: 'default' } }), 'postgres', 'create master');
  assertOutage(t, await svc.request('PUT', `/admin/masters/${m.json.id}`, { ...admin, body: { name: 'renamed' } }), 'postgres', 'update master');
  assertOutage(t, await svc.request('POST', '/admin/provider-groups', { ...admin, body: { name: 'g', type: 'openai', base_url: 'https://a.example' } }), 'postgres', 'create group');
  assertOutage(t, await svc.request('POST', '/admin/models', { ...admin, body: { name: 'm1', context_window: 1000 } }), 'postgres', 'create model');
  assertOutage(t, await svc.request('GET', '/admin/masters', admin), 'postgres', 'list masters');
  assertOutage(t, await svc.request('GET', '/auth/whoami', { token: m.json.master_key }), 'postgres', 'whoami with a master key');
  t.equal((await svc.request('POST', '/logs', { body: { key_id: 1, master_id: 1, status_code: 200 } })).status, 202, 'ingestion does not need Postgres');

  await proxy.start();
  const back = await eventually(async () => (await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'after', group: 'default' } })).status === 201, 10_000, 200);
  t.ok(back, 'writes succeed again once Postgres is back');
  const names = (await svc.request('GET', '/admin/masters', admin)).json.items.map((x: { name: string }) => x.name);
  t.same(names.sort(), ['after', 'before'], 'nothing refused was written');
});

t.test('Redis unreachable: a child-key lookup answers 503 naming redis; admin writes wait in the outbox', async (t) => {
  if (!(await postgresAvailable()) || !(await redisAvailable())) return t.plan(0, 'needs the real Postgres and Redis');
  const target = new URL(redisUrl);
  const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const viaProxy = new URL(redisUrl);
  viaProxy.port = String(proxy.port());
  const svc = await startTestService({ env: { SVC_REDIS_URL: viaProxy.toString(), SVC_IDENTITY_CACHE_MS: '0' } });
  t.teardown(async () => {
    await svc.stop();
    await proxy.stop();
  });
  const admin = { token: adminToken };
  const m = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'r', group: 'default' } });
  const k = await svc.request('POST', `/admin/masters/${m.json.id}/keys`, { ...admin, body: { name: 'k' } });
  t.equal(k.status, 201, k.text);
  t.ok(await eventually(async () => (await svc.request('GET', '/auth/whoami', { token: k.json.key_secret })).status === 200, 5000), 'the key works');

  await proxy.stop();
  assertOutage(t, await svc.request('GET', '/auth/whoami', { token: k.json.key_secret }), 'redis', 'whoami with a child key');
  t.equal((await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'queued', group: 'default' } })).status, 201, 'admin writes go on (delivered later by the outbox)');

  await proxy.start();
  t.ok(await eventually(async () => (await svc.request('GET', '/auth/whoami', { token: k.json.key_secret })).status === 200, 10_000, 200), 'answers again once Redis is back');
});

t.test('ClickHouse unreachable (HTTP): a log read answers 503 naming clickhouse', async (t) => {
  // The service starts against a stand-in that acknowledges its migrations, which is then closed:
  // from then on @clickhouse/client meets a closed port, as with a server that went away.
  const standIn = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(''));
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  const port = (standIn.address() as net.AddressInfo).port;
  const svc = await startTestService({ env: { SVC_CLICKHOUSE_URL: `http://127.0.0.1:${port}` } });
  t.teardown(() => svc.stop());
  await new Promise((resolve) => {
    standIn.close(resolve);
    standIn.closeAllConnections();
  });
  const admin = { token: adminToken };
  assertOutage(t, await svc.request('GET', '/admin/logs', admin), 'clickhouse', 'admin log list');
  assertOutage(t, await svc.request('GET', '/admin/audit', admin), 'clickhouse', 'audit trail');
  t.equal((await svc.request('GET', '/admin/masters', admin)).status, 200, 'what does not need ClickHouse answers');
});
