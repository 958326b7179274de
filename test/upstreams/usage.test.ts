import t from 'tap';
import { adminToken, internalToken, startTestService } from '../helpers/harness.js';

t.test('usage counters from /internal/stats/flush and the statistics summary', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const req = (m: string, p: string, body?: unknown) => svc.request(m, p, { token: adminToken, body });
  const flush = (upstream_keys: unknown[]) =>
    svc.request('POST', '/internal/stats/flush', { headers: { 'x-internal-token': internalToken }, body: { keys: [], upstream_keys } });

  const g1 = (await req('POST', '/admin/provider-groups', { name: 'g1', type: 'openai', base_url: 'https://a.example' })).json;
  const g2 = (await req('POST', '/admin/provider-groups', { name: 'g2', type: 'gemini', base_url: 'https://b.example' })).json;
  const a = (await req('POST', '/admin/api-keys', { group_id: g1.id, api_key: 'aaaa-1' })).json;
  const b = (await req('POST', '/admin/api-keys', { group_id: g1.id, api_key: 'bbbb-2' })).json;
  const c = (await req('POST', '/admin/api-keys', { group_id: g2.id, api_key: 'cccc-3' })).json;

  const day1 = Date.UTC(2031, 0, 10, 12); // 2031-01-10 12:00 UTC
  svc.service.clock.set(day1);
  const r1 = await flush([
    { id: a.id, requests: 10, success: 8, failure: 2 },
    { id: a.id, requests: 5, success: 5, failure: 0 },
    { id: c.id, requests: 4, success: 1, failure: 3 },
    { id: 99999, requests: 7, success: 7, failure: 0 },
  ]);
  t.equal(r1.status, 200);
  t.equal(r1.json.accepted_upstream_keys, 3, 'the unknown id is ignored');
  svc.service.clock.set(day1 + 2 * 86400_000); // 2031-01-12
  await flush([{ id: b.id, requests: 20, success: 10, failure: 10 }]);

  const all = await req('GET', '/admin/api-keys/stats');
  t.equal(all.status, 200);
  t.same(all.json.total, { requests: 39, success: 24, failure: 15, success_rate: 0.6154, failure_rate: 0.3846 });
  t.same(all.json.keys.find((k: any) => k.id === a.id), { id: a.id, group_id: g1.id, group_name: 'g1', status: 'active', requests: 15, success: 13, failure: 2, success_rate: 0.8667, failure_rate: 0.1333 });
  t.same(all.json.groups.find((g: any) => g.group_id === g2.id), { group_id: g2.id, name: 'g2', keys: 1, requests: 4, success: 1, failure: 3, success_rate: 0.25, failure_rate: 0.75 });
  t.same(all.json.groups.find((g: any) => g.group_id === g1.id).requests, 35);

  const since = Math.floor(Date.UTC(2031, 0, 11) / 1000);
  const late = await req('GET', `/admin/api-keys/stats?since=${since}`);
  t.same(late.json.total, { requests: 20, success: 10, failure: 10, success_rate: 0.5, failure_rate: 0.5 });
  t.equal(late.json.since, since);
  const early = await req('GET', `/admin/api-keys/stats?until=${since}`);
  t.equal(early.json.total.requests, 19);
  const group = await req('GET', `/admin/api-keys/stats?group_id=${g2.id}`);
  t.same(group.json.keys.map((k: any) => k.id), [c.id]);
  t.same(group.json.total.requests, 4);
  const empty = await req('GET', `/admin/api-keys/stats?since=${since + 10 * 86400}`);
  t.same(empty.json.total, { requests: 0, success: 0, failure: 0, success_rate: 0, failure_rate: 0 }, 'no requests: rates are 0');

  t.equal((await req('GET', '/admin/api-keys/stats?since=-1')).status, 400);
  t.equal((await req('GET', '/admin/api-keys/stats?since=abc')).status, 400);
  t.equal((await req('GET', `/admin/api-keys/stats?since=${since}&until=${since - 1}`)).status, 400);
});
