/**
 * whoami: GET /auth/whoami with a child key against GET /status, both on the
 * same service process, 100 connections x 10 pipelined, in paired rounds.
 * /status is the cheapest authenticated-free JSON route, so the ratio is what
 * identifying a child key costs on top of the HTTP layer (hashing the token,
 * the store metadata checks, the identity view).
 */
import { cpuMicros, withCpu } from '../harness/cpu.js';
import { bearer, call } from '../harness/http.js';
import { runLoad, type LoadOptions } from '../harness/load.js';
import { okResult, target, type ScenarioResult } from '../harness/results.js';
import { median, pairedRounds } from '../harness/rounds.js';
import { benchAdminToken, startService, type BenchService } from '../harness/service.js';
import { pct, printTable } from '../harness/table.js';
import { pollUntil } from '../harness/wait.js';
import type { ScenarioOptions } from './options.js';

const name = 'whoami';
const warmupSeconds = 2;

export async function whoami(opts: ScenarioOptions = {}): Promise<ScenarioResult> {
  const seconds = opts.seconds ?? 10;
  const shape = { method: 'GET' as const, bodies: [], connections: 100, pipelining: 10, seconds };
  let svc: BenchService | undefined;
  try {
    svc = await startService({}, opts.nodeArgs);
    const s = svc;
    const keySecret = await issueKey(s.base);
    const probe = await call(s.base, 'GET', '/auth/whoami', { headers: bearer(keySecret) });
    if (probe.status !== 200 || probe.json?.type !== 'key') throw new Error(`whoami answered ${probe.status}: ${JSON.stringify(probe.json)}`);

    const identify: Omit<LoadOptions, 'base'> = { ...shape, path: '/auth/whoami', headers: bearer(keySecret) };
    const status: Omit<LoadOptions, 'base'> = { ...shape, path: '/status', headers: {} };
    await runLoad({ ...identify, base: s.base, seconds: warmupSeconds });
    await runLoad({ ...status, base: s.base, seconds: warmupSeconds });

    const paired = await pairedRounds(
      opts.rounds ?? 3,
      () => withCpu(s.pid, () => runLoad({ ...identify, base: s.base })),
      () => withCpu(s.pid, () => runLoad({ ...status, base: s.base })),
      (w, st) => w.value.rps / st.value.rps,
    );
    const rounds = paired.rounds.map((r) => ({
      whoami_rps: r.service.value.rps,
      status_rps: r.ceiling.value.rps,
      ratio: r.ratio,
      whoami_p99_ms: r.service.value.latencyMs.p99,
      status_p99_ms: r.ceiling.value.latencyMs.p99,
      whoami_cpu_us_per_request: cpuMicros(r.service.server, r.service.value.answered),
      status_cpu_us_per_request: cpuMicros(r.ceiling.server, r.ceiling.value.answered),
    }));
    const med = (k: keyof (typeof rounds)[number]): number => median(rounds.map((r) => r[k]));
    const runs = paired.rounds.flatMap((r) => [r.service.value, r.ceiling.value]);
    const failures = runs.reduce((n, r) => n + r.errors + r.non2xx + r.unanswered, 0);

    printTable(`${name}: GET /auth/whoami (child key) vs GET /status, ${shape.connections} connections x ${shape.pipelining} pipelined, ${rounds.length} rounds of ${seconds} s`, [
      ['ratio whoami/status (median of rounds)', pct(paired.ratio)],
      ['  per round', rounds.map((r) => pct(r.ratio)).join(', ')],
      ['whoami req/s, per round', rounds.map((r) => Math.round(r.whoami_rps)).join(', ')],
      ['status req/s, per round', rounds.map((r) => Math.round(r.status_rps)).join(', ')],
      ['errors + non-2xx + unanswered (both)', failures],
      ['whoami p99 latency (ms), per round', rounds.map((r) => r.whoami_p99_ms).join(', ')],
      ['status p99 latency (ms), per round', rounds.map((r) => r.status_p99_ms).join(', ')],
      ['whoami CPU us/request (median)', med('whoami_cpu_us_per_request')],
      ['status CPU us/request (median)', med('status_cpu_us_per_request')],
    ]);
    return okResult(
      name,
      { name: 'whoami req/s / status req/s (median of paired rounds)', value: paired.ratio },
      {
        seconds,
        rounds: rounds.length,
        connections: shape.connections,
        pipelining: shape.pipelining,
        whoami_rps: med('whoami_rps'),
        status_rps: med('status_rps'),
        failures,
        whoami_p99_ms_median: med('whoami_p99_ms'),
        status_p99_ms_median: med('status_p99_ms'),
        whoami_cpu_us_per_request: med('whoami_cpu_us_per_request'),
        status_cpu_us_per_request: med('status_cpu_us_per_request'),
      },
      [target('whoami >= 70% of GET /status', paired.ratio, 0.7), target('zero errors / non-2xx', failures, 0, true)],
      rounds,
    );
  } finally {
    await svc?.stop();
  }
}

/** A master and one child key through the admin API; the key's secret. */
async function issueKey(base: string): Promise<string> {
  const admin = bearer(benchAdminToken);
  const master = await call(base, 'POST', '/admin/masters', { body: { name: 'bench-whoami', group: 'default' }, headers: admin });
  if (master.status !== 201) throw new Error(`creating a master answered ${master.status}: ${JSON.stringify(master.json)}`);
  const key = await call(base, 'POST', `/admin/masters/${master.json.id}/keys`, { body: { name: 'whoami' }, headers: admin });
  if (key.status !== 201) throw new Error(`issuing a key answered ${key.status}: ${JSON.stringify(key.json)}`);
  // Measure the steady state: the key's metadata delivered to the store (else whoami asks the database).
  const delivered = await pollUntil(
    () => call(base, 'GET', '/admin/sync/status', { headers: admin }),
    (a) => a.json?.outbox?.pending === 0,
    { timeoutMs: 10_000 },
  );
  if (!delivered.met) throw new Error(`the outbox did not drain: ${JSON.stringify(delivered.value.json)}`);
  return key.json.key_secret as string;
}
