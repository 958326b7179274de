/**
 * Spend through HTTP with the real stores: prices in the registry, records
 * priced when accepted (the stored cost column, exact), unpriced records
 * counted, a price change affecting only later records, budgets on masters and
 * keys mirrored into the store, budget alerts raised once per threshold and
 * period, the cost backfill, and bad input named.
 */
import t from 'tap';
import { adminToken, internalToken, startTestService } from '../helpers/harness.js';
import { sha256Hex } from '../../src/contract/hash.js';

const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '50' } });
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const ch = svc.service.context.clickhouse;
const store = svc.service.context.store;
const flush = () => svc.service.system.ask('logs', 'flush');
const spendRun = () => svc.service.system.ask<{ targets: number; written: number; alerts: number }>('spend', 'run');

const post = (body: unknown) => svc.request('POST', '/logs', { body });
const rowsOf = async (keyId: number) =>
  ch.query<{ model: string; cost: string; unpriced: number }>(
    'SELECT model, toString(cost) AS cost, unpriced FROM logs WHERE key_id = {k:UInt64} ORDER BY id',
    { k: keyId },
  );
const unpricedMetric = async () => {
  const text = (await svc.request('GET', '/metrics', { headers: { 'x-internal-token': internalToken } })).text;
  return Number(/^logs_unpriced_total (\d+)/m.exec(text)?.[1] ?? NaN);
};

t.test('prices: set on a model, shown, and bad prices are 400 naming the field', async (t) => {
  const m = await svc.request('POST', '/admin/models', { ...admin, body: { name: 'priced-a', cost_per_token: 0.000002, cost_per_output_token: 0.000008 } });
  t.equal(m.status, 201);
  t.match(m.json, { cost_per_token: 0.000002, cost_per_input_token: null, cost_per_output_token: 0.000008 });
  for (const field of ['cost_per_token', 'cost_per_input_token', 'cost_per_output_token']) {
    const bad = await svc.request('POST', '/admin/models', { ...admin, body: { name: `bad-${field}`, [field]: -0.1 } });
    t.equal(bad.status, 400, field);
    t.ok(bad.json.data?.[field], `${field} is named`);
  }
  const prices = await svc.service.system.ask<Record<string, unknown>>('logs', 'prices');
  t.same(prices['priced-a'], { input: '0.000002000000', output: '0.000008000000' }, 'in force on this node before the answer');
});

t.test('priced at ingestion: exact cost per record, unpriced ones counted', async (t) => {
  const before = await unpricedMetric();
  t.equal((await post([
    { key_id: 101, master_id: 9001, status_code: 200, model: 'priced-a', tokens_in: 1000, tokens_out: 500 },
    { key_id: 101, master_id: 9001, status_code: 200, model: 'priced-a', tokens_in: 3, tokens_out: 0 },
    { key_id: 101, master_id: 9001, status_code: 200, model: 'nobody-prices-me', tokens_in: 1000, tokens_out: 1000 },
  ])).status, 202);
  await flush();
  const rows = await rowsOf(101);
  // 1000 x 0.000002 + 500 x 0.000008 = 0.006; 3 x 0.000002 = 0.000006
  t.same(rows.map((r) => [r.model, Number(r.cost), r.unpriced]), [
    ['priced-a', 0.006, 0],
    ['priced-a', 0.000006, 0],
    ['nobody-prices-me', 0, 1],
  ]);
  const [sum] = await ch.query<{ s: string }>('SELECT toString(sum(cost)) AS s FROM logs WHERE key_id = 101');
  t.equal(sum!.s, '0.006006', 'exact decimal sum');
  t.equal(await unpricedMetric(), before + 1, 'logs_unpriced_total counts the unpriced record');
  const listed = (await svc.request('GET', '/admin/logs?key_id=101', admin)).json.items;
  t.same(listed.map((i: { cost: number }) => i.cost).sort(), [0, 0.000006, 0.006]);
});

t.test('a price change affects only later records', async (t) => {
  const id = (await svc.request('GET', '/admin/models', admin)).json.find((m: { name: string }) => m.name === 'priced-a').id;
  await post({ key_id: 102, master_id: 9001, status_code: 200, model: 'priced-a', tokens_in: 10, tokens_out: 10 });
  const put = await svc.request('PUT', `/admin/models/${id}`, { ...admin, body: { cost_per_token: 0.5, cost_per_output_token: null } });
  t.equal(put.status, 200);
  await post({ key_id: 102, master_id: 9001, status_code: 200, model: 'priced-a', tokens_in: 10, tokens_out: 10 });
  await flush();
  t.same((await rowsOf(102)).map((r) => Number(r.cost)), [0.0001, 10], 'the first record keeps the old price');
});

t.test('budgets: set on masters and keys, mirrored into the store, alerts at 80% then 100% once each', async (t) => {
  await svc.request('POST', '/admin/models', { ...admin, body: { name: 'dollar', cost_per_token: 0.5 } });
  const m = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'spender', group: 'default', budget: 100, budget_period: 'daily' } });
  t.equal(m.status, 201);
  t.match(m.json, { budget: 100, budget_period: 'daily', budget_used: 0 });
  const k = await svc.request('POST', '/v1/tokens', { token: m.json.master_key, body: { budget: 10, budget_period: 'monthly' } });
  t.equal(k.status, 201);
  t.match(k.json, { budget: 10, budget_period: 'monthly', budget_used: 0 });
  const hash = sha256Hex(k.json.key_secret);
  const now = svc.service.clock.now();
  const dayStart = Math.floor(now / 86_400_000) * 86_400;
  t.match(await store.hgetall(`tenancy:master:${m.json.id}`), { budget_limit: '100.000000000000', budget_used: '0.000000000000', budget_reset_type: 'daily', budget_period_start: String(dayStart) });
  t.match(await store.hgetall(`tenancy:token:${hash}`), { budget_limit: '10.000000000000', budget_reset_type: 'monthly' });

  const spend = (tokens: number) => post({ key_id: k.json.id, master_id: m.json.id, status_code: 200, model: 'dollar', tokens_in: tokens });
  const budgetAlerts = async () => (await svc.request('GET', `/admin/alerts?type=budget&master_id=${m.json.id}&limit=100`, admin)).json.items as Array<{ severity: string; metadata: Record<string, unknown> }>;

  await spend(17);
  await spend(0);
  await spendRun();
  t.equal((await store.hgetall(`tenancy:token:${hash}`)).budget_used, '8.500000000000', 'the key spend is in the store');
  t.equal((await store.hgetall(`tenancy:master:${m.json.id}`)).budget_used, '8.500000000000');
  let alerts = await budgetAlerts();
  t.equal(alerts.length, 1, 'the key crossed 80%; the master did not');
  t.match(alerts[0], { severity: 'warning', metadata: { scope: 'key', key_id: k.json.id, spend: 8.5, budget: 10, period: 'monthly', threshold: 80 } });
  await spendRun();
  t.equal((await budgetAlerts()).length, 1, 'raised once');

  await spend(4);
  await spendRun();
  alerts = await budgetAlerts();
  t.same(alerts.map((a) => a.severity).sort(), ['critical', 'warning']);
  t.match(alerts.find((a) => a.severity === 'critical'), { metadata: { spend: 10.5, budget: 10, threshold: 100 } });
  await spendRun();
  t.equal((await budgetAlerts()).length, 2, 'the critical alert once too');
  const view = await svc.request('GET', `/admin/keys/${k.json.id}`, admin);
  t.match(view.json, { budget: 10, budget_used: 10.5 });

  // Admin key budget route: a new period resets the figure until the next pass.
  const put = await svc.request('PUT', `/admin/keys/${k.json.id}/budget`, { ...admin, body: { budget: 50, budget_period: 'weekly' } });
  t.equal(put.status, 200);
  t.match(put.json, { budget: 50, budget_period: 'weekly', budget_used: 0 });
  t.equal((await store.hgetall(`tenancy:token:${hash}`)).budget_limit, '50.000000000000');
});

t.test('bad budgets: negative amount or unknown period is 400 naming the field', async (t) => {
  const cases: Array<[string, string, unknown]> = [
    ['POST', '/admin/masters', { name: 'x', group: 'default', budget: -1 }],
    ['POST', '/admin/masters', { name: 'x', group: 'default', budget_period: 'hourly' }],
  ];
  for (const [method, path, body] of cases) {
    const r = await svc.request(method, path, { ...admin, body });
    t.equal(r.status, 400, JSON.stringify(body));
    t.ok(r.json.data?.budget ?? r.json.data?.budget_period, 'the field is named');
  }
  const m = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'y', group: 'default' } });
  const k = await svc.request('POST', `/admin/masters/${m.json.id}/keys`, { ...admin, body: {} });
  const bad = await svc.request('PUT', `/admin/keys/${k.json.id}/budget`, { ...admin, body: { budget: -5 } });
  t.equal(bad.status, 400);
  t.ok(bad.json.data?.budget);
  const badPeriod = await svc.request('PUT', `/v1/tokens/${k.json.id}`, { token: m.json.master_key, body: { budget_period: 'yearly' } });
  t.equal(badPeriod.status, 400);
  t.ok(badPeriod.json.data?.budget_period);
});

t.test('cost backfill: prices stored rows from current prices and says how many', async (t) => {
  await post([
    { key_id: 301, master_id: 9003, status_code: 200, model: 'late-price', tokens_in: 100, tokens_out: 0 },
    { key_id: 301, master_id: 9003, status_code: 200, model: 'late-price', tokens_in: 0, tokens_out: 200 },
    { key_id: 301, master_id: 9003, status_code: 200, model: 'never-priced', tokens_in: 1, tokens_out: 1 },
  ]);
  await flush();
  t.same((await rowsOf(301)).map((r) => r.unpriced), [1, 1, 1]);
  await svc.request('POST', '/admin/models', { ...admin, body: { name: 'late-price', cost_per_input_token: 0.25, cost_per_output_token: 0.125 } });
  const since = Math.floor(svc.service.clock.now() / 1000) - 600;
  const r = await svc.request('POST', '/admin/logs/cost-backfill', { ...admin, body: { since } });
  t.equal(r.status, 200);
  // Zero-cost rows of the slice: the three above, plus every zero-cost row of the earlier tests in the window.
  t.ok(r.json.priced >= 2 && r.json.unpriced >= 1, JSON.stringify(r.json));
  t.same((await rowsOf(301)).map((r) => [Number(r.cost), r.unpriced]), [[25, 0], [25, 0], [0, 1]]);
  const again = await svc.request('POST', '/admin/logs/cost-backfill', { ...admin, body: { since } });
  t.ok(again.json.priced < r.json.priced, 'priced rows are no longer zero');
  const bad = await svc.request('POST', '/admin/logs/cost-backfill', { ...admin, body: { since: 100, until: 50 } });
  t.equal(bad.status, 400);
  t.ok(bad.json.data?.until);
});
