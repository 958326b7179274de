/**
 * ingest-floor: ingest-single's load against three servers in rotating rounds:
 * the service, the floor (the same storing work inline on bare uWS, without
 * the service's framework: harness/floor-server.ts) and the bare uWS ceiling.
 * floor/ceiling is what any implementation with chDB embedded reaches on this
 * machine; service/floor (the scenario's ratio, guarded by bench:check) is
 * what the service's framework costs against that. Both stored counts must
 * equal what was accepted.
 */
import { startCeiling, type Ceiling } from '../harness/ceiling.js';
import { cpuMicros, describeCpu, withCpu } from '../harness/cpu.js';
import { startFloor, type Floor } from '../harness/floor.js';
import { runLoad, type LoadResult } from '../harness/load.js';
import { storedLogs, storedSince } from '../harness/log-count.js';
import { okResult, target, type ScenarioResult } from '../harness/results.js';
import { median, rotatingRounds } from '../harness/rounds.js';
import { sampleRss } from '../harness/rss.js';
import { startService, type BenchService } from '../harness/service.js';
import { mb, pct, printTable } from '../harness/table.js';
import { ingestSingleLoad } from './ingest-single.js';
import type { ScenarioOptions } from './options.js';

const name = 'ingest-floor';
const warmupSeconds = 2;

export async function ingestFloor(opts: ScenarioOptions = {}): Promise<ScenarioResult> {
  const seconds = opts.seconds ?? 10;
  const load = ingestSingleLoad(seconds);

  let svc: BenchService | undefined;
  let floor: Floor | undefined;
  let ceiling: Ceiling | undefined;
  try {
    svc = await startService({}, opts.nodeArgs);
    floor = await startFloor();
    ceiling = await startCeiling();
    const servers = [svc, floor, ceiling] as const;
    const [s, f] = servers;
    const before = [await storedLogs(s.base), await storedLogs(f.base)];
    const warm: LoadResult[] = [];
    for (const server of servers) warm.push(await runLoad({ ...load, base: server.base, seconds: warmupSeconds }));

    const rss = [sampleRss(s.pid), sampleRss(f.pid)];
    const measured = await rotatingRounds(
      opts.rounds ?? 3,
      servers.map((server) => () => withCpu(server.pid, () => runLoad({ ...load, base: server.base }))),
    );
    const [svcRss, floorRss] = rss.map((r) => r.stop());
    const accepted = [0, 1].map((k) => warm[k]!.ok + measured.reduce((n, r) => n + r[k]!.value.ok, 0));
    const stored = [await storedSince(s.base, before[0]!, accepted[0]!), await storedSince(f.base, before[1]!, accepted[1]!)];

    const rounds = measured.map(([sv, fl, ce]) => ({
      service_rps: sv!.value.rps,
      floor_rps: fl!.value.rps,
      ceiling_rps: ce!.value.rps,
      service_per_floor: sv!.value.rps / fl!.value.rps,
      floor_per_ceiling: fl!.value.rps / ce!.value.rps,
      service_per_ceiling: sv!.value.rps / ce!.value.rps,
      service_p99_ms: sv!.value.latencyMs.p99,
      floor_p99_ms: fl!.value.latencyMs.p99,
      ceiling_p99_ms: ce!.value.latencyMs.p99,
      service_cpu_us_per_request: cpuMicros(sv!.server, sv!.value.answered),
      floor_cpu_us_per_request: cpuMicros(fl!.server, fl!.value.answered),
      ceiling_cpu_us_per_request: cpuMicros(ce!.server, ce!.value.answered),
    }));
    const med = (k: keyof (typeof rounds)[number]): number => median(rounds.map((r) => r[k]));
    const failures = measured.flat().reduce((n, r) => n + r.value.errors + r.value.non2xx + r.value.unanswered, 0);
    const last = measured[measured.length - 1]!;
    const agree = stored[0] === accepted[0] && stored[1] === accepted[1];
    const ratio = med('service_per_floor');

    printTable(`${name}: ingest-single's load on the service, the floor and the ceiling, ${rounds.length} rotating rounds of ${seconds} s`, [
      ['service / floor (median of rounds)', pct(ratio)],
      ['floor / ceiling: the reach of chDB embedded', pct(med('floor_per_ceiling'))],
      ['service / ceiling', pct(med('service_per_ceiling'))],
      ['req/s service / floor / ceiling, per round', rounds.map((r) => `${Math.round(r.service_rps)} / ${Math.round(r.floor_rps)} / ${Math.round(r.ceiling_rps)}`).join(', ')],
      ['p99 ms service / floor / ceiling (median)', `${med('service_p99_ms')} / ${med('floor_p99_ms')} / ${med('ceiling_p99_ms')}`],
      ['CPU us/request service / floor / ceiling', `${med('service_cpu_us_per_request')} / ${med('floor_cpu_us_per_request')} / ${med('ceiling_cpu_us_per_request')}`],
      ['floor CPU, last round', describeCpu(last[1]!.server)],
      ['service CPU, last round', describeCpu(last[0]!.server)],
      ['peak RSS service / floor', `${mb(svcRss ?? null)} / ${mb(floorRss ?? null)}`],
      ['errors + non-2xx + unanswered (all servers)', failures],
      ['accepted = stored: service, floor', `${accepted[0]} = ${stored[0]}, ${accepted[1]} = ${stored[1]}`],
    ]);
    return okResult(
      name,
      { name: 'service req/s / floor req/s (median of rotating rounds)', value: ratio },
      {
        seconds,
        rounds: rounds.length,
        floor_per_ceiling: med('floor_per_ceiling'),
        service_per_ceiling: med('service_per_ceiling'),
        service_rps: med('service_rps'),
        floor_rps: med('floor_rps'),
        ceiling_rps: med('ceiling_rps'),
        service_p99_ms_median: med('service_p99_ms'),
        floor_p99_ms_median: med('floor_p99_ms'),
        ceiling_p99_ms_median: med('ceiling_p99_ms'),
        service_cpu_us_per_request: med('service_cpu_us_per_request'),
        floor_cpu_us_per_request: med('floor_cpu_us_per_request'),
        ceiling_cpu_us_per_request: med('ceiling_cpu_us_per_request'),
        floor_cpu_threads_last_round: describeCpu(last[1]!.server, 8),
        service_peak_rss_bytes: svcRss ?? null,
        floor_peak_rss_bytes: floorRss ?? null,
        failures,
        service_accepted: accepted[0]!,
        service_stored: stored[0]!,
        floor_accepted: accepted[1]!,
        floor_stored: stored[1]!,
      },
      [
        target('zero errors / non-2xx', failures, 0, true),
        target('stored == accepted (service and floor)', agree ? 1 : 0, 1),
      ],
      rounds,
    );
  } finally {
    await ceiling?.stop();
    await floor?.stop();
    await svc?.stop();
  }
}
