import t, { type Test } from 'tap';
import { adminToken, internalToken, startTestService } from '../helpers/harness.js';

const svc = await startTestService();
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const internal = (body: unknown) => svc.request('POST', '/internal/alerts/report', { headers: { 'x-internal-token': internalToken }, body });
const create = (body: Record<string, unknown>) => svc.request('POST', '/admin/alerts', { ...admin, body });
const act = (id: number, op: string) => svc.request('POST', `/admin/alerts/${id}/${op}`, admin);
const T0 = Date.parse('2031-03-01T12:00:00.000Z');
svc.service.clock.set(T0);
/** The clock keeps running after set(): a time written by the service is within a few seconds of it. */
const near = (t: Test, iso: string, expected: number, what = 'time from the service clock') =>
  t.ok(Math.abs(Date.parse(iso) - expected) < 5000, `${what}: ${iso} near ${new Date(expected).toISOString()}`);

t.test('create, read, list with filters and pagination', async (t) => {
  const a = await create({ type: 'custom', severity: 'info', message: 'disk almost full', metadata: { disk: '/var', pct: 91 }, fingerprint: 'disk:/var', master_id: 4 });
  t.equal(a.status, 201);
  t.match(a.json, {
    type: 'custom', severity: 'info', status: 'active', fingerprint: 'disk:/var', message: 'disk almost full',
    metadata: { disk: '/var', pct: 91 }, master_id: 4, source: 'admin', occurrences: 1,
    acknowledged_at: null, resolved_at: null, dismissed_at: null,
  });
  near(t, a.json.createdAt, T0, 'created at the service clock');
  t.equal(a.json.updatedAt, a.json.createdAt);
  t.equal(a.json.last_seen_at, a.json.createdAt);

  const noFp = await create({ type: 'error_rate', severity: 'critical', message: 'errors up' });
  t.equal(noFp.status, 201);
  t.match(noFp.json.fingerprint, /^admin:[0-9a-f-]{36}$/, 'a unique fingerprint is generated');
  t.same(noFp.json.metadata, {});
  t.equal(noFp.json.master_id, null);
  for (let i = 0; i < 3; i++) t.equal((await create({ type: 'upstream_failure', severity: 'warning', message: `upstream ${i}` })).status, 201);

  const one = await svc.request('GET', `/admin/alerts/${a.json.id}`, admin);
  t.same(one.json, a.json);
  t.equal((await svc.request('GET', '/admin/alerts/999999', admin)).status, 404);
  t.equal((await svc.request('GET', '/admin/alerts/abc', admin)).status, 400);

  const all = await svc.request('GET', '/admin/alerts', admin);
  t.equal(all.json.total, 5);
  t.equal(all.json.page, 1);
  t.equal(all.json.limit, 50);
  const warn = await svc.request('GET', '/admin/alerts?severity=warning&limit=2&page=2', admin);
  t.equal(warn.json.total, 3);
  t.equal(warn.json.items.length, 1);
  t.same([warn.json.page, warn.json.limit], [2, 2]);
  t.equal((await svc.request('GET', '/admin/alerts?type=custom', admin)).json.items[0].id, a.json.id);
  t.equal((await svc.request('GET', '/admin/alerts?type=error_rate&severity=critical', admin)).json.total, 1);
  t.equal((await svc.request('GET', '/admin/alerts?master_id=4', admin)).json.total, 1);
  t.equal((await svc.request('GET', '/admin/alerts?search=upstream%201', admin)).json.total, 1);
  t.equal((await svc.request('GET', '/admin/alerts?limit=500', admin)).json.limit, 200, 'limit clamped');
  for (const q of ['status=open', 'severity=fatal', 'type=spike', 'page=0', 'limit=0', 'master_id=-1']) {
    const r = await svc.request('GET', `/admin/alerts?${q}`, admin);
    t.equal(r.status, 400, q);
    t.equal(r.json.code, 'bad_request');
  }
  t.equal((await svc.request('GET', '/admin/alerts')).status, 401, 'admin only');
});

t.test('create: validation and one open alert per fingerprint', async (t) => {
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ severity: 'info', message: 'x' }, 'type'],
    [{ type: 'custom', message: 'x' }, 'severity'],
    [{ type: 'custom', severity: 'info' }, 'message'],
    [{ type: 'nope', severity: 'info', message: 'x' }, 'type'],
    [{ type: 'custom', severity: 'fatal', message: 'x' }, 'severity'],
    [{ type: 'custom', severity: 'info', message: 'x'.repeat(2001) }, 'message'],
    [{ type: 'custom', severity: 'info', message: '' }, 'message'],
    [{ type: 'custom', severity: 'info', message: 'x', fingerprint: 'f'.repeat(201) }, 'fingerprint'],
    [{ type: 'custom', severity: 'info', message: 'x', metadata: 'text' }, 'metadata'],
    [{ type: 'custom', severity: 'info', message: 'x', master_id: 0 }, 'master_id'],
    [{ type: 'custom', severity: 'info', message: 'x', master_id: 'seven' }, 'master_id'],
    [{ type: 'custom', severity: 'info', message: 'x', status: 'resolved' }, 'status'],
  ];
  for (const [body, field] of bad) {
    const r = await create(body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.ok(r.json.data[field], `names ${field}`);
  }
  const first = await create({ type: 'custom', severity: 'warning', message: 'one', fingerprint: 'same-fp' });
  t.equal(first.status, 201);
  const dup = await create({ type: 'custom', severity: 'warning', message: 'two', fingerprint: 'same-fp' });
  t.equal(dup.status, 409);
  t.equal(dup.json.code, 'conflict');
  t.equal(dup.json.data.alert_id, first.json.id);
  t.equal((await act(first.json.id, 'dismiss')).status, 200);
  const again = await create({ type: 'custom', severity: 'warning', message: 'three', fingerprint: 'same-fp' });
  t.equal(again.status, 201, 'a new alert once the previous one is dismissed');
});

t.test('transitions: legal ones stamp their time, illegal ones are 409', async (t) => {
  const a = (await create({ type: 'custom', severity: 'info', message: 'tr', fingerprint: 'tr-1' })).json;
  const r0 = await act(a.id, 'resolve');
  t.equal(r0.status, 409, 'active cannot be resolved before acknowledgement');
  t.same(r0.json.data, { status: 'active', allowed_from: ['acknowledged'] });
  svc.service.clock.set(T0 + 60_000);
  const ack = await act(a.id, 'acknowledge');
  t.equal(ack.status, 200);
  t.equal(ack.json.status, 'acknowledged');
  near(t, ack.json.acknowledged_at, T0 + 60_000);
  t.equal(ack.json.updatedAt, ack.json.acknowledged_at);
  t.equal((await act(a.id, 'acknowledge')).status, 409, 'acknowledged twice');
  svc.service.clock.set(T0 + 120_000);
  const res = await act(a.id, 'resolve');
  t.equal(res.status, 200);
  t.match(res.json, { status: 'resolved', acknowledged_at: ack.json.acknowledged_at, dismissed_at: null });
  near(t, res.json.resolved_at, T0 + 120_000);
  for (const op of ['acknowledge', 'resolve', 'dismiss']) {
    const r = await act(a.id, op);
    t.equal(r.status, 409, `resolved is final: ${op}`);
    t.equal(r.json.data.status, 'resolved');
  }
  const b = (await create({ type: 'custom', severity: 'info', message: 'tr', fingerprint: 'tr-2' })).json;
  const dis = await act(b.id, 'dismiss');
  t.equal(dis.status, 200);
  t.equal(dis.json.status, 'dismissed');
  near(t, dis.json.dismissed_at, T0 + 120_000);
  for (const op of ['acknowledge', 'resolve', 'dismiss']) t.equal((await act(b.id, op)).status, 409, `dismissed is final: ${op}`);
  const c = (await create({ type: 'custom', severity: 'info', message: 'tr', fingerprint: 'tr-3' })).json;
  await act(c.id, 'acknowledge');
  t.equal((await act(c.id, 'dismiss')).json.status, 'dismissed', 'acknowledged can be dismissed');
  t.equal((await act(999999, 'acknowledge')).status, 404);
  t.equal((await act(0, 'acknowledge')).status, 400);
  t.equal((await svc.request('GET', `/admin/alerts?status=resolved`, admin)).json.total, 1);
  svc.service.clock.set(T0);
});

t.test('statistics count by status and severity', async (t) => {
  const r = await svc.request('GET', '/admin/alerts/stats', admin);
  t.equal(r.status, 200);
  const list = (await svc.request('GET', '/admin/alerts?limit=200', admin)).json.items as Array<{ status: string; severity: string }>;
  const count = (f: (a: { status: string; severity: string }) => boolean) => list.filter(f).length;
  t.equal(r.json.total, list.length);
  for (const s of ['active', 'acknowledged', 'resolved', 'dismissed']) t.equal(r.json.by_status[s], count((a) => a.status === s), s);
  for (const s of ['info', 'warning', 'critical']) {
    t.equal(r.json.by_severity[s], count((a) => a.severity === s), s);
    t.equal(r.json.open_by_severity[s], count((a) => a.severity === s && (a.status === 'active' || a.status === 'acknowledged')), `open ${s}`);
  }
  t.same(r.json.by_status, { active: 6, acknowledged: 0, resolved: 1, dismissed: 3 });
});

t.test('report: validated, deduplicated by fingerprint for 5 minutes and while open', async (t) => {
  const alert = (fingerprint: string, over: Record<string, unknown> = {}) => ({
    type: 'upstream_failure', severity: 'warning', fingerprint, message: `upstream down ${fingerprint}`, metadata: { group: 'g1' }, ...over,
  });
  t.equal((await svc.request('POST', '/internal/alerts/report', { body: { alerts: [alert('x')] } })).status, 401, 'internal token required');
  t.equal((await svc.request('POST', '/internal/alerts/report', { ...admin, body: { alerts: [alert('x')] } })).status, 401, 'admin token is not internal');
  const bad: Array<[unknown, string]> = [
    [{}, 'alerts'],
    [{ alerts: [] }, 'alerts'],
    [{ alerts: 'x' }, 'alerts'],
    [{ alerts: [alert('x', { fingerprint: undefined })] }, 'alerts.0.fingerprint'],
    [{ alerts: [alert('x'), alert('y', { severity: 'loud' })] }, 'alerts.1.severity'],
    [{ alerts: [alert('x', { type: 'other' })] }, 'alerts.0.type'],
    [{ alerts: [alert('x', { master_id: -3 })] }, 'alerts.0.master_id'],
    [{ alerts: [alert('x', { extra: 1 })] }, 'alerts.0.extra'],
    [{ alerts: [alert('x', { message: 'm'.repeat(2001) })] }, 'alerts.0.message'],
    [{ alerts: Array.from({ length: 1001 }, (_, i) => alert(`f${i}`)) }, 'alerts'],
  ];
  for (const [body, field] of bad) {
    const r = await internal(body);
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
    t.ok(r.json.data[field], `names ${field}: ${JSON.stringify(r.json.data)}`);
  }
  t.equal((await svc.request('GET', '/admin/alerts?search=upstream%20down', admin)).json.total, 0, 'nothing stored from bad reports');

  const r1 = await internal({ alerts: [alert('dp:a', { master_id: 9 }), alert('dp:b'), alert('dp:a', { severity: 'critical' })] });
  t.equal(r1.status, 200);
  t.same(r1.json, { accepted: 2, deduplicated: 1 }, 'a repeated fingerprint within one batch is a duplicate');
  const a = (await svc.request('GET', '/admin/alerts?search=dp:a', admin)).json.items;
  t.equal(a.length, 1);
  t.match(a[0], { source: 'report', master_id: 9, severity: 'critical', occurrences: 2, metadata: { group: 'g1' } }, 'the open alert counts the duplicate and keeps the higher severity');

  svc.service.clock.set(T0 + 4 * 60_000);
  t.same((await internal({ alerts: [alert('dp:a'), alert('dp:c')] })).json, { accepted: 1, deduplicated: 1 });
  // Close dp:b: within 5 minutes of its creation it is still dropped.
  const b = (await svc.request('GET', '/admin/alerts?search=dp:b', admin)).json.items[0];
  await act(b.id, 'dismiss');
  t.same((await internal({ alerts: [alert('dp:b')] })).json, { accepted: 0, deduplicated: 1 }, 'cooldown after the previous alert');
  svc.service.clock.set(T0 + 5 * 60_000 + 1000);
  t.same((await internal({ alerts: [alert('dp:b'), alert('dp:a')] })).json, { accepted: 1, deduplicated: 1 }, 'dp:b again after the cooldown; dp:a still open');
  t.equal((await svc.request('GET', '/admin/alerts?search=dp:b', admin)).json.total, 2);
  const aAfter = (await svc.request('GET', `/admin/alerts/${a[0].id}`, admin)).json;
  t.equal(aAfter.occurrences, 4);
  near(t, aAfter.last_seen_at, T0 + 5 * 60_000 + 1000);

  // Concurrent reports of one new fingerprint: exactly one alert.
  const many = await Promise.all(Array.from({ length: 6 }, () => internal({ alerts: [alert('dp:race')] })));
  t.same(many.map((r) => r.status), [200, 200, 200, 200, 200, 200]);
  t.equal(many.reduce((n, r) => n + r.json.accepted, 0), 1);
  t.equal(many.reduce((n, r) => n + r.json.deduplicated, 0), 5);
  svc.service.clock.set(T0);
});

t.test('cleanup deletes resolved and dismissed alerts closed more than 90 days ago', async (t) => {
  const day = 86_400_000;
  const base = T0 - 200 * day; // before every other alert of this file, so only these qualify
  svc.service.clock.set(base);
  const mk = async (fp: string) => (await create({ type: 'custom', severity: 'info', message: 'old', fingerprint: fp })).json.id as number;
  const resolvedOld = await mk('cl-1');
  await act(resolvedOld, 'acknowledge');
  await act(resolvedOld, 'resolve');
  const dismissedOld = await mk('cl-2');
  await act(dismissedOld, 'dismiss');
  const activeOld = await mk('cl-3');
  const ackOld = await mk('cl-4');
  await act(ackOld, 'acknowledge');
  const closedLater = await mk('cl-5');
  svc.service.clock.set(base + 2 * day);
  await act(closedLater, 'dismiss');

  svc.service.clock.set(base + 90 * day - 1000);
  t.same(await svc.service.system.ask('alert-cleanup', 'run'), { deleted: 0 }, 'not yet 90 days');
  svc.service.clock.set(base + 91 * day);
  t.same(await svc.service.system.ask('alert-cleanup', 'run'), { deleted: 2 });
  const status = async (id: number) => (await svc.request('GET', `/admin/alerts/${id}`, admin)).status;
  t.equal(await status(resolvedOld), 404);
  t.equal(await status(dismissedOld), 404);
  t.equal(await status(activeOld), 200, 'open alerts stay');
  t.equal(await status(ackOld), 200);
  t.equal(await status(closedLater), 200, 'closed less than 90 days ago');
  svc.service.clock.set(base + 93 * day);
  t.same(await svc.service.system.ask('alert-cleanup', 'run'), { deleted: 1 });
  t.equal(await status(closedLater), 404);
  svc.service.clock.set(T0);
});
