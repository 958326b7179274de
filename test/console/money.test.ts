/**
 * Money, budgets, the batch of upstream keys and the audit's kinds of change, in the console in a real
 * browser (Debian's Chromium) against the real service over HTTP. Records of a priced model and of a model
 * without a price are posted to /logs; every figure the pages show is checked against the API's own answer
 * (or the prices times the tokens). Every subtest fails on a console error in the page or a request to
 * another origin; screenshots of the changed views go to test-results/console/.
 */
import t from 'tap';
import { adminToken, eventually, startTestService } from '../helpers/harness.js';
import { launchBrowser, screenshot, waitText } from './browser.js';
import { consolePages } from './pages.js';

const browser = await launchBrowser();
if (typeof browser === 'string') {
  t.plan(0, `console browser tests skipped: ${browser}`);
  process.exit(0);
}
// The spend job at its shortest interval, so that a budget's spend is computed while the test runs.
const svc = await startTestService({ env: { SVC_SPEND_INTERVAL_MS: '1000' } });
t.teardown(async () => {
  await browser.close();
  await svc.stop();
});
t.setTimeout(600_000);

const admin = { token: adminToken };
const { withPage, signInTo, open } = consolePages(browser, svc);

// Prices: 0.000002 per input token, 0.00001 per output token. Each priced record: 1000 in, 500 out → 0.007.
const priced = { name: 'priced-model', cost_per_token: 0.000001, cost_per_input_token: 0.000002, cost_per_output_token: 0.00001 };
const perRecord = 1000 * priced.cost_per_input_token + 500 * priced.cost_per_output_token;
const pricedRecords = 3;
const unpricedRecords = 2;
let tenant: { id: number; master_key: string };

/** The text of every element matching the selector, in order. */
const texts = (cp: { page: import('playwright-core').Page }, selector: string) => cp.page.locator(selector).allTextContents();

t.before(async () => {
  const m = await svc.request('POST', '/admin/models', { ...admin, body: priced });
  if (m.status !== 201) throw new Error(`create model: ${m.status} ${m.text}`);
  const r = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'spender', group: 'default', budget: 1, budget_period: 'daily' } });
  if (r.status !== 201) throw new Error(`create master: ${r.status} ${r.text}`);
  tenant = r.json;
  // The figures are today's (UTC): a run that would cross midnight before its checks waits for it (at most 3
  // minutes), and the records, 10 minutes old, are never stamped before the day began.
  const toMidnightMs = 86_400_000 - (Date.now() % 86_400_000);
  if (toMidnightMs < 180_000) await new Promise((resolve) => setTimeout(resolve, toMidnightMs + 1000));
  const nowS = Math.floor(Date.now() / 1000);
  const at = new Date(Math.max(nowS - 600, nowS - (nowS % 86_400)) * 1000).toISOString();
  const record = (model: string) => ({ master_id: tenant.id, key_id: 1, model, group: 'default', status_code: 200, latency_ms: 120, tokens_in: 1000, tokens_out: 500, createdAt: at });
  const body = [...Array.from({ length: pricedRecords }, () => record(priced.name)), ...Array.from({ length: unpricedRecords }, () => record('model-without-price'))];
  const ingest = await svc.request('POST', '/logs', { body });
  if (ingest.status !== 202) throw new Error(`post logs: ${ingest.status} ${ingest.text}`);
  await svc.service.system.ask('logs', 'flush');
});

t.test('overview: the cost tile with its trend and the unpriced records; the traffic chart by cost', async (t) => {
  const summary = (await svc.request('GET', '/admin/dashboard/summary?period=today&include_trends=true', admin)).json;
  t.equal(summary.cost, +(pricedRecords * perRecord).toFixed(12), 'the API sums the priced records');
  t.equal(summary.unpriced, unpricedRecords);
  await withPage(t, 'admin', async (cp) => {
    await signInTo(cp, adminToken, 'overview', '/console/');
    const tile = cp.page.locator('[data-testid="summary"] .tile', { hasText: 'Cost' });
    t.equal((await tile.locator('.tile-value').textContent())!.trim(), '0.021', 'the sum, 4 significant digits');
    t.equal(await tile.locator('.money').getAttribute('title'), '0.021 (currency unit)', 'the exact figure on hover');
    const arrows: Record<string, string> = { up: '▲', down: '▼', flat: '■', new: 'new' };
    t.match(await tile.locator('.trend').textContent(), arrows[summary.trends.cost.direction]!, `its trend (${summary.trends.cost.direction})`);
    t.equal((await tile.locator('[data-testid="unpriced"]').textContent())!.trim(), '2 records without a price: counted as 0 · set prices');
    await screenshot(cp.page, 'admin-overview-cost');

    await cp.page.selectOption('select[name="metric"]', 'cost');
    await waitText(cp.page, '[data-testid="window-total"]', 'Cost in this window: 0.021');
    t.match(cp.page.url(), /metric=cost/, 'the metric is in the address');
    t.match(await cp.page.textContent('.chart'), /priced-model/, 'the priced model is a series');
    await screenshot(cp.page, 'admin-overview-traffic-cost');

    cp.view = 'models';
    await tile.locator('a', { hasText: 'set prices' }).click();
    await cp.page.waitForSelector('main#content[data-view="models"] table[aria-label="models"]');
    const row = cp.page.locator('table[aria-label="models"] tbody tr', { hasText: priced.name });
    t.match(await row.textContent(), /0\.000001[\s\S]*0\.000002 \/ 0\.00001/, 'the price per token and the input / output prices');
    await row.locator('button', { hasText: 'Edit' }).click();
    t.equal(await cp.page.inputValue('form[aria-label="model"] input[name="cost_per_input_token"]'), '0.000002', 'the input price, exact, in the form');
    await cp.page.fill('form[aria-label="model"] input[name="cost_per_output_token"]', '');
    await cp.page.click('form[aria-label="model"] button[type="submit"]');
    await cp.page.waitForSelector('dialog[open]', { state: 'detached' });
    const model = ((await svc.request('GET', '/admin/models', admin)).json as Array<{ name: string; cost_per_output_token: number | null }>).find((m) => m.name === priced.name)!;
    t.equal(model.cost_per_output_token, null, 'an emptied output price is none (the price per token applies)');
    await screenshot(cp.page, 'admin-models-prices');
    await svc.request('PUT', `/admin/models/${(model as unknown as { id: number }).id}`, { ...admin, body: { cost_per_output_token: priced.cost_per_output_token } });
  });
});

t.test('logs: a cost column, "no price" for a record whose model had none, and the cost in the detail', async (t) => {
  await withPage(t, 'admin', async (cp) => {
    await signInTo(cp, adminToken, 'logs', `/console/logs?master_id=${tenant.id}`);
    t.equal((await cp.page.textContent('.pager .total'))!.trim(), String(pricedRecords + unpricedRecords));
    const header = await texts(cp, 'table[aria-label="log records"] thead th');
    const col = header.indexOf('Cost');
    t.ok(col >= 0, 'a Cost column');
    const cells = (await texts(cp, `table[aria-label="log records"] tbody td:nth-child(${col + 1})`)).map((s) => s.trim()).sort();
    t.same(cells, [...Array(unpricedRecords).fill('no price'), ...Array(pricedRecords).fill('0.007')].sort(), 'each record priced from its tokens');
    await screenshot(cp.page, 'admin-logs-cost');
    await cp.page.locator('table[aria-label="log records"] tbody tr', { hasText: priced.name }).first().click();
    await cp.page.waitForSelector('aside.detail .log-cost');
    t.equal((await cp.page.textContent('aside.detail .log-cost'))!.trim(), '0.007', 'the detail has the cost');
    await screenshot(cp.page, 'admin-log-detail-cost');
  });
});

t.test("a master's page: the week's cost and unpriced records, the budget with its spend, edited in the form; key budgets", async (t) => {
  // The spend job's pass: the master's budget_used becomes the cost of its records today.
  const spent = await eventually(async () => {
    const m = (await svc.request('GET', `/admin/masters/${tenant.id}`, admin)).json;
    return m.budget_used > 0 ? m : null;
  }, 20_000, 200);
  t.equal(spent?.budget_used, +(pricedRecords * perRecord).toFixed(12), 'the spend job summed the cost');
  await withPage(t, 'admin', async (cp) => {
    await signInTo(cp, adminToken, 'tenant', `/console/tenants/${tenant.id}`);
    const usage = cp.page.locator('[data-testid="master-usage"]');
    t.match(await usage.textContent(), /Cost0\.021/, "the week's cost");
    t.match(await usage.locator('[data-testid="unpriced"]').textContent(), /^2 records without a price: counted as 0/);
    const budget = cp.page.locator('[data-testid="master-budget"]');
    t.match(await budget.textContent(), /^Budget1\.00per day since .*Spent this period0\.0212% of the budget$/, 'budget, period and since when; spend and its share');
    await cp.page.selectOption('select[name="metric"]', 'cost');
    await cp.page.waitForFunction(() => (globalThis as unknown as { location: { search: string } }).location.search.includes('metric=cost'));
    await cp.page.waitForSelector('.chart');
    t.match(await cp.page.textContent('.chart'), /priced-model/, 'the usage chart by cost');
    await screenshot(cp.page, 'admin-tenant-budget');

    await cp.page.click('div[aria-label="master actions"] >> text=Edit');
    t.equal(await cp.page.inputValue('form[aria-label="edit master"] input[name="budget"]'), '1', 'the budget in the form');
    await cp.page.fill('form[aria-label="edit master"] input[name="budget"]', '25.5');
    await cp.page.selectOption('form[aria-label="edit master"] select[name="budget_period"]', 'weekly');
    await cp.page.click('form[aria-label="edit master"] button[type="submit"]');
    await cp.page.waitForSelector('dialog[open]', { state: 'detached' });
    t.match((await svc.request('GET', `/admin/masters/${tenant.id}`, admin)).json, { budget: 25.5, budget_period: 'weekly' }, 'saved');
    await eventually(async () => /Budget25\.50per week/.test((await budget.textContent()) ?? ''), 10_000, 100);
    t.match(await budget.textContent(), /Budget25\.50per week/, 'the page shows the new budget');

    // A child key issued with a budget; then its budget removed (an emptied amount is none).
    await cp.page.click('text=Issue key');
    await cp.page.fill('form[aria-label="issue child key"] input[name="name"]', 'budgeted');
    await cp.page.fill('form[aria-label="issue child key"] input[name="budget"]', '0.5');
    await cp.page.selectOption('form[aria-label="issue child key"] select[name="budget_period"]', 'monthly');
    await cp.page.click('form[aria-label="issue child key"] button[type="submit"]');
    await cp.page.click('text=I have copied it');
    const row = cp.page.locator('table[aria-label="child keys"] tbody tr', { hasText: 'budgeted' });
    await row.waitFor();
    t.match(await row.textContent(), /0 \/ 0\.5 per month \(0%\)/, 'the key row has its budget');
    const keyId = Number((await row.locator('td').first().textContent())!.trim());
    t.match((await svc.request('GET', `/admin/keys/${keyId}`, admin)).json, { budget: 0.5, budget_period: 'monthly' });
    await screenshot(cp.page, 'admin-tenant-key-budget');
    await row.locator('button', { hasText: 'Edit' }).click();
    t.equal(await cp.page.inputValue('form[aria-label="edit child key"] input[name="budget"]'), '0.5');
    await cp.page.fill('form[aria-label="edit child key"] input[name="budget"]', '');
    await cp.page.click('form[aria-label="edit child key"] button[type="submit"]');
    await cp.page.waitForSelector('dialog[open]', { state: 'detached' });
    t.equal((await svc.request('GET', `/admin/keys/${keyId}`, admin)).json.budget, null, 'no budget now');
    await eventually(async () => ((await row.textContent()) ?? '').includes('none'), 10_000, 100);
    t.match(await row.textContent(), /none/, 'the row says none');

    await open(cp, 'tenants', '/console/tenants');
    t.match(await cp.page.locator('table[aria-label="masters"] tbody tr', { hasText: 'spender' }).textContent(), /\/ 25\.50 per week/, 'the masters list has the budget');
  });
});

t.test('tenant: own cost in the totals and by model, no price named, the by-day chart by cost', async (t) => {
  const stats = (await svc.request('GET', '/v1/stats?period=today', { token: tenant.master_key })).json;
  t.equal(stats.totals.cost, +(pricedRecords * perRecord).toFixed(12));
  await withPage(t, 'master', async (cp) => {
    await signInTo(cp, tenant.master_key, 'usage', '/console/');
    const tile = cp.page.locator('[data-testid="summary"] .tile', { hasText: 'Cost' });
    t.equal((await tile.locator('.tile-value').textContent())!.trim(), '0.021');
    t.equal((await tile.locator('[data-testid="unpriced"]').textContent())!.trim(), '2 records without a price: counted as 0', 'no link to the admin-only models view');
    const byModel = cp.page.locator('table[aria-label="usage by model"]');
    t.match(await byModel.locator('tr', { hasText: priced.name }).textContent(), /0\.021/, 'the priced model costs its sum');
    t.match(await byModel.locator('tr', { hasText: 'model-without-price' }).textContent(), /no price/);
    await cp.page.selectOption('select[name="metric"]', 'cost');
    await cp.page.waitForFunction(() => (globalThis as unknown as { location: { search: string } }).location.search.includes('metric=cost'));
    // The chart draws after the URL changes: wait for its label (a timeout fails the test) rather than read it at once.
    type Doc = { document: { querySelector(s: string): { textContent: string | null } | null } };
    await cp.page.waitForFunction(() => /cost/.test((globalThis as unknown as Doc).document.querySelector('.chart')?.textContent ?? ''), undefined, { timeout: 15_000 });
    t.match(await cp.page.textContent('.chart'), /cost/, 'the by-day chart shows cost');
    await screenshot(cp.page, 'tenant-usage-cost');
  });
});

t.test('upstreams: many keys in one batch, each shown as made; a refused line named, and nothing made', async (t) => {
  const g = await svc.request('POST', '/admin/provider-groups', { ...admin, body: { name: 'batch-group', type: 'openai', base_url: 'http://upstream.invalid/v1', models: ['gpt-a'] } });
  const count = async () => (await svc.request('GET', `/admin/api-keys?group_id=${g.json.id}&limit=100`, admin)).json.total as number;
  await withPage(t, 'admin', async (cp) => {
    await signInTo(cp, adminToken, 'upstreams', `/console/upstreams?group_id=${g.json.id}`);
    await cp.page.click('text=New keys (batch)');
    const form = 'form[aria-label="upstream keys batch"]';
    t.equal(await cp.page.inputValue(`${form} select[name="group_id"]`), String(g.json.id), 'the group shown is the default');
    await cp.page.fill(`${form} textarea[name="secrets"]`, 'sk-batch-one-1111\n\nsk-batch-two-2222\nsk-batch-three-3333\n');
    await cp.page.fill(`${form} input[name="weight"]`, '4');
    await cp.page.click(`${form} button[type="submit"]`);
    const made = cp.page.locator('table[aria-label="keys created"] tbody tr');
    await made.first().waitFor();
    t.equal(await made.count(), 3, 'one row per key made');
    const rows = (await made.allTextContents()).join('\n');
    t.match(rows, /^1.*1111/m, 'line 1');
    t.match(rows, /^3.*2222/m, 'line 3 (the blank line 2 skipped)');
    t.notMatch(rows, /sk-batch-one-1111/, 'secrets masked');
    t.equal(await count(), 3, 'three keys in the group');
    const stored = (await svc.request('GET', `/admin/api-keys?group_id=${g.json.id}&limit=100`, admin)).json.items as Array<{ weight: number }>;
    t.same(stored.map((k) => k.weight), [4, 4, 4], 'with the weight given');
    await screenshot(cp.page, 'admin-upstreams-batch');
    await cp.page.click('text=Done');
    await cp.page.waitForSelector('table[aria-label="upstream keys"] >> text=3333');

    cp.allowStatus.add(400);
    await cp.page.click('text=New keys (batch)');
    await cp.page.fill(`${form} textarea[name="secrets"]`, `sk-fine-4444\n${'x'.repeat(9000)}`);
    await cp.page.click(`${form} button[type="submit"]`);
    await cp.page.waitForSelector(`${form} .line-errors`);
    t.match(await cp.page.textContent(`${form} .line-errors`), /^line 2: api_key /, 'the refused line by its number');
    t.match(await cp.page.textContent(`${form} .state.error`), /X-Request-ID/);
    t.equal(await count(), 3, 'all or none: nothing made');
    await screenshot(cp.page, 'admin-upstreams-batch-error');
  });
});

t.test('audit trail: a create shows its new values only, an update its changed fields, a delete what went', async (t) => {
  const m = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'audited', group: 'default' } });
  const k = await svc.request('POST', `/admin/masters/${m.json.id}/keys`, { ...admin, body: { name: 'audited-key' } });
  await svc.request('PUT', `/admin/masters/${m.json.id}`, { ...admin, body: { global_qps: 9 } });
  t.equal((await svc.request('POST', `/admin/masters/${m.json.id}/reset-key`, admin)).status, 200);
  t.equal((await svc.request('POST', `/admin/masters/${m.json.id}/keys/${k.json.id}/revoke`, admin)).status, 200);
  await svc.request('DELETE', `/admin/masters/${m.json.id}`, admin);
  await withPage(t, 'admin', async (cp) => {
    await signInTo(cp, adminToken, 'operations', '/console/operations?resource=masters');
    const entry = (action: string) =>
      cp.page.locator('table[aria-label="audit trail"] tbody tr', { has: cp.page.locator(`td:nth-child(3):text-is("${action}")`) }).filter({ hasText: `#${m.json.id}` });
    const diffOf = (action: string) => entry(action).locator('td > ul.diff');
    const issued = diffOf('keys');
    t.equal(await issued.getAttribute('data-kind'), 'created', 'issuing a child key is a create');
    t.equal(await issued.locator('.from').count(), 0, 'no "from": the master is not what the key was');
    t.match(await issued.textContent(), /name: audited-key/, "the key's values");
    t.match(await issued.textContent(), /key_secret: \[masked\]/, 'its secret masked');
    t.notMatch(await issued.textContent(), /audited[^-]/, "none of the master's values");

    const created = diffOf('create');
    t.equal(await created.getAttribute('data-kind'), 'created');
    t.equal(await created.locator('.from').count(), 0);

    const updated = diffOf('update');
    t.equal(await updated.getAttribute('data-kind'), 'updated');
    t.match(await updated.textContent(), /global_qps: 0 → 9/, 'from → to for the field changed');
    t.notMatch(await updated.textContent(), /name:/, 'fields that did not change are left out');

    // An action on the master read before: its answer's moved fields; the new key masked.
    const reset = diffOf('reset-key');
    t.equal(await reset.getAttribute('data-kind'), 'updated');
    t.match(await reset.textContent(), /epoch: 1 → 2/, 'the epoch rose');
    t.match(await reset.textContent(), /master_key: null → \[masked\]/, 'the new key, masked');
    t.notMatch(await reset.textContent(), /global_qps/, 'nothing that stayed');
    // A revoke through the master: nothing is read before it (no GET of a key under its master), so its answer.
    const revoked = diffOf('keys.revoke');
    t.equal(await revoked.getAttribute('data-kind'), 'result');
    t.equal(await revoked.locator('.from').count(), 0, 'no "from" made up');
    t.match(await revoked.textContent(), /revoked: true/);

    const removed = diffOf('delete');
    t.equal(await removed.getAttribute('data-kind'), 'removed');
    t.equal(await removed.locator('.from').count(), 0, 'a delete has no "to" side to compare with');
    t.match(await removed.textContent(), /name: audited/, 'what went');
    await screenshot(cp.page, 'admin-operations-audit');
    t.ok(k.json.id > 0);
  });
});
