/**
 * npm run bench:compare -- <a/dist/src/main.js> <b/dist/src/main.js> [--rounds N] [--seconds S]
 *   [--load single|batch] [--env-a NAME=VALUE]... [--env-b NAME=VALUE]...:
 * two builds of the service (or one build under two settings) under ingest-single's load (or ingest-batch's:
 * NDJSON bodies of 1,000 records, 8 connections; rates and CPU then count records), both up at once, in
 * interleaved rounds (B then A, then A then B, ...: harness/rounds.ts), for changes smaller than
 * the drift between two runs of `npm run bench` on a shared machine. Reports
 * per round and as medians: requests/s, CPU a request of the whole service
 * and of its JS thread (the steadier figure), and B - A per round. Both must
 * store exactly what they accepted.
 */
import { CommandLine } from './harness/command-line.js';
import { cpuMicros, withCpu, type CpuUsage } from './harness/cpu.js';
import { runLoad } from './harness/load.js';
import { storedLogs, storedSince } from './harness/log-count.js';
import { median, rotatingRounds } from './harness/rounds.js';
import { benchAdminToken, startService, type BenchService } from './harness/service.js';
import { printTable } from './harness/table.js';
import { BATCH_RECORDS, ingestBatchLoad } from './scenarios/ingest-batch.js';
import { ingestSingleLoad } from './scenarios/ingest-single.js';

interface Sample {
  rps: number;
  cpu: number;
  js: number;
}

const cli = new CommandLine(
  process.argv.slice(2),
  'usage: compare.js <main.js of A> <main.js of B> [--rounds N] [--seconds S] [--load single|batch] [--env-a K=V]... [--env-b K=V]...',
);
const rounds = cli.whole('--rounds', 8);
const envOf = (name: string): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const kv of cli.all(name)) {
    const [k, ...v] = kv.split('=');
    if (k) env[k] = v.join('=');
  }
  return env;
};
const envA = envOf('--env-a');
const envB = envOf('--env-b');
const loadName = cli.choice('--load', ['single', 'batch']);
const seconds = cli.positive('--seconds', 5);
const [mainA, mainB] = cli.positional(2) as [string, string];

/** The service's largest write-ahead fdatasync wait since start (ms), from /metrics; null when it exports none (memory mode, older builds). */
async function walSyncLagMs(base: string): Promise<number | null> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${benchAdminToken}` } })).text();
  const m = /^log_wal_sync_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text);
  return m && Number(m[1]) > 0 ? Number(m[1]) * 1000 : null;
}

const jsThread = (u: CpuUsage): number => u.byThread.find((t) => t.thread === 'node')?.cores ?? 0;
/** Records a request carries: rates, CPU and the stored check count records. */
const perRequest = loadName === 'batch' ? BATCH_RECORDS : 1;
const load = loadName === 'batch' ? ingestBatchLoad(seconds) : ingestSingleLoad(seconds);

async function measure(svc: BenchService): Promise<Sample & { ok: number; failures: number }> {
  const r = await withCpu(svc.pid, () => runLoad({ ...load, base: svc.base }));
  const answered = r.value.answered * perRequest;
  return {
    rps: r.value.rps * perRequest,
    cpu: cpuMicros(r.server, answered),
    js: cpuMicros({ ...r.server, cores: jsThread(r.server) }, answered),
    ok: r.value.ok * perRequest,
    failures: r.value.errors + r.value.non2xx + r.value.unanswered,
  };
}

interface Build {
  svc?: BenchService;
  /** Records already stored before the load (the service's own start-up writes none, but count from here). */
  before: number;
  accepted: number;
  failures: number;
  samples: Sample[];
}

const newBuild = (): Build => ({ before: 0, accepted: 0, failures: 0, samples: [] });
const builds: [Build, Build] = [newBuild(), newBuild()];
let code = 0;
try {
  builds[0].svc = await startService(envA, [], mainA);
  builds[1].svc = await startService(envB, [], mainB);
  for (const b of builds) {
    b.before = await storedLogs(b.svc!.base);
    b.accepted += (await runLoad({ ...load, base: b.svc!.base, seconds: 2 })).ok * perRequest;
  }
  const measured = await rotatingRounds(rounds, builds.map((b) => () => measure(b.svc!)));
  for (const round of measured) {
    round.forEach((m, i) => {
      const b = builds[i]!;
      b.accepted += m.ok;
      b.failures += m.failures;
      b.samples.push(m);
    });
  }
  const [a, b] = builds;
  const lags = await Promise.all(builds.map((x) => walSyncLagMs(x.svc!.base)));
  const stored = await Promise.all(builds.map((x) => storedSince(x.svc!.base, x.before, x.accepted)));
  const med = (x: Build, k: keyof Sample): number => Math.round(median(x.samples.map((s) => s[k])) * 10) / 10;
  const diffs = (k: keyof Sample): string => a.samples.map((s, i) => (b.samples[i]![k] - s[k]).toFixed(1)).join(', ');
  const unit = perRequest > 1 ? 'record' : 'request';
  const settings = (env: Record<string, string>): string => Object.entries(env).map(([k, v]) => ` ${k}=${v}`).join('');
  printTable(`compare: ingest-${loadName} load, ${rounds} interleaved rounds of ${seconds} s`, [
    ['A', mainA + settings(envA)],
    ['B', mainB + settings(envB)],
    [`${unit}s/s, median A / B`, `${Math.round(med(a, 'rps'))} / ${Math.round(med(b, 'rps'))}`],
    [`service CPU us/${unit}, median A / B`, `${med(a, 'cpu')} / ${med(b, 'cpu')}`],
    [`JS thread CPU us/${unit}, median A / B`, `${med(a, 'js')} / ${med(b, 'js')}`],
    ['service CPU, B - A per round', diffs('cpu')],
    ['JS thread, B - A per round', diffs('js')],
    ['errors + non-2xx + unanswered A / B', `${a.failures} / ${b.failures}`],
    // How long written lines waited for their fdatasync: in durable mode, what a power loss could take (docs/log-pipeline.md).
    ['write-ahead fdatasync wait, largest ms A / B', lags.map((l) => (l === null ? '-' : l.toFixed(2))).join(' / ')],
    ['stored == accepted A / B', builds.map((x, i) => (stored[i] === x.accepted ? 'yes' : `NO (${stored[i]} of ${x.accepted})`)).join(' / ')],
  ]);
  if (builds.some((x, i) => stored[i] !== x.accepted || x.failures > 0)) code = 1;
} catch (err) {
  process.stderr.write(`compare failed: ${(err as Error).stack ?? String(err)}\n`);
  code = 1;
} finally {
  for (const b of builds) await b.svc?.stop().catch(() => undefined);
}
process.exit(code);
