/**
 * console: the API calls the operator console makes when its views open,
 * replayed against the `dashboards` history with the statistics cache off and
 * a data plane posting logs meanwhile.
 *
 * 1. Reads the calls: `bench/console-calls.json`, written by the console's
 *    browser tests (recorded, not hand-written), or the file named by
 *    BENCH_CONSOLE_CALLS: `[{"view","role":"admin"|"master","method","path"}]`.
 *    Without it the scenario is skipped. Only GETs are replayed (opening a view
 *    changes nothing), and not the CSV exports (a download asked for with a
 *    click, whose time grows with the rows it exports by design). Times in `since`/`until` are moved by whole hours so
 *    that the recording's latest `until` (or its `recorded_at`, Unix seconds,
 *    when an entry carries one) falls on the seeded history's end: the windows
 *    keep their length and alignment and land on the seeded history.
 * 2. Takes the seeded store of BENCH_CONSOLE_ROWS rows (default 20,000,000;
 *    harness/seeded-store.ts, the one `dashboards` uses, seeded once and
 *    reused), starts the built service on a copy of it with
 *    SVC_STATS_CACHE_ENTRIES=0, creates the 200 masters of the logs (a call
 *    with role `master` uses the first one's key) and starts the data plane
 *    of `dashboards` (2,000 records a second).
 * 3. Per view, BENCH_CONSOLE_USERS (default 1) users open it over and over
 *    for the run's seconds: each opening sends the view's calls in the bursts
 *    the recording numbers (the calls that went out together: the view
 *    opening, then each filter changed), one burst after another, each burst's
 *    calls at once, as the console does. Every call's latency is its full
 *    answer (last byte). The view's figure is the p99 of its slowest call; the
 *    target is under 300 ms, with no answer other than 2xx.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { bearer, call } from '../harness/http.js';
import { repoPath } from '../harness/paths.js';
import { okResult, skippedResult, target, type ScenarioResult, type Target } from '../harness/results.js';
import { benchAdminToken, startService } from '../harness/service.js';
import { fmt, printTable } from '../harness/table.js';
import { ingestLoop } from './dashboards.js';
import { copyOfStore, seededStore } from '../harness/seeded-store.js';

const name = 'console';
const HOUR = 3600;
const TARGET_P99_MS = 300;

export interface ConsoleCall {
  view: string;
  role: 'admin' | 'master';
  method: string;
  path: string;
  /** When the call was recorded (Unix seconds); optional. */
  recorded_at?: number;
  /**
   * The burst it went out in (the browser tests number them: a burst starts when a call leaves with no other in
   * flight); optional. A view's bursts are replayed one after another, each burst's calls at once.
   */
  burst?: number;
}

export interface ConsoleOptions {
  seconds?: number;
  nodeArgs?: string[];
  /** The recorded calls' file (default BENCH_CONSOLE_CALLS, else bench/console-calls.json). */
  callsFile?: string;
  /** Seeded rows (default BENCH_CONSOLE_ROWS, else 20,000,000). */
  rows?: number;
  /** Users opening each view at once (default BENCH_CONSOLE_USERS, else 1: one operator). */
  users?: number;
}

/** The file's calls, checked; throws naming the first bad entry. */
export function readCalls(file: string): ConsoleCall[] {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(parsed)) throw new Error(`${file}: expected a JSON array of calls`);
  return parsed.map((c: Partial<ConsoleCall>, i) => {
    if (!c || typeof c.view !== 'string' || typeof c.path !== 'string' || !c.path.startsWith('/') || typeof c.method !== 'string') {
      throw new Error(`${file}: entry ${i} needs view, method and a path starting with /`);
    }
    if (c.role !== 'admin' && c.role !== 'master') throw new Error(`${file}: entry ${i}: role must be admin or master`);
    return {
      view: c.view,
      role: c.role,
      method: c.method.toUpperCase(),
      path: c.path,
      ...(typeof c.recorded_at === 'number' ? { recorded_at: c.recorded_at } : {}),
      ...(typeof c.burst === 'number' ? { burst: c.burst } : {}),
    };
  });
}

const TIME_PARAMS = ['since', 'until'];

/** The moment the recording stands for: the latest recorded_at, else the latest `until` in its paths; null when neither. */
export function recordingNow(calls: ConsoleCall[]): number | null {
  let latest: number | null = null;
  for (const c of calls) {
    const t = c.recorded_at ?? Number(new URL(c.path, 'http://x').searchParams.get('until') ?? NaN);
    if (Number.isFinite(t) && (latest === null || t > latest)) latest = t;
  }
  return latest;
}

/** The path with its since/until moved by `shift` seconds (a whole number of hours). */
export function shiftPath(path: string, shift: number): string {
  if (shift === 0) return path;
  const url = new URL(path, 'http://x');
  for (const p of TIME_PARAMS) {
    const v = url.searchParams.get(p);
    if (v !== null && /^\d+$/.test(v)) url.searchParams.set(p, String(Number(v) + shift));
  }
  return url.pathname + url.search;
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

export interface CallRun {
  call: ConsoleCall;
  path: string;
  latencies: number[];
  non2xx: number;
  lastStatus: number;
}

async function timed(base: string, path: string, token: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const res = await fetch(base + path, { headers: bearer(token), signal: AbortSignal.timeout(60_000) });
  await res.arrayBuffer();
  return { ms: performance.now() - started, status: res.status };
}

/**
 * A view's calls in the bursts they went out in, in recorded order: calls of one
 * burst number together (a recording without numbers is one burst, every call
 * at once).
 */
export function burstsOf(runs: CallRun[]): CallRun[][] {
  const bursts = new Map<string, CallRun[]>();
  for (const r of runs) {
    const k = r.call.burst === undefined ? 'all' : `${r.call.role} ${r.call.burst}`;
    const burst = bursts.get(k);
    if (burst) burst.push(r);
    else bursts.set(k, [r]);
  }
  return [...bursts.values()];
}

/**
 * `users` users opening the view over and over for `seconds`: an opening sends
 * the view's bursts one after another, each burst's calls at once, as the
 * console sent them (a filter changed is a burst after the view's first one).
 */
async function openView(base: string, runs: CallRun[], tokens: Record<'admin' | 'master', string>, users: number, seconds: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  const bursts = burstsOf(runs);
  let openings = 0;
  await Promise.all(
    Array.from({ length: users }, async () => {
      while (performance.now() < end) {
        for (const burst of bursts) {
          await Promise.all(
            burst.map(async (r) => {
              const { ms, status } = await timed(base, r.path, tokens[r.call.role]);
              r.latencies.push(ms);
              r.lastStatus = status;
              if (status < 200 || status >= 300) r.non2xx++;
            }),
          );
        }
        openings++;
      }
    }),
  );
  return openings;
}

/**
 * A CSV export (`.../logs/export`) is a download the operator asks for with a click, not a call of a view opening: it
 * streams every matching record by design, so its time grows with what it exports (docs/console.md). Not replayed.
 */
const isDownload = (c: ConsoleCall): boolean => /\/export(\?|$)/.test(c.path);

export async function consoleScenario(opts: ConsoleOptions = {}): Promise<ScenarioResult> {
  const seconds = opts.seconds ?? 10;
  const file = opts.callsFile ?? process.env.BENCH_CONSOLE_CALLS ?? repoPath('bench/console-calls.json');
  if (!existsSync(file)) return skippedResult(name, `no recorded console calls at ${file} (the console's browser tests write it)`);
  const calls = readCalls(file);
  const gets = calls.filter((c) => c.method === 'GET' && !isDownload(c));
  const downloads = calls.filter((c) => c.method === 'GET' && isDownload(c)).length;
  if (gets.length === 0) return skippedResult(name, `${file} holds no GET call`);
  const rows = opts.rows ?? Number(process.env.BENCH_CONSOLE_ROWS ?? 20_000_000);
  const users = opts.users ?? Number(process.env.BENCH_CONSOLE_USERS ?? 1);

  const store = await seededStore(rows);
  const dataDir = copyOfStore(store);
  try {
    const recorded = recordingNow(gets);
    const shift = recorded === null ? 0 : Math.round((store.endSec - recorded) / HOUR) * HOUR;

    const env = { SVC_DATA_DIR: dataDir, SVC_RETENTION_INTERVAL_MS: String(2 ** 31 - 1), SVC_STATS_CACHE_ENTRIES: '0' };
    const svc = await startService(env, opts.nodeArgs);
    const byView = new Map<string, CallRun[]>();
    const openings = new Map<string, number>();
    let ingested = 0;
    try {
      let masterKey = '';
      for (let i = 0; i < 200; i++) {
        const r = await call(svc.base, 'POST', '/admin/masters', { body: { name: `m${i}`, group: 'default' }, headers: bearer(benchAdminToken) });
        if (r.status !== 201) throw new Error(`creating a master answered ${r.status}: ${JSON.stringify(r.json)}`);
        masterKey ||= r.json.master_key as string;
      }
      const tokens = { admin: benchAdminToken, master: masterKey };
      for (const c of gets) {
        const list = byView.get(c.view) ?? [];
        byView.set(c.view, list);
        const path = shiftPath(c.path, shift);
        if (!list.some((r) => r.path === path && r.call.role === c.role)) list.push({ call: c, path, latencies: [], non2xx: 0, lastStatus: 0 });
      }
      const feed = ingestLoop(svc.base);
      try {
        for (const [view, runs] of byView) {
          await openView(svc.base, runs, tokens, 1, Math.min(2, seconds)); // warm-up, not counted
          for (const r of runs) {
            r.latencies = [];
            r.non2xx = 0;
          }
          openings.set(view, await openView(svc.base, runs, tokens, users, seconds));
        }
      } finally {
        ingested = await feed.stop();
      }
    } finally {
      await svc.stop();
    }

    const table: Array<[string, string]> = [];
    const figures: ScenarioResult['figures'] = {
      rows, seconds, users, calls: calls.length, replayed: gets.length, skipped_non_get: calls.length - gets.length - downloads, skipped_downloads: downloads, time_shift_s: shift, history_end: store.endSec,
      seed_s: store.seedSeconds, seed_reused: store.reused, seed_disk_mib: store.bytes / 2 ** 20,
    };
    const targets: Target[] = [];
    let worst = 0;
    for (const [view, runs] of byView) {
      let slowest: CallRun | undefined;
      let slowestP99 = -1;
      let errors = 0;
      for (const r of runs) {
        const sorted = [...r.latencies].sort((a, b) => a - b);
        const p99 = pct(sorted, 99);
        if (p99 > slowestP99) [slowest, slowestP99] = [r, p99];
        errors += r.non2xx;
        table.push([`${view}: ${r.call.role} GET ${r.path}`, `p50 ${fmt(pct(sorted, 50))} ms, p99 ${fmt(p99)} ms, ${r.latencies.length} calls${r.non2xx ? `, ${r.non2xx} non-2xx (last ${r.lastStatus})` : ''}`]);
      }
      worst = Math.max(worst, slowestP99);
      Object.assign(figures, {
        [`${view}_p99_ms`]: slowestP99,
        [`${view}_slowest_call`]: slowest ? `${slowest.call.role} GET ${slowest.path}` : '',
        [`${view}_openings`]: openings.get(view) ?? 0,
        [`${view}_non2xx`]: errors,
      });
      targets.push(
        target(`${view}: p99 of the slowest call < ${TARGET_P99_MS} ms`, slowestP99, TARGET_P99_MS, true),
        target(`${view}: zero non-2xx answers`, errors, 0, true),
      );
    }
    figures.ingested_during_runs = ingested;
    printTable(`${name}: ${fmt(rows)} rows, cache off, ${users} users per view, ${seconds} s per view, data plane posting`, table);
    figures.slowest_view_p99_ms = worst;
    // Higher is better, as bench:check reads ratios: the target's bound over the slowest view's p99 (>= 1 meets it).
    return okResult(name, { name: `${TARGET_P99_MS} ms / slowest view's p99`, value: worst > 0 ? TARGET_P99_MS / worst : 0 }, figures, targets);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
