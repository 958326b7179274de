/**
 * The console in a real browser (Debian's Chromium) against the real service
 * over HTTP: signing in as admin and as a tenant, the tasks of the issue's
 * test list, a screenshot of every view, and the API calls each view makes
 * (written to bench/console-calls.json for the `console` bench scenario).
 * Every subtest fails on a console error in the page or a request to another
 * origin.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { adminToken, startTestService } from '../helpers/harness.js';
import { launchBrowser, saveCalls, screenshot, settled, waitText, type ApiCall, type ConsolePage } from './browser.js';
import { consolePages } from './pages.js';

const browser = await launchBrowser();
if (typeof browser === 'string') {
  t.plan(0, `console browser tests skipped: ${browser}`);
  process.exit(0);
}
const svc = await startTestService();
t.teardown(async () => {
  await browser.close();
  await svc.stop();
});
t.setTimeout(600_000);

const admin = { token: adminToken };
const recorded: Record<string, ApiCall[]> = { admin: [], master: [] };

const { withPage, signIn, open } = consolePages(browser, svc, recorded);

const nowSec = () => Math.floor(Date.now() / 1000);

/** Clicks the first chart at a bucket's time, `yFrac` down from the plot's top (the chart publishes its window). */
async function clickBucket(cp: ConsolePage, t: number, yFrac: number): Promise<void> {
  const chart = cp.page.locator('.chart').first();
  const [since, until] = (await chart.getAttribute('data-range'))!.split(',').map(Number) as [number, number];
  const box = (await chart.locator('.u-over').boundingBox())!;
  const x = box.x + ((t - since) / (until - since)) * box.width;
  const y = box.y + box.height * yFrac;
  await cp.page.mouse.move(x, y);
  await cp.page.mouse.click(x, y);
}
let masterId = 0;
let tenant: { id: number; master_key: string };

t.before(async () => {
  const r = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'tenant-one', group: 'default', global_qps: 50 } });
  if (r.status !== 201) throw new Error(`create master: ${r.status} ${r.text}`);
  tenant = r.json;
  const g = await svc.request('POST', '/admin/provider-groups', { ...admin, body: { name: 'oa', type: 'openai', base_url: 'http://upstream.invalid/v1', models: ['gpt-a'] } });
  await svc.request('POST', '/admin/api-keys', { ...admin, body: { group_id: g.json.id, api_key: 'sk-aaaaaaaa1111' } });
  await svc.request('POST', '/admin/namespaces', { ...admin, body: { name: 'prod' } });
  await svc.request('POST', '/admin/bindings', { ...admin, body: { namespace: 'prod', public_model: 'gpt-a', group_id: g.json.id, selector_value: 'gpt-a' } });
});

t.test('a bad token shows the sign-in page with the reason, and the page asked for opens after sign-in', async (t) => {
  await withPage(t, 'admin', async (cp) => {
    cp.allowStatus.add(401);
    await signIn(cp, 'not-a-token', '/console/alerts?status=active');
    await cp.page.waitForSelector('.state.error');
    t.match(await cp.page.textContent('.state.error'), /credential missing or invalid/, 'the envelope message');
    t.match(await cp.page.textContent('.state.error'), /X-Request-ID/, 'with the request id');
    t.match(cp.page.url(), /\/console\/signin\?next=/);
    await screenshot(cp.page, 'signin');
    await cp.page.fill('input[name="credential"]', adminToken);
    await cp.page.click('button[type="submit"]');
    cp.view = 'alerts';
    await settled(cp.page, 'alerts');
    t.match(cp.page.url(), /\/console\/alerts\?status=active$/, 'the link asked for is opened');
    t.equal(await cp.page.evaluate(`localStorage.length`), 0, 'nothing in localStorage');
    t.equal(await cp.page.evaluate(`document.cookie`), '', 'no cookie');
    t.equal(await cp.page.evaluate(`sessionStorage.getItem('console.credential')`), adminToken, 'kept in sessionStorage');
    await cp.page.click('text=Sign out');
    await cp.page.waitForSelector('input[name="credential"]');
    t.equal(await cp.page.evaluate(`sessionStorage.length`), 0, 'dropped on sign-out');
  });
});

t.test('a 401 later returns to the sign-in page with the reason', async (t) => {
  await withPage(t, 'admin', async (cp) => {
    cp.allowStatus.add(401);
    await cp.page.goto(svc.base + '/console/signin');
    await cp.page.evaluate(`sessionStorage.setItem('console.credential', 'expired-token')`);
    await cp.page.goto(svc.base + '/console/logs');
    await cp.page.waitForSelector('.reason');
    t.match(await cp.page.textContent('.reason'), /Signed out: credential missing or invalid/);
  });
});

t.test('a child key is told that child keys cannot use the console', async (t) => {
  const k = await svc.request('POST', `/admin/masters/${tenant.id}/keys`, { ...admin, body: { name: 'ck' } });
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, k.json.key_secret);
    await cp.page.waitForSelector('.state.error');
    t.match(await cp.page.textContent('.state.error'), /child keys cannot use the console/);
    t.equal(await cp.page.evaluate(`sessionStorage.length`), 0, 'not kept');
  });
});

t.test('admin: create a master and see its key once, issue a child key, freeze the master', async (t) => {
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken, '/console/tenants');
    cp.view = 'tenants';
    await settled(cp.page, 'tenants');
    await cp.page.click('text=New master');
    await cp.page.fill('form[aria-label="new master"] input[name="name"]', 'acme');
    await cp.page.fill('form[aria-label="new master"] input[name="group"]', 'default');
    await cp.page.click('form[aria-label="new master"] button[type="submit"]');
    await cp.page.waitForSelector('.secret-value');
    const key = (await cp.page.textContent('.secret-value'))!.trim();
    t.match(await cp.page.textContent('dialog[open]'), /you will not see it again/);
    const who = await svc.request('GET', '/auth/whoami', { token: key });
    t.equal(who.status, 200, 'the key shown is the master key');
    t.equal(who.json.name, 'acme');
    masterId = who.json.id;
    await screenshot(cp.page, 'tenants-new-master-key');
    await cp.page.click('text=I have copied it');
    cp.view = 'tenant';
    await settled(cp.page, 'tenant');
    t.match(cp.page.url(), new RegExp(`/console/tenants/${masterId}$`));
    t.notOk((await cp.page.content()).includes(key), 'the key is not shown again');

    await cp.page.click('text=Issue key');
    await cp.page.fill('form[aria-label="issue child key"] input[name="name"]', 'ci-key');
    await cp.page.click('form[aria-label="issue child key"] button[type="submit"]');
    await cp.page.waitForSelector('.secret-value');
    const secret = (await cp.page.textContent('.secret-value'))!.trim();
    const childWho = await svc.request('GET', '/auth/whoami', { token: secret });
    t.equal(childWho.json.type, 'key', 'the secret shown is the child key');
    t.equal(childWho.json.master_id, masterId);
    await cp.page.click('text=I have copied it');
    await cp.page.waitForSelector('table[aria-label="child keys"] >> text=ci-key');

    await cp.page.click('div[aria-label="master actions"] >> text=Freeze');
    t.match(await cp.page.textContent('dialog[open]'), /will be refused/, 'the confirmation says what happens');
    await cp.page.click('dialog[open] button.danger');
    await cp.page.waitForSelector('div[aria-label="master actions"] >> text=Unfreeze');
    const m = await svc.request('GET', `/admin/masters/${masterId}`, admin);
    t.not(m.json.status, 'active', `the master is ${m.json.status}`);
    t.match(await cp.page.textContent('h1'), new RegExp(m.json.status));
  });
});

t.test('admin: logs posted to /logs appear in the logs view and the overview chart; detail; drill-down; back and forward', async (t) => {
  const bucket = (Math.floor(nowSec() / 3600) - 3) * 3600;
  const records = Array.from({ length: 12 }, (_, i) => ({
    master_id: tenant.id,
    key_id: 7,
    model: i % 3 === 0 ? 'model-b' : 'model-a',
    group: 'default',
    status_code: i === 5 ? 502 : 200,
    latency_ms: 100 + i,
    tokens_in: 10 + i,
    tokens_out: 5,
    request_body: JSON.stringify({ messages: [{ role: 'user', content: `hello ${i}` }] }),
    response_body: JSON.stringify({ ok: true, n: i }),
    error_message: i === 5 ? 'upstream failed' : '',
    // All in one hourly bucket three hours ago, well inside the overview's 24-hour window whatever the minute.
    createdAt: new Date((bucket + 1800 + (i % 3)) * 1000).toISOString(),
  }));
  const ingest = await svc.request('POST', '/logs', { body: records });
  t.equal(ingest.status, 202);
  await svc.service.system.ask('logs', 'flush');

  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken, '/console/logs');
    cp.view = 'logs';
    await settled(cp.page, 'logs');
    t.equal((await cp.page.textContent('.pager .total'))!.trim(), '12', 'the exact total');
    t.equal(await cp.page.locator('table[aria-label="log records"] tbody tr').count(), 12);
    await screenshot(cp.page, 'admin-logs');

    await cp.page.click('table[aria-label="log records"] tbody tr >> nth=0');
    await cp.page.waitForSelector('aside.detail .request-body');
    const body = (await cp.page.textContent('aside.detail .request-body'))!;
    t.match(body, /"messages": \[\n/, 'the request body is pretty-printed');
    t.match(cp.page.url(), /detail=\d+/, 'the open record is in the address');
    await screenshot(cp.page, 'admin-log-detail');

    await cp.page.fill('form[aria-label="log filters"] input[name="model"]', 'model-b');
    await cp.page.click('form[aria-label="log filters"] button[type="submit"]');
    await waitText(cp.page, '.pager .total', '4');
    t.match(cp.page.url(), /model=model-b/, 'filters are in the address');
    await cp.page.goBack();
    await waitText(cp.page, '.pager .total', '12');
    t.notMatch(cp.page.url(), /model=/, 'back restores the previous filters');
    await cp.page.goForward();
    await waitText(cp.page, '.pager .total', '4');
    t.pass('forward too');

    await cp.page.click('form[aria-label="log filters"] input[name="error_only"]');
    await cp.page.fill('form[aria-label="log filters"] input[name="model"]', '');
    await cp.page.click('form[aria-label="log filters"] button[type="submit"]');
    await waitText(cp.page, '.pager .total', '1');
    t.match(await cp.page.textContent('table[aria-label="log records"]'), /upstream failed/, 'errors only');

    // Filter choices: the values present, with their counts; the status classes of the window.
    t.equal(await cp.page.locator('#choices-models option').count(), 2, 'two models present');
    t.match(await cp.page.getAttribute('#choices-models option >> nth=0', 'label'), /model-a \(8 requests\)/, 'busiest first, with its count');
    t.match(await cp.page.textContent('[data-testid="status-classes"]'), /2xx 11 · 5xx 1/);

    // CSV export of the filtered view: as many rows as the view's total.
    const [download] = await Promise.all([cp.page.waitForEvent('download'), cp.page.click('text=Export CSV')]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split('\n');
    t.equal(csv.length - 1, 1, 'the export has the one errors-only row (plus the header)');
    t.match(csv[1], /upstream failed/);

    await open(cp, 'overview', '/console/overview');
    const legend = await cp.page.textContent('.chart');
    t.match(legend, /model-a/, 'the traffic chart has the posted model');
    t.match(legend, /model-b/);
    t.match(await cp.page.textContent('[data-testid="summary"]'), /Requests/);
    t.match(await cp.page.textContent('[data-testid="freshness"]'), /Data up to/, 'the chart says how fresh it is');
    t.match(await cp.page.textContent('[data-testid="pipeline"]'), /Dead-lettered/, 'refused records are shown');
    await screenshot(cp.page, 'admin-overview');

    // A click on the bucket's point (model-a 8, model-b 4) opens the logs of that bucket and series.
    cp.view = 'logs';
    await clickBucket(cp, bucket, 0.02);
    await settled(cp.page, 'logs');
    let url = new URL(cp.page.url());
    t.ok(url.searchParams.get('since') && url.searchParams.get('until'), `the bucket is set (${url.search})`);
    t.equal(url.searchParams.get('model'), 'model-a', 'the series clicked is the model filter');
    t.equal(Number(url.searchParams.get('since')), bucket, 'that bucket');
    t.equal(Number(url.searchParams.get('until')) - Number(url.searchParams.get('since')), 3600, 'one hour');
    t.equal((await cp.page.textContent('.pager .total'))!.trim(), '8', 'the logs of that bucket and model');

    // With top_n=1, model-b is the `other` series: its point opens the bucket without a model filter, and says so.
    // (A press on a point that uPlot redraws under the pointer gets no 'click' from the browser: the chart reads
    // press and release instead, and this point, at mid-height, is such a one.)
    await t.test('the `other` point opens its bucket without a model filter', async (t) => {
      await open(cp, 'overview', '/console/overview?top_n=1');
      t.match(await cp.page.textContent('.chart'), /other/, 'the chart has the `other` series');
      cp.view = 'logs';
      await clickBucket(cp, bucket, 0.5);
      await settled(cp.page, 'logs');
      url = new URL(cp.page.url());
      t.equal(url.searchParams.get('model'), null, 'no model filter for `other`');
      t.equal(url.searchParams.get('series'), 'other');
      t.match(await cp.page.textContent('.notice'), /other/, 'the view says so');
      t.equal((await cp.page.textContent('.pager .total'))!.trim(), '12');
    });
  });
});

t.test('admin: change a flag; a 400 shows the field message', async (t) => {
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken, '/console/features');
    cp.view = 'features';
    await settled(cp.page, 'features');
    const before = (await svc.request('GET', '/admin/features', admin)).json.log_retention_days as number;
    await cp.page.fill('input[name="log_retention_days"]', String(before + 3));
    await cp.page.click('text=Save changes');
    await cp.page.waitForSelector('.saved');
    t.match(await cp.page.textContent('.saved'), /log_retention_days/);
    t.equal((await svc.request('GET', '/admin/features', admin)).json.log_retention_days, before + 3, 'the flag changed');

    cp.allowStatus.add(400);
    await cp.page.fill('input[name="log_retention_days"]', 'soon');
    await cp.page.click('text=Save changes');
    await cp.page.waitForSelector('[data-field="log_retention_days"] .field-error');
    t.match(await cp.page.textContent('[data-field="log_retention_days"] .field-error'), /integer/, 'the API message at the field');
    t.match(await cp.page.textContent('.state.error'), /X-Request-ID/);
    await screenshot(cp.page, 'admin-features-400');
  });
});

t.test('admin: acknowledge an alert', async (t) => {
  const a = await svc.request('POST', '/admin/alerts', { ...admin, body: { type: 'custom', severity: 'warning', message: 'disk nearly full' } });
  t.equal(a.status, 201);
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken, '/console/alerts');
    cp.view = 'alerts';
    await settled(cp.page, 'alerts');
    await cp.page.click('table[aria-label="alerts"] >> text=Acknowledge');
    await cp.page.waitForSelector('table[aria-label="alerts"] >> text=Resolve');
    t.equal((await svc.request('GET', `/admin/alerts/${a.json.id}`, admin)).json.status, 'acknowledged');
  });
});

t.test("admin: edit a child key's limits and suspend it on its master's page", async (t) => {
  const k = await svc.request('POST', `/admin/masters/${tenant.id}/keys`, { ...admin, body: { name: 'limits-key' } });
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken, `/console/tenants/${tenant.id}`);
    cp.view = 'tenant';
    await settled(cp.page, 'tenant');
    const row = cp.page.locator('table[aria-label="child keys"] tbody tr', { hasText: 'limits-key' });
    await row.locator('button', { hasText: 'Edit' }).click();
    await cp.page.fill('form[aria-label="edit child key"] input[name="quota_limit"]', '5000');
    await cp.page.selectOption('form[aria-label="edit child key"] select[name="quota_reset_type"]', 'monthly');
    await screenshot(cp.page, 'admin-tenant-key-edit');
    await cp.page.click('form[aria-label="edit child key"] button[type="submit"]');
    await cp.page.waitForSelector('dialog[open]', { state: 'detached' });
    t.match((await svc.request('GET', `/admin/keys/${k.json.id}`, admin)).json, { quota_limit: 5000, quota_reset_type: 'monthly', status: 'active' }, 'the limits changed');
    await row.locator('button', { hasText: 'Suspend' }).click();
    t.match(await cp.page.textContent('dialog[open]'), /refused until it is resumed/, 'the confirmation says what happens');
    await cp.page.click('dialog[open] button.danger');
    await row.locator('button', { hasText: 'Resume' }).waitFor();
    t.equal((await svc.request('GET', `/admin/keys/${k.json.id}`, admin)).json.status, 'suspended');
    t.equal((await svc.request('GET', '/auth/whoami', { token: k.json.key_secret })).status, 401, 'the suspended key is refused');
    await screenshot(cp.page, 'admin-tenant-keys');
    await row.locator('button', { hasText: 'Resume' }).click();
    await cp.page.click('dialog[open] button.primary');
    await row.locator('button', { hasText: 'Suspend' }).waitFor();
    t.equal((await svc.request('GET', '/auth/whoami', { token: k.json.key_secret })).status, 200, 'resumed');
  });
});

t.test('admin: create and edit one upstream key; a 400 shows at its field', async (t) => {
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken, '/console/upstreams');
    cp.view = 'upstreams';
    await settled(cp.page, 'upstreams');
    await cp.page.click('text=New key');
    await cp.page.fill('form[aria-label="upstream key"] input[name="api_key"]', 'sk-console-made-9876');
    await cp.page.fill('form[aria-label="upstream key"] input[name="weight"]', '7');
    await cp.page.click('form[aria-label="upstream key"] button[type="submit"]');
    await cp.page.waitForSelector('table[aria-label="upstream keys"] >> text=9876');
    const made = ((await svc.request('GET', '/admin/api-keys?limit=100', admin)).json.items as Array<{ id: number; api_key: string; weight: number; status: string }>).find((k) => k.api_key.endsWith('9876'))!;
    t.match(made, { weight: 7, status: 'active' }, 'created with its weight');
    t.equal((await svc.request('GET', `/admin/api-keys/${made.id}`, admin)).json.api_key, 'sk-console-made-9876', 'with the secret typed');

    const row = cp.page.locator('table[aria-label="upstream keys"] tbody tr', { hasText: '9876' });
    await row.locator('button', { hasText: 'Edit' }).click();
    cp.allowStatus.add(400);
    await cp.page.fill('form[aria-label="upstream key"] input[name="weight"]', 'heavy');
    await cp.page.click('form[aria-label="upstream key"] button[type="submit"]');
    await cp.page.waitForSelector('[data-field="weight"] .field-error');
    t.match(await cp.page.textContent('[data-field="weight"] .field-error'), /integer/, 'the API message at the field');
    await cp.page.fill('form[aria-label="upstream key"] input[name="weight"]', '3');
    await cp.page.selectOption('form[aria-label="upstream key"] select[name="status"]', 'manual_disabled');
    await cp.page.click('form[aria-label="upstream key"] button[type="submit"]');
    await cp.page.waitForSelector('dialog[open]', { state: 'detached' });
    t.match((await svc.request('GET', `/admin/api-keys/${made.id}`, admin)).json, { weight: 3, status: 'manual_disabled', api_key: 'sk-console-made-9876' }, 'edited; the secret left empty is unchanged');
    await screenshot(cp.page, 'admin-upstreams-keys');
  });
});

t.test('empty, loading and error states (screenshots)', async (t) => {
  const quiet = await svc.request('POST', '/admin/masters', { ...admin, body: { name: 'quiet', group: 'default' } });
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken, '/console/logs?model=no-such-model');
    cp.view = 'logs';
    await settled(cp.page, 'logs');
    t.match(await cp.page.textContent('.state.empty'), /No log records match/);
    await screenshot(cp.page, 'state-empty-logs');
    await open(cp, 'tenant', `/console/tenants/${quiet.json.id}`);
    t.match(await cp.page.textContent('main#content'), /No traffic in the last 7 days/);
    t.match(await cp.page.textContent('main#content'), /No child keys yet/);
    await screenshot(cp.page, 'state-empty-tenant');

    cp.allowStatus.add(404);
    await open(cp, 'tenant', '/console/tenants/999999');
    await cp.page.waitForSelector('.state.error');
    t.match(await cp.page.textContent('.state.error'), /not found[\s\S]*X-Request-ID/i, 'the message and the request id');
    await screenshot(cp.page, 'state-error-tenant');

    // The realtime answer held back in the browser a moment: the tiles' loading state.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await cp.page.route('**/admin/realtime', async (route) => {
      await held;
      await route.continue();
    });
    cp.view = 'overview';
    await cp.page.evaluate(`history.pushState(null, '', '/console/'); dispatchEvent(new PopStateEvent('popstate'));`);
    await cp.page.waitForSelector('.state.loading');
    await screenshot(cp.page, 'state-loading-overview');
    release();
    await settled(cp.page, 'overview');
    await cp.page.unroute('**/admin/realtime');
    cp.calls.length = 0; // not calls a view makes when it opens: kept out of the bench's list
  });
});

t.test('admin: every view opens without an error (screenshots)', async (t) => {
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken);
    cp.view = 'overview';
    await settled(cp.page, 'overview');
    const views: Array<[string, string]> = [
      ['overview', '/console/'],
      ['logs', '/console/logs'],
      ['tenants', '/console/tenants'],
      ['tenant', `/console/tenants/${tenant.id}`],
      ['upstreams', '/console/upstreams'],
      ['models', '/console/models'],
      ['routing', '/console/routing'],
      ['alerts', '/console/alerts'],
      ['features', '/console/features'],
      ['operations', '/console/operations'],
    ];
    for (const [view, path] of views) {
      await open(cp, view, path);
      t.equal(await cp.page.locator('.state.error').count(), 0, `${view}: no error state`);
      await screenshot(cp.page, `admin-${view}`);
    }
    // Keyboard: the navigation is reachable with Tab and opens a view with Enter.
    await cp.page.focus('nav.sidebar a >> text=Logs');
    cp.view = 'logs';
    await cp.page.keyboard.press('Enter');
    await settled(cp.page, 'logs');
    t.match(cp.page.url(), /\/console\/logs$/);
  });
});

t.test('admin: dead letters on the Operations page: replay one, delete another, each confirmed', async (t) => {
  // Rows the engine refuses, crafted below the HTTP path as test/logs/dead-letters.test.ts does: POISON reaches
  // ClickHouse as a lone surrogate (Code 25). Master 990 so that no other subtest's counts move.
  const ch = svc.service.context.clickhouse;
  const real = ch.insert.bind(ch);
  ch.insert = (table, rows, options) => real(table, Buffer.from(rows.toString().replaceAll('"POISON"', '"\\ud800"')), options);
  try {
    for (const n of [1, 2]) {
      t.equal((await svc.request('POST', '/logs', { body: Array.from({ length: n }, () => ({ master_id: 990, key_id: 1, status_code: 200, model: 'POISON' })) })).status, 202);
      await svc.service.system.ask('logs', 'flush');
    }
  } finally {
    ch.insert = real;
  }
  const letters = (await svc.request('GET', '/admin/logs/dead-letters', admin)).json as { items: Array<{ id: string; records: number }>; records: number };
  t.equal(letters.records, 3, 'three records dead-lettered');
  await withPage(t, 'admin', async (cp) => {
    await signIn(cp, adminToken, '/console/operations');
    cp.view = 'operations';
    await settled(cp.page, 'operations');
    t.equal(await cp.page.locator('table[aria-label="dead letters"] tbody tr').count(), letters.items.length);
    await screenshot(cp.page, 'admin-operations-dead-letters');
    const one = letters.items.find((l) => l.records === 1)!;
    const two = letters.items.find((l) => l.records === 2)!;
    await cp.page.locator('table[aria-label="dead letters"] tbody tr', { hasText: one.id }).first().locator('button', { hasText: 'Replay' }).click();
    t.match(await cp.page.textContent('dialog[open]'), new RegExp(`1 records of dead letter ${one.id}`), 'the confirmation names the letter and its records');
    await cp.page.click('dialog[open] button.primary');
    await cp.page.waitForSelector('.notice >> text=1 records stored');
    const rest = cp.page.locator('table[aria-label="dead letters"] tbody tr');
    await cp.page.waitForFunction(() => (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll('table[aria-label="dead letters"] tbody tr').length === 1);
    await rest.first().locator('button', { hasText: 'Delete' }).click();
    t.match(await cp.page.textContent('dialog[open]'), new RegExp(`2 records of dead letter ${two.id} are discarded`));
    await cp.page.click('dialog[open] button.danger');
    await cp.page.waitForSelector('text=No dead letters');
  });
  const after = (await svc.request('GET', '/admin/logs/pipeline', admin)).json;
  t.equal(after.dead_lettered, 0, 'none left');
  const replayed = (await svc.request('GET', '/admin/logs?master_id=990', admin)).json;
  t.equal(replayed.total, 1, 'the replayed record is stored (it is no longer refused)');
});

t.test('tenant: own usage, keys (issue with the secret once) and logs', async (t) => {
  await withPage(t, 'master', async (cp) => {
    await signIn(cp, tenant.master_key);
    cp.view = 'usage';
    await settled(cp.page, 'usage');
    t.match(await cp.page.textContent('.who'), /master tenant-one/);
    t.equal(await cp.page.locator('nav.sidebar >> text=Tenants').count(), 0, 'no admin views');
    t.match(await cp.page.textContent('[data-testid="freshness"]'), /Data up to/, 'the chart says how fresh its data is');
    await screenshot(cp.page, 'tenant-usage');
    await open(cp, 'keys', '/console/keys');
    await cp.page.click('text=Issue key');
    await cp.page.fill('form[aria-label="issue child key"] input[name="name"]', 'self-issued');
    await cp.page.click('form[aria-label="issue child key"] button[type="submit"]');
    await cp.page.waitForSelector('.secret-value');
    const secret = (await cp.page.textContent('.secret-value'))!.trim();
    t.equal((await svc.request('GET', '/auth/whoami', { token: secret })).json.master_id, tenant.id);
    await cp.page.click('text=I have copied it');
    await cp.page.waitForSelector('table[aria-label="child keys"] >> text=self-issued');
    const own = cp.page.locator('table[aria-label="child keys"] tbody tr', { hasText: 'self-issued' });
    await own.locator('button', { hasText: 'Suspend' }).click();
    await cp.page.click('dialog[open] button.danger');
    await own.locator('button', { hasText: 'Resume' }).waitFor();
    t.equal((await svc.request('GET', '/auth/whoami', { token: secret })).status, 401, 'its own key suspended');
    await screenshot(cp.page, 'tenant-keys');
    await open(cp, 'logs', '/console/logs');
    t.equal((await cp.page.textContent('.pager .total'))!.trim(), '12', 'own logs');
    t.equal(await cp.page.locator('input[name="master_id"]').count(), 0, 'no master filter for a tenant');
    await screenshot(cp.page, 'tenant-logs');
    await open(cp, 'usage', '/console/usage?period=last7d');
    await screenshot(cp.page, 'tenant-usage-7d');
  });
});

t.test('the recorded API calls are saved for the console bench scenario', async (t) => {
  for (const [role, calls] of Object.entries(recorded)) {
    t.ok(calls.length > 0, `${role}: ${calls.length} calls recorded`);
    saveCalls(role, calls);
  }
  const views = new Set(recorded.admin!.map((c) => c.view));
  for (const v of ['overview', 'logs', 'tenant']) t.ok(views.has(v), `calls of the ${v} view`);
  t.ok(recorded.admin!.some((c) => c.path.startsWith('/admin/dashboard/summary')), 'the overview asks the summary');
});
