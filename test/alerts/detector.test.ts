import t from 'tap';
import { adminToken, startTestService } from '../helpers/harness.js';

const svc = await startTestService({ env: { SVC_LOG_FLUSH_MS: '50' } });
t.teardown(() => svc.stop());
const admin = { token: adminToken };
const MIN = 60_000;
const HOUR = 60 * MIN;
const iso = (ms: number) => new Date(ms).toISOString();
// A half-hour mark two days ago: scenarios use their own minutes after it; the daily one lies two days before it.
const B = Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR + 30 * MIN;

type Run = { evaluated_at: string; candidates: number; accepted: number; deduplicated: number; ids: number[] };
/** Runs the detector with the clock 5 s into the minute after `minute`, so that minute is the last complete one. */
const runAfter = (minute: number): Promise<Run> => {
  svc.service.clock.set(minute + MIN + 5000);
  return svc.service.system.ask<Run>('alert-detector', 'run');
};
const thresholds = (body: Record<string, number>) => svc.request('PUT', '/admin/alerts/thresholds', { ...admin, body });
const off = { global_qps: 0, master_rpm: 0, master_tpm: 0, master_rpd: 0, master_tpd: 0 };

/** `n` records of a master at `at` (+ i ms), each with `tokens` tokens (in + out). */
async function traffic(master_id: number, n: number, at: number, tokens = 0): Promise<void> {
  const records = Array.from({ length: n }, (_, i) => ({
    key_id: 1, master_id, status_code: 200, tokens_in: Math.floor(tokens / 2), tokens_out: tokens - Math.floor(tokens / 2),
    createdAt: iso(at + i),
  }));
  const r = await svc.request('POST', '/logs', { body: records });
  if (r.status !== 202) throw new Error(`ingest failed: ${r.text}`);
  await svc.service.system.ask('logs', 'flush');
}

async function alertOf(fingerprint: string): Promise<any[]> {
  const r = await svc.request('GET', `/admin/alerts?type=traffic_spike&search=${encodeURIComponent(fingerprint)}`, admin);
  return (r.json.items as any[]).filter((a) => a.fingerprint === fingerprint);
}

t.test('thresholds: created with defaults on first use; PUT validated', async (t) => {
  const r = await svc.request('GET', '/admin/alerts/thresholds', admin);
  t.equal(r.status, 200);
  t.match(r.json, { global_qps: 100, master_rpm: 600, master_tpm: 200000, master_rpd: 100000, master_tpd: 20000000, min_samples: 10 });
  t.type(r.json.updatedAt, 'string');
  const u = await thresholds({ master_rpm: 50, min_samples: 3 });
  t.equal(u.status, 200);
  t.match(u.json, { global_qps: 100, master_rpm: 50, min_samples: 3, master_tpd: 20000000 }, 'partial update keeps the rest');
  t.same((await svc.request('GET', '/admin/alerts/thresholds', admin)).json, u.json);
  const big = await thresholds({ master_tpd: 5_000_000_000 });
  t.equal(big.json.master_tpd, 5_000_000_000, 'token limits beyond 32 bits');
  const bad: Array<[unknown, string]> = [
    [{ global_qps: -1 }, 'global_qps'],
    [{ master_rpm: 'many' }, 'master_rpm'],
    [{ master_tpm: 1.5 }, 'master_tpm'],
    [{ min_samples: 2 ** 31 }, 'min_samples'],
    [{ master_rpd: null }, 'master_rpd'],
    [{ qps: 5 }, 'qps'],
    [{}, '(body)'],
  ];
  for (const [body, field] of bad) {
    const res = await svc.request('PUT', '/admin/alerts/thresholds', { ...admin, body });
    t.equal(res.status, 400, JSON.stringify(body));
    t.ok(res.json.data[field], `names ${field}: ${JSON.stringify(res.json.data)}`);
  }
  t.equal((await svc.request('GET', '/admin/alerts/thresholds')).status, 401);
  t.equal((await svc.request('GET', '/admin/alerts/thresholds', admin)).json.master_rpm, 50, 'bad updates changed nothing');
});

t.test('per master RPM: warning at the threshold, critical at twice it; details; dedupe', async (t) => {
  await thresholds({ ...off, master_rpm: 10, min_samples: 5 });
  const M = B;
  await traffic(101, 10, M + 1000);
  await traffic(102, 20, M + 20_000);
  await traffic(103, 9, M + 30_000);
  await traffic(109, 50, M + MIN + 1000); // the next minute is not complete yet: not counted
  const run = await runAfter(M);
  t.match(run, { candidates: 2, accepted: 2, deduplicated: 0 });
  const [w] = await alertOf('traffic_spike:master_rpm:101');
  t.match(w, { type: 'traffic_spike', severity: 'warning', status: 'active', source: 'detector', master_id: 101, occurrences: 1 });
  t.same(w.metadata, {
    metric: 'master_rpm', value: 10, threshold: 10, critical_threshold: 20, window: '1m',
    window_start: iso(M), window_end: iso(M + MIN), master_id: 101, samples: 10, min_samples: 5,
  });
  t.equal(w.message, 'master 101: requests per minute 10 reached the threshold 10 over 1m');
  const [c] = await alertOf('traffic_spike:master_rpm:102');
  t.equal(c.severity, 'critical');
  t.equal(c.metadata.value, 20);
  t.same(await alertOf('traffic_spike:master_rpm:103'), [], 'below the threshold');
  t.same(await alertOf('traffic_spike:master_rpm:109'), []);

  const again = await runAfter(M);
  t.match(again, { candidates: 2, accepted: 0, deduplicated: 2 }, 'one open alert per fingerprint');
  t.equal((await alertOf('traffic_spike:master_rpm:101')).length, 1);
  t.equal((await alertOf('traffic_spike:master_rpm:101'))[0].occurrences, 2);
});

t.test('per master TPM counts only with the minimum number of samples', async (t) => {
  await thresholds({ ...off, master_tpm: 100, min_samples: 5 });
  const M = B + 2 * MIN;
  await traffic(104, 4, M + 1000, 1000); // 4000 tokens but only 4 requests
  await traffic(105, 5, M + 1000, 30); // 150 tokens: warning
  await traffic(110, 5, M + 1000, 40); // 200 tokens: critical
  const run = await runAfter(M);
  t.match(run, { candidates: 2, accepted: 2 });
  t.same(await alertOf('traffic_spike:master_tpm:104'), [], 'too few samples');
  const [w] = await alertOf('traffic_spike:master_tpm:105');
  t.match(w, { severity: 'warning', metadata: { metric: 'master_tpm', value: 150, threshold: 100, samples: 5, min_samples: 5, window: '1m' } });
  t.equal((await alertOf('traffic_spike:master_tpm:110'))[0].severity, 'critical');

  await thresholds({ min_samples: 4 });
  const lower = await runAfter(M);
  t.match(lower, { candidates: 3, accepted: 1, deduplicated: 2 });
  t.match((await alertOf('traffic_spike:master_tpm:104'))[0], { severity: 'critical', metadata: { value: 4000, samples: 4 } });
});

t.test('global QPS: warning, escalation while open, cooldown and re-raise after resolve', async (t) => {
  await thresholds({ ...off, global_qps: 1 });
  const M = B + 4 * MIN;
  await traffic(106, 70, M + 1000);
  const first = await runAfter(M);
  t.match(first, { candidates: 1, accepted: 1 });
  const [w] = await alertOf('traffic_spike:global_qps');
  t.match(w, { severity: 'warning', master_id: null, metadata: { metric: 'global_qps', value: 1.17, threshold: 1, critical_threshold: 2, requests: 70, window: '1m' } });
  t.notOk('master_id' in w.metadata);

  await traffic(106, 130, M + MIN + 1000);
  t.match(await runAfter(M + MIN), { candidates: 1, accepted: 0, deduplicated: 1 });
  const [esc] = await alertOf('traffic_spike:global_qps');
  t.match(esc, { id: w.id, severity: 'critical', occurrences: 2, metadata: { value: 2.17, requests: 130 } }, 'the open alert rises to critical');

  t.equal((await svc.request('POST', `/admin/alerts/${w.id}/acknowledge`, admin)).status, 200);
  t.equal((await svc.request('POST', `/admin/alerts/${w.id}/resolve`, admin)).status, 200);
  t.match(await runAfter(M + MIN), { accepted: 0, deduplicated: 1 }, 'within 5 minutes of the last alert: dropped');
  t.equal((await alertOf('traffic_spike:global_qps')).length, 1);

  await traffic(106, 70, M + 6 * MIN + 1000);
  const later = await runAfter(M + 6 * MIN);
  t.match(later, { candidates: 1, accepted: 1, deduplicated: 0 }, 're-raised after resolve and cooldown');
  const both = await alertOf('traffic_spike:global_qps');
  t.equal(both.length, 2);
  t.match(both[0], { status: 'active', severity: 'warning', occurrences: 1 });
  t.equal(both[1].status, 'resolved');

  await thresholds({ global_qps: 0 });
  t.match(await runAfter(M + 6 * MIN), { candidates: 0 }, '0 disables the check');
});

t.test('per master RPD and TPD over the hourly rollup of the last day', async (t) => {
  await thresholds({ ...off, master_rpd: 50, master_tpd: 1000 });
  const D = B - 48 * HOUR;
  await traffic(107, 30, D - 10 * HOUR, 20);
  await traffic(107, 25, D - 5 * MIN, 20);
  await traffic(107, 3, D - 25 * HOUR, 100_000); // older than the window
  await traffic(108, 49, D - 2 * HOUR, 10);
  svc.service.clock.set(D);
  const run = await svc.service.system.ask<Run>('alert-detector', 'run');
  t.match(run, { candidates: 2, accepted: 2 });
  const hourEnd = Math.floor(D / HOUR) * HOUR + HOUR;
  const [rpd] = await alertOf('traffic_spike:master_rpd:107');
  t.match(rpd, { severity: 'warning', master_id: 107 });
  t.same(rpd.metadata, {
    metric: 'master_rpd', value: 55, threshold: 50, critical_threshold: 100, window: '24h',
    window_start: iso(hourEnd - 24 * HOUR), window_end: iso(hourEnd), master_id: 107,
  });
  const [tpd] = await alertOf('traffic_spike:master_tpd:107');
  t.match(tpd, { severity: 'warning', metadata: { metric: 'master_tpd', value: 1100, threshold: 1000 } });
  t.same(await alertOf('traffic_spike:master_rpd:108'), []);
  await thresholds({ master_rpd: 25 });
  t.match(await svc.service.system.ask<Run>('alert-detector', 'run'), { candidates: 3, accepted: 1, deduplicated: 2 });
  t.equal((await alertOf('traffic_spike:master_rpd:107'))[0].severity, 'critical', 'critical at twice the threshold (55 ≥ 50)');
  t.equal((await alertOf('traffic_spike:master_rpd:108'))[0].severity, 'warning');
});

t.test('the detector works without the shared store and without alerts to raise', async (t) => {
  await thresholds({ ...off });
  const run = await runAfter(B);
  t.same(run.candidates, 0);
  t.same([run.accepted, run.deduplicated], [0, 0]);
});
