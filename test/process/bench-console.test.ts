/**
 * The console bench scenario at a tiny scale: it takes the seeded store, replays a view's
 * calls as the recording lists them (admin and master), moves their windows
 * onto the seeded history, and reports each view's slowest-call p99 with no
 * non-2xx answer. (The figures mean nothing here: only that it runs and
 * reports what it measured.)
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { burstsOf, consoleScenario, readCalls, recordingNow, shiftPath, type CallRun } from '../../src/bench/scenarios/console.js';

t.test('time windows move by whole hours; other parameters stay', async (t) => {
  const calls = readCalls(writeFixture([
    { view: 'logs', role: 'admin', method: 'get', path: '/admin/logs/filters?since=1000000&until=1003600&limit=5' },
    { view: 'logs', role: 'admin', method: 'GET', path: '/admin/logs?limit=50' },
  ]));
  t.equal(calls[0]!.method, 'GET');
  t.equal(recordingNow(calls), 1003600);
  t.equal(shiftPath(calls[0]!.path, 7200), '/admin/logs/filters?since=1007200&until=1010800&limit=5');
  t.equal(shiftPath(calls[1]!.path, 7200), '/admin/logs?limit=50');
  t.throws(() => readCalls(writeFixture([{ view: 'x', role: 'child', method: 'GET', path: '/x' }])), /role/);
  t.throws(() => readCalls(writeFixture({ view: 'x' })), /array/);
});

t.test('calls replay in the bursts they were recorded in, in order; a recording without bursts is one burst', async (t) => {
  const runsOf = (calls: ReturnType<typeof readCalls>): CallRun[] => calls.map((call) => ({ call, path: call.path, latencies: [], non2xx: 0, lastStatus: 0 }));
  const numbered = readCalls(writeFixture([
    { view: 'logs', role: 'admin', method: 'GET', path: '/admin/logs?limit=50', burst: 7 },
    { view: 'logs', role: 'admin', method: 'GET', path: '/admin/logs/filters', burst: 7 },
    { view: 'logs', role: 'admin', method: 'GET', path: '/admin/logs?model=a&limit=50', burst: 9 },
    { view: 'logs', role: 'master', method: 'GET', path: '/v1/logs?limit=50', burst: 9 },
    { view: 'logs', role: 'admin', method: 'GET', path: '/admin/logs/filters?model=a', burst: 9 },
  ]));
  t.equal(numbered[0]!.burst, 7, 'the burst number is read');
  t.same(burstsOf(runsOf(numbered)).map((b) => b.map((r) => r.path)), [
    ['/admin/logs?limit=50', '/admin/logs/filters'],
    ['/admin/logs?model=a&limit=50', '/admin/logs/filters?model=a'],
    ['/v1/logs?limit=50'],
  ], 'one burst per role and number, in the order first seen');
  const plain = readCalls(writeFixture([
    { view: 'logs', role: 'admin', method: 'GET', path: '/admin/logs?limit=50' },
    { view: 'logs', role: 'admin', method: 'GET', path: '/admin/logs/filters' },
  ]));
  t.equal(burstsOf(runsOf(plain)).length, 1);
});

t.test('skipped without a recording', async (t) => {
  const r = await consoleScenario({ callsFile: join(tmpdir(), 'no-such-console-calls.json') });
  t.equal(r.status, 'skipped');
  t.match(r.reason, /no recorded console calls/);
});

t.test('a tiny run: every view measured, every call 2xx, windows on the seeded history', { timeout: 600_000 }, async (t) => {
  const now = Math.floor(Date.now() / 1000);
  // Recorded "three days ago": the scenario moves the windows back onto its history.
  const then = Math.floor((now - 3 * 86_400) / 3600) * 3600;
  const file = writeFixture([
    { view: 'overview', role: 'admin', method: 'GET', path: '/admin/dashboard/summary?period=today&include_trends=true' },
    { view: 'overview', role: 'admin', method: 'GET', path: `/admin/logs/stats/traffic-chart?granularity=hour&since=${then - 86_400}&until=${then}&top_n=5` },
    { view: 'logs', role: 'admin', method: 'GET', path: '/admin/logs?limit=50', burst: 1 },
    { view: 'logs', role: 'admin', method: 'GET', path: `/admin/logs/filters?since=${then - 86_400}&until=${then}`, burst: 2 },
    { view: 'logs', role: 'admin', method: 'POST', path: '/admin/masters' },
    { view: 'tenant', role: 'master', method: 'GET', path: '/v1/stats?period=last7d' },
    { view: 'tenant', role: 'master', method: 'GET', path: '/v1/logs?limit=20' },
  ]);
  const r = await consoleScenario({ callsFile: file, rows: 5000, seconds: 1, users: 2 });
  t.equal(r.status, 'ok');
  t.equal(r.figures.replayed, 6);
  t.equal(r.figures.skipped_non_get, 1, 'only GETs are replayed');
  // The seeded store may be reused from an earlier run: the windows land on its end, not on now.
  t.equal(r.figures.time_shift_s, Math.round((Number(r.figures.history_end) - then) / 3600) * 3600);
  for (const view of ['overview', 'logs', 'tenant']) {
    t.ok(Number(r.figures[`${view}_p99_ms`]) > 0, `${view} measured`);
    t.ok(Number(r.figures[`${view}_openings`]) > 0);
    t.equal(r.figures[`${view}_non2xx`], 0, `${view}: every answer 2xx`);
  }
  t.equal(r.targets.length, 6, 'p99 and errors per view');
  t.ok(r.ratio && r.ratio.value > 0);
});

function writeFixture(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'console-calls-'));
  const file = join(dir, 'calls.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}
