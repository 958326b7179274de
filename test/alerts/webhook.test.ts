import t from 'tap';
import { createServer, type IncomingMessage } from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { adminToken, eventually, startTestService } from '../helpers/harness.js';

// The receiving end: records every request; answers the queued statuses first, then `fallback`.
interface Received { headers: IncomingMessage['headers']; body: string }
const received: Received[] = [];
const answers: number[] = [];
let fallback = 200;
let holdMs = 0;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    const status = answers.shift() ?? fallback;
    setTimeout(() => res.writeHead(status).end('ok'), holdMs);
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

const svc = await startTestService();
t.teardown(async () => {
  await svc.stop();
  server.close();
});
const admin = { token: adminToken };
const put = (body: Record<string, unknown>) => svc.request('PUT', '/admin/logs/webhook', { ...admin, body });
const settle = () => svc.service.system.ask('log-webhook', 'settle');
const state = () => svc.service.system.ask<{ count: number; delivering: boolean; triggered: number }>('log-webhook', 'state');
const deliveries = async () => (await svc.request('GET', '/admin/logs/webhook/deliveries?limit=200', admin)).json;
const logs = async (records: Array<Record<string, unknown>>) => {
  const started = Date.now();
  const r = await svc.request('POST', '/logs', { body: records });
  t.equal(r.status, 202);
  return Date.now() - started;
};
const rec = (status_code: number, over: Record<string, unknown> = {}) => ({
  key_id: 3, master_id: 2, model: 'gpt-4o', status_code, error_message: '', request_body: '{"secret":"prompt"}', ...over,
});
const errors = (n: number) => Array.from({ length: n }, () => rec(502, { error_message: 'upstream 502' }));
const hmac = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

t.test('configuration: defaults, validation, write-only secret', async (t) => {
  const d = await svc.request('GET', '/admin/logs/webhook', admin);
  t.equal(d.status, 200);
  t.same({ ...d.json, updatedAt: undefined }, {
    enabled: false, url: '', threshold: 10, window_seconds: 60, cooldown_seconds: 300, status_code_threshold: 500,
    detect_error_message: true, secret_set: false, updatedAt: undefined,
  });
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ enabled: true }, 'url'],
    [{ url: 'ftp://example.test/x' }, 'url'],
    [{ url: 'not a url' }, 'url'],
    [{ url: 'x'.repeat(2001) }, 'url'],
    [{ threshold: -1 }, 'threshold'],
    [{ threshold: 'ten' }, 'threshold'],
    [{ window_seconds: 0 }, 'window_seconds'],
    [{ window_seconds: 86_401 }, 'window_seconds'],
    [{ cooldown_seconds: -5 }, 'cooldown_seconds'],
    [{ status_code_threshold: 300 }, 'status_code_threshold'],
    [{ status_code_threshold: 1000 }, 'status_code_threshold'],
    [{ detect_error_message: 'yes' }, 'detect_error_message'],
    [{ enabled: 1 }, 'enabled'],
    [{ secret: 's'.repeat(257) }, 'secret'],
    [{ hook: url }, 'hook'],
    [{}, '(body)'],
    [{ enabled: true, url, status_code_threshold: 0, detect_error_message: false }, 'status_code_threshold'],
  ];
  for (const [body, field] of bad) {
    const r = await put(body);
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 60));
    t.ok(r.json.data[field], `names ${field}: ${JSON.stringify(r.json.data)}`);
  }
  t.equal((await svc.request('GET', '/admin/logs/webhook', admin)).json.enabled, false, 'nothing changed');
  const ok = await put({ enabled: true, url, threshold: 2, window_seconds: 60, cooldown_seconds: 60, secret: 'top-secret' });
  t.equal(ok.status, 200);
  t.match(ok.json, { enabled: true, url, threshold: 2, window_seconds: 60, cooldown_seconds: 60, status_code_threshold: 500, detect_error_message: true, secret_set: true });
  t.notOk('secret' in ok.json, 'the secret is never returned');
  const again = await svc.request('GET', '/admin/logs/webhook', admin);
  t.notOk(again.text.includes('top-secret'));
  t.equal(again.json.secret_set, true);
  t.equal((await svc.request('GET', '/admin/logs/webhook')).status, 401);
  t.equal((await svc.request('GET', '/admin/logs/webhook/deliveries?limit=0', admin)).status, 400);
});

t.test('errors past the threshold in the window: one signed POST with a sample; cooldown respected', async (t) => {
  await logs([rec(502), rec(503), rec(200), rec(404)]);
  t.equal((await state()).count, 2, '5xx count (status >= 500); a 404 without message does not');
  t.equal(received.length, 0, 'not above the threshold yet');
  await logs([rec(429, { error_message: 'rate limited by upstream', client_ip: '10.0.0.9', note: 'not stored', updatedAt: 'x' })]);
  await settle();
  t.equal(received.length, 1);
  const { headers, body } = received[0]!;
  t.equal(headers['content-type'], 'application/json');
  t.equal(headers['x-signature'], hmac('top-secret', body), 'signature verifies against the raw body');
  const p = JSON.parse(body);
  t.same(Object.keys(p).sort(), ['count', 'event', 'sample', 'threshold', 'triggered_at', 'window_seconds']);
  t.match(p, { event: 'log_errors', count: 3, threshold: 2, window_seconds: 60 });
  t.ok(Math.abs(Date.parse(p.triggered_at) - svc.service.clock.now()) < 5000);
  t.match(p.sample, { key_id: 3, master_id: 2, model: 'gpt-4o', status_code: 429, error_message: 'rate limited by upstream', client_ip: '10.0.0.9' });
  t.type(p.sample.id, 'number');
  t.match(p.sample.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.notOk('request_body' in p.sample, 'bodies stay out of notifications');
  t.notOk('note' in p.sample || 'updatedAt' in p.sample || 'created_at' in p.sample, 'only stored fields, as stored');

  // Still above the threshold, but within the cooldown: nothing more is sent.
  await logs(errors(10));
  await settle();
  t.equal(received.length, 1);
  t.equal((await state()).count, 13);
  const d = await deliveries();
  t.equal(d.total, 1);
  t.match(d.items[0], { attempt: 1, ok: true, status_code: 200, error: '', url, count: 3 });

  // After the cooldown (and the window) the next burst is sent again.
  svc.service.clock.advance(61_000);
  await logs(errors(2));
  await settle();
  t.equal(received.length, 1, 'the old errors left the window: 2 is not above 2');
  await logs(errors(1));
  await settle();
  t.equal(received.length, 2);
  t.equal(JSON.parse(received[1]!.body).count, 3);
});

t.test('a 500 is retried with backoff, every attempt recorded; a 4xx is not retried', async (t) => {
  await put({ cooldown_seconds: 0, threshold: 0 }); // a changed configuration starts a fresh window
  received.length = 0;
  answers.push(500);
  await logs(errors(1));
  await settle();
  t.equal(received.length, 2, 'one retry');
  t.equal(received[0]!.body, received[1]!.body, 'the same payload');
  t.equal(received[1]!.headers['x-signature'], hmac('top-secret', received[1]!.body));
  const d = await deliveries();
  t.match(d.items[0], { attempt: 2, ok: true, status_code: 200 });
  t.match(d.items[1], { attempt: 1, ok: false, status_code: 500, error: 'HTTP 500', trigger_id: d.items[0].trigger_id });
  t.ok(Date.parse(d.items[0].createdAt) >= Date.parse(d.items[1].createdAt));

  received.length = 0;
  answers.push(400);
  await logs(errors(1));
  await settle();
  t.equal(received.length, 1, 'no retry on 400');
  t.match((await deliveries()).items[0], { attempt: 1, ok: false, status_code: 400, error: 'HTTP 400' });

  received.length = 0;
  answers.push(503, 503, 503);
  await logs(errors(1));
  await settle();
  t.equal(received.length, 3, 'three attempts at most');
  t.same((await deliveries()).items.slice(0, 3).map((x: any) => [x.attempt, x.status_code]), [[3, 503], [2, 503], [1, 503]]);
});

t.test('network errors are retried; ingestion never waits for a delivery', async (t) => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/gone`;
  await new Promise<void>((r) => closed.close(() => r()));
  await put({ url: deadUrl, secret: null });
  await logs(errors(1));
  await settle();
  const d = (await deliveries()).items.slice(0, 3);
  t.same(d.map((x: any) => [x.attempt, x.ok, x.status_code, x.url]), [[3, false, null, deadUrl], [2, false, null, deadUrl], [1, false, null, deadUrl]]);
  t.equal(d[0].error, 'ECONNREFUSED');

  await put({ url });
  t.equal((await svc.request('GET', '/admin/logs/webhook', admin)).json.secret_set, false, 'secret removed');
  received.length = 0;
  holdMs = 1500;
  const ms = await logs(errors(1));
  t.ok(ms < 1000, `POST /logs answered in ${ms} ms while the webhook takes 1.5 s`);
  t.equal((await state()).delivering, true);
  const more = await logs(errors(5));
  t.ok(more < 1000, 'later ingests are not held either');
  await settle();
  holdMs = 0;
  t.equal(received.length, 1, 'one delivery at a time: triggers while one is in flight are skipped');
  t.notOk('x-signature' in received[0]!.headers, 'unsigned without a secret');
});

t.test('disabled: nothing is sent; the delivery log keeps the latest 100 attempts', async (t) => {
  for (let i = 0; i < 100; i++) {
    await logs(errors(1));
    await settle();
  }
  const d = await deliveries();
  t.equal(d.total, 100);
  t.equal(d.items.length, 100);
  const ids = d.items.map((x: any) => x.id);
  t.same(ids, [...ids].sort((a: number, b: number) => b - a), 'newest first');
  const paged = (await svc.request('GET', '/admin/logs/webhook/deliveries?page=2&limit=30', admin)).json;
  t.same([paged.total, paged.page, paged.limit, paged.items[0].id], [100, 2, 30, ids[30]]);

  await put({ enabled: false });
  received.length = 0;
  await logs(errors(20));
  await settle();
  t.equal(received.length, 0);
  t.equal((await state()).count, 0);
});
