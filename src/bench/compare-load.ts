/**
 * npm run bench:compare-load -- <a/dist> <b/dist> [--rows N] [--rounds R] [--seconds S] [--calls a,b,...]
 *   [--feed <records>/<ms>] [--feed-b <records>/<ms> | 0]:
 * the dashboards bench's statistics reads under load, as two builds' storage layers serve them: ten reads in
 * flight (each read another range and master, the next one sent when one answers) while 2,000 records a second
 * are inserted (one insert a second, as the service's writer makes them), on a copy of one seeded store (harness/seeded-store.ts; default 20,000,000 rows), through each
 * build's own ClickHouse transport with SVC_CHDB_CONNECTIONS connections (default 4) and its own reads.
 * Reports per call the median over rounds of reads a second and of the p99, and B / A.
 * `--feed` changes the inserts (records an insert / milliseconds between inserts) for both sides, `--feed-b` for
 * B alone (0: none): the same build twice with two feeds shows what the inserts take from the reads, or what a
 * longer flush interval (SVC_LOG_FLUSH_MS) gives back.
 *
 * For a change to how the service drives the engine (its connections, its queue, its session settings), which
 * reads one at a time (bench:compare-reads) cannot show and the drift between two runs of `npm run bench --
 * dashboards` hides: the embedded engine opens once per process, so each side runs in a process of its own, one
 * side after the other in every round (rotating which goes first), without HTTP or the service between.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CommandLine } from './harness/command-line.js';
import { median, rotatingRounds } from './harness/rounds.js';
import { copyOfStore, seededStore } from './harness/seeded-store.js';
import { printTable } from './harness/table.js';
import { percentile } from './harness/cold-load.js';
import type { ClickHouse, ClickHouseReader } from '../storage/clickhouse/client.js';
import type { ReadCall } from './scenarios/dashboard-reads.js';

const IN_FLIGHT = 10;
/** The data plane beside the reads: records an insert and the time between inserts. */
interface Feed {
  records: number;
  everyMs: number;
}
/** 2,000 records a second, inserted as the service's writer does by default (SVC_LOG_FLUSH_MS: one insert a second). */
const DEFAULT_FEED = '2000/1000';
const NO_FEED: Feed = { records: 0, everyMs: 1000 };

/** `<records>/<ms>`, or `0` for no inserts; null when it is neither. */
function feedOf(text: string): Feed | null {
  if (text === '0') return NO_FEED;
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const [records, everyMs] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  return records >= 1 && everyMs >= 1 ? { records, everyMs } : null;
}

const feedText = (feed: Feed): string => (feed.records === 0 ? 'no records inserted' : `${feed.records} records inserted every ${feed.everyMs} ms`);
/** The feed's record ids start above the seeded ones (1 to the row count). */
const FEED_IDS = 4_000_000_000;
const DEFAULT_CALLS = 'summary_last7d_trends,traffic_minute_6h_cost,v1_stats_last30d,realtime_master';

interface CallFigures {
  name: string;
  perSecond: number;
  p50: number;
  p99: number;
}

interface SideRun {
  calls: CallFigures[];
  /** Records the feed inserted, as counted in `logs` once the side is done. */
  inserted: number;
}

/** One side of one round: a process of its own on its own copy of the store. */
async function child(dist: string, dataDir: string, endSec: number, seconds: number, calls: string[], feed: Feed): Promise<SideRun> {
  const { openClickHouse } = (await import(pathToFileURL(join(dist, 'src/storage/clickhouse/open.js')).href)) as {
    openClickHouse: (o: { dataDir: string; connections?: number }) => Promise<ClickHouse>;
  };
  const { readCalls } = (await import(pathToFileURL(join(dist, 'src/bench/scenarios/dashboard-reads.js')).href)) as {
    readCalls: (nowSec: number, masterId: number, jitter: number) => ReadCall[];
  };
  const ch = await openClickHouse({ dataDir, connections: Number(process.env.SVC_CHDB_CONNECTIONS ?? 4) });
  let n = 0;
  // Ids of this process's own: a block identical to one a kept store's deduplication window holds would be dropped.
  const first = FEED_IDS + (Date.now() % 1_000_000_000) * 1_000_000;
  const record = (): string => {
    const m = 1 + (n++ % 200);
    // Stamped ahead of the store's end, as the dashboards bench's are: the reads' ranges never reach them.
    const createdAt = new Date((endSec + 30) * 1000 + n).toISOString().replace('T', ' ').replace('Z', '');
    return JSON.stringify({ id: first + n, master_id: m, key_id: m * 25 + (n % 25), model: `model-${n % 40}`, group: `g${m % 4}`, status_code: n % 50 ? 200 : 500, latency_ms: 50 + (n % 900), tokens_in: n % 2000, tokens_out: n % 800, created_at: createdAt });
  };
  let feeding = feed.records > 0;
  const inserts = (async () => {
    while (feeding) {
      const started = performance.now();
      await ch.insert('logs', Array.from({ length: feed.records }, record).join('\n') + '\n');
      await new Promise((r) => setTimeout(r, Math.max(0, feed.everyMs - (performance.now() - started))));
    }
  })();
  const out: CallFigures[] = [];
  let inserted = 0;
  try {
    for (const name of calls) {
      const times: number[] = [];
      let k = 0;
      const end = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (performance.now() < end) {
            const i = k++;
            const call = readCalls(endSec, 1 + ((i * 37) % 200), 7 + ((i * 613) % 3593)).find((c) => c.name === name);
            if (!call) throw new Error(`no read named ${name}`);
            const started = performance.now();
            await call.read(ch as ClickHouseReader);
            times.push(performance.now() - started);
          }
        }),
      );
      times.sort((a, b) => a - b);
      out.push({ name, perSecond: times.length / seconds, p50: percentile(times, 50), p99: percentile(times, 99) });
    }
    feeding = false;
    await inserts;
    const [counted] = await ch.query<{ n: number }>(`SELECT count() AS n FROM logs WHERE id > ${FEED_IDS}`);
    inserted = Number(counted?.n ?? 0);
  } finally {
    feeding = false;
    await inserts.catch(() => undefined);
    await ch.close();
  }
  return { calls: out, inserted };
}

function runSide(dist: string, dataDir: string, endSec: number, seconds: number, calls: string[], feed: Feed): Promise<SideRun> {
  const script = fileURLToPath(import.meta.url);
  const args = [script, '--child', dist, dataDir, String(endSec), String(seconds), calls.join(','), String(feed.records), String(feed.everyMs)];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolvePromise, reject) => {
    proc.on('error', reject);
    proc.on('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) resolvePromise(JSON.parse(last) as SideRun);
      else reject(new Error(`compare-load side ${dist} exited ${code}: ${out.slice(-2000)}`));
    });
  });
}

async function main(args: string[]): Promise<void> {
  if (args[0] === '--child') {
    const [, dist, dataDir, endSec, seconds, calls, records, everyMs] = args;
    const feed = { records: Number(records), everyMs: Number(everyMs) };
    process.stdout.write(JSON.stringify(await child(dist!, dataDir!, Number(endSec), Number(seconds), calls!.split(','), feed)) + '\n');
    return;
  }
  const cli = new CommandLine(
    args,
    'usage: compare-load.js <a/dist> <b/dist> [--rows N] [--rounds R] [--seconds S] [--calls a,b,...] [--feed <records>/<ms>] [--feed-b <records>/<ms> | 0]',
  );
  const rows = cli.whole('--rows', 20_000_000);
  const rounds = cli.whole('--rounds', 4);
  const seconds = cli.whole('--seconds', 10);
  const calls = cli.text('--calls', DEFAULT_CALLS).split(',');
  const feedA = feedOf(cli.text('--feed', DEFAULT_FEED)) ?? cli.fail('--feed: <records>/<ms>, both whole numbers from 1, or 0');
  const givenB = cli.text('--feed-b', '');
  const feedB = givenB === '' ? feedA : (feedOf(givenB) ?? cli.fail('--feed-b: <records>/<ms>, both whole numbers from 1, or 0'));
  const feeds = [feedA, feedB];
  const given = cli.positional(2);
  const dists = given.map((d) => resolve(d));
  const store = await seededStore(rows);
  const results = await rotatingRounds(
    rounds,
    dists.map((dist, side) => async () => {
      const dir = copyOfStore(store);
      try {
        return await runSide(dist, dir, store.endSec, seconds, calls, feeds[side]!);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }),
  );
  const of = (side: number, i: number, key: 'perSecond' | 'p50' | 'p99'): number => median(results.map((r) => r[side]!.calls[i]![key]));
  const inserted = (side: number): number => median(results.map((r) => r[side]!.inserted));
  printTable(
    `compare-load: ${rows.toLocaleString('en-US')} rows, ${rounds} rounds, ${IN_FLIGHT} reads in flight for ${seconds} s a call; ` +
      `A ${given[0]} (${feedText(feeds[0]!)}), B ${given[1]} (${feedText(feeds[1]!)})`,
    calls.map((name, i) => {
      const [ra, rb, pa, pb] = [of(0, i, 'perSecond'), of(1, i, 'perSecond'), of(0, i, 'p99'), of(1, i, 'p99')];
      const rateRounds = results.map((r) => r[1]!.calls[i]!.perSecond / r[0]!.calls[i]!.perSecond);
      return [
        name,
        `reads/s ${ra.toFixed(0)} / ${rb.toFixed(0)} (B/A ${(rb / ra).toFixed(2)}, rounds ${Math.min(...rateRounds).toFixed(2)}-${Math.max(...rateRounds).toFixed(2)}), ` +
          `p50 ${of(0, i, 'p50').toFixed(0)} / ${of(1, i, 'p50').toFixed(0)} ms, p99 ${pa.toFixed(0)} / ${pb.toFixed(0)} ms (B/A ${(pb / pa).toFixed(2)})`,
      ] as [string, string];
    }).concat([['inserted', `${inserted(0)} / ${inserted(1)} records a side (median over rounds, counted in logs afterwards)`]]),
  );
}

await main(process.argv.slice(2));
