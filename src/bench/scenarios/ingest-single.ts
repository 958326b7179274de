/**
 * ingest-single: POST /logs with one ~400-byte record per request, 100
 * connections x 10 pipelined, 10 s per round, against the transport ceiling:
 * a bare uWS server (its own process) under the same load, in paired rounds
 * (harness/rounds.ts). Both servers stay up; only one is loaded at a time.
 * Afterwards every 2xx must be in ClickHouse, exactly once.
 */
import { ackCost, ackRows, ackTarget } from '../harness/ack-cost.js';
import { startCeiling, type Ceiling } from '../harness/ceiling.js';
import { cpuMicros, describeCpu, withCpu } from '../harness/cpu.js';
import { runLoad, type LoadOptions } from '../harness/load.js';
import { storedLogs, storedSince } from '../harness/log-count.js';
import { okResult, target, type ScenarioResult } from '../harness/results.js';
import { median, pairedRounds } from '../harness/rounds.js';
import { sampleRss } from '../harness/rss.js';
import { startService, type BenchService } from '../harness/service.js';
import { mb, pct, printTable } from '../harness/table.js';
import { singleBodies } from '../fixtures/log-records.js';
import type { ScenarioOptions } from './options.js';

const name = 'ingest-single';
const warmupSeconds = 2;

/** The scenario's load: one record per request, 100 connections x 10 pipelined (bench:compare uses it too). */
export const ingestSingleLoad = (seconds: number): Omit<LoadOptions, 'base'> => ({
  path: '/logs',
  headers: { 'content-type': 'application/json' },
  bodies: singleBodies(64),
  connections: 100,
  pipelining: 10,
  seconds,
});

export async function ingestSingle(opts: ScenarioOptions = {}): Promise<ScenarioResult> {
  const seconds = opts.seconds ?? 10;
  const load = ingestSingleLoad(seconds);

  let svc: BenchService | undefined;
  let ceiling: Ceiling | undefined;
  try {
    svc = await startService(opts.serviceEnv, opts.nodeArgs);
    ceiling = await startCeiling();
    const s = svc;
    const c = ceiling;
    const before = await storedLogs(s.base);
    const warm = await runLoad({ ...load, base: s.base, seconds: warmupSeconds });
    await runLoad({ ...load, base: c.base, seconds: warmupSeconds });

    const rss = sampleRss(s.pid);
    const paired = await pairedRounds(
      opts.rounds ?? 3,
      () => withCpu(s.pid, () => runLoad({ ...load, base: s.base })),
      () => withCpu(c.pid, () => runLoad({ ...load, base: c.base })),
      (sv, ce) => sv.value.rps / ce.value.rps,
    );
    const peakRss = rss.stop();
    const runs = paired.rounds.map((r) => r.service.value);
    // The writer holds records for up to logs.flush_ms: wait for the count to settle.
    const accepted = warm.ok + runs.reduce((n, r) => n + r.ok, 0);
    const stored = await storedSince(s.base, before, accepted);
    // The service acknowledges durably (the default); the same load on a memory-mode service, same run.
    const ack = await ackCost(s.base, opts.rounds ?? 3, opts.nodeArgs, async (base) => (await runLoad({ ...load, base })).rps);

    const ratio = paired.ratio;
    const rounds = paired.rounds.map((r) => ({
      service_rps: r.service.value.rps,
      ceiling_rps: r.ceiling.value.rps,
      ratio: r.ratio,
      service_p99_ms: r.service.value.latencyMs.p99,
      ceiling_p99_ms: r.ceiling.value.latencyMs.p99,
      service_cpu_cores: r.service.server.cores,
      service_cpu_us_per_request: cpuMicros(r.service.server, r.service.value.answered),
      ceiling_cpu_us_per_request: cpuMicros(r.ceiling.server, r.ceiling.value.answered),
      client_cpu_us_per_request: cpuMicros(r.service.client, r.service.value.answered),
    }));
    const med = (k: keyof (typeof rounds)[number]): number => median(rounds.map((r) => r[k]));
    const failures = runs.reduce((n, r) => n + r.errors + r.non2xx + r.unanswered, 0);
    const worstP99 = Math.max(...runs.map((r) => r.latencyMs.p99));
    const last = paired.rounds[paired.rounds.length - 1]!;

    printTable(`${name}: 1 record per request, ${load.connections} connections x ${load.pipelining} pipelined, ${rounds.length} rounds of ${seconds} s`, [
      ['ratio service/ceiling (median of rounds)', pct(ratio)],
      ['  per round', rounds.map((r) => pct(r.ratio)).join(', ')],
      ['service req/s (2xx), per round', rounds.map((r) => Math.round(r.service_rps)).join(', ')],
      ['ceiling req/s (bare uWS), per round', rounds.map((r) => Math.round(r.ceiling_rps)).join(', ')],
      ['errors + non-2xx + unanswered', failures],
      ['service p99 latency (ms), per round', rounds.map((r) => r.service_p99_ms).join(', ')],
      ['ceiling p99 latency (ms), per round', rounds.map((r) => r.ceiling_p99_ms).join(', ')],
      ['service CPU us/request (median)', med('service_cpu_us_per_request')],
      ['ceiling CPU us/request (median)', med('ceiling_cpu_us_per_request')],
      ['load generator CPU us/request', med('client_cpu_us_per_request')],
      ['service CPU, last round', describeCpu(last.service.server)],
      ['service peak RSS during the rounds', mb(peakRss)],
      ['service idle RSS (restart / first boot)', `${mb(s.idleRss)} / ${mb(s.firstBootRss)}`],
      ['accepted (2xx, incl. warm-up)', accepted],
      ['stored in ClickHouse', stored],
      ['stored == accepted', stored === accepted ? 'yes' : 'NO'],
      ...ackRows(ack, 'req/s'),
    ]);
    return okResult(
      name,
      { name: 'service req/s / ceiling req/s (median of paired rounds)', value: ratio },
      {
        seconds,
        rounds: rounds.length,
        connections: load.connections,
        pipelining: load.pipelining,
        service_rps: med('service_rps'),
        ceiling_rps: med('ceiling_rps'),
        failures,
        statuses: JSON.stringify(runs.map((r) => r.statuses)),
        p99_ms_worst: worstP99,
        p99_ms_median: med('service_p99_ms'),
        ceiling_p99_ms_median: med('ceiling_p99_ms'),
        service_cpu_us_per_request: med('service_cpu_us_per_request'),
        ceiling_cpu_us_per_request: med('ceiling_cpu_us_per_request'),
        client_cpu_us_per_request: med('client_cpu_us_per_request'),
        service_cpu_threads_last_round: describeCpu(last.service.server, 8),
        service_peak_rss_bytes: peakRss,
        service_idle_rss_bytes: s.idleRss,
        service_first_boot_rss_bytes: s.firstBootRss,
        accepted,
        stored,
        stored_equals_accepted: stored === accepted,
        ack_durable_over_memory: ack.ratio,
        ack_durable_rps: JSON.stringify(ack.durable),
        ack_memory_rps: JSON.stringify(ack.memory),
      },
      [
        target('ratio >= 60% of the ceiling', ratio, 0.6),
        target('zero errors / non-2xx', failures, 0, true),
        target('p99 < 25 ms (worst round)', worstP99, 25 - 1e-9, true),
        target('peak RSS < 400 MB', (peakRss ?? Infinity) / 1e6, 400 - 1e-9, true),
        target('stored == accepted', stored === accepted ? 1 : 0, 1),
        ackTarget(ack),
      ],
      rounds,
    );
  } finally {
    await ceiling?.stop();
    await svc?.stop();
  }
}
