import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';

// Chart markers: the configuration changes of a time window, by resource and action, from GET /admin/audit.
const svc = await startTestService();
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const trail = (qs: string) => svc.request('GET', `/admin/audit?${qs}`, admin);
const nowS = () => Math.floor(svc.service.context.now() / 1000);
const ok = async (method: string, path: string, body?: unknown) => {
  const r = await svc.request(method, path, { ...admin, ...(body === undefined ? {} : { body }) });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.json;
};

t.test('since/until bound the window; resource and action take one name or several', async (t) => {
  const m = await ok('POST', '/admin/masters', { name: 'window-1', group: 'default' });
  await ok('PUT', '/admin/features', { log_retention_days: 21 });
  // The window starts on the next second: earlier changes fall outside it.
  const start = nowS() + 1;
  await new Promise((r) => setTimeout(r, (start - Date.now() / 1000) * 1000 + 20));
  await ok('PUT', '/admin/features', { log_retention_days: 22 });
  await ok('POST', `/admin/masters/${m.id}/freeze`);
  await ok('PUT', `/admin/masters/${m.id}`, { name: 'window-1b' });
  const end = nowS() + 1;

  const inWindow = await trail(`since=${start}&until=${end}`);
  t.equal(inWindow.status, 200);
  t.equal(inWindow.json.total, 3, 'the three changes of the window, not the two before it');
  t.ok(inWindow.json.items.every((i: { time: string }) => Date.parse(i.time) >= start * 1000 && Date.parse(i.time) < end * 1000));

  const flags = await trail(`since=${start}&until=${end}&resource=features`);
  t.equal(flags.json.total, 1);
  t.same(flags.json.items[0].diff.log_retention_days, { from: 21, to: 22 });

  const several = await trail(`since=${start}&until=${end}&resource=features,masters`);
  t.equal(several.json.total, 3);
  const freezes = await trail(`since=${start}&until=${end}&resource=masters&action=freeze`);
  t.equal(freezes.json.total, 1);
  t.equal(freezes.json.items[0].action, 'freeze');
  const actions = await trail(`since=${start}&until=${end}&action=freeze,update`);
  t.equal(actions.json.total, 3);
  const before = await trail(`until=${start}&resource=features`);
  t.equal(before.json.total, 1, 'until is exclusive: the earlier flag change only');
  t.same(before.json.items[0].diff.log_retention_days, { from: 30, to: 21 });
});

t.test('bad windows and names: 400 in the envelope', async (t) => {
  for (const q of ['since=10&until=10', 'resource=a,,b', 'action=drop%20table', 'since=-5']) {
    const r = await trail(q);
    t.equal(r.status, 400, q);
    t.equal(r.json.code, 'bad_request');
  }
});
