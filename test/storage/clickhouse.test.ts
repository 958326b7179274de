import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouse } from '../../src/storage/clickhouse/client.js';
import { HttpClickHouse } from '../../src/storage/clickhouse/http-transport.js';
import { migrateClickHouse, splitStatements } from '../../src/storage/clickhouse/migrate.js';
import { openClickHouse } from '../../src/storage/clickhouse/open.js';
import { sortedByMaster } from '../../src/storage/clickhouse/log-counts.js';
import {
  backfillSql,
  deleteSliceSql,
  latencyFunction,
  rebuildRollupsSql,
  rollupColumns,
  ROLLUP_METRICS,
  rollupName,
  ROLLUPS,
  rowsOf,
  type LogsSlice,
  type Rollup,
} from '../../src/storage/clickhouse/rollups.js';

/** The assertions the helpers below use, as a subtest provides them. */
type Asserts = Pick<typeof t, 'equal' | 'same' | 'ok' | 'pass'>;

const SQL_DIR = fileURLToPath(new URL('../../../sql/clickhouse', import.meta.url));
const MIGRATIONS = [
  '001_logs.sql', '002_audit.sql', '003_daily_rollups.sql', '004_daily_total.sql', '005_global_rollups_by_model.sql', '006_log_cost.sql',
  '007_rollups_regrained.sql', '009_insert_dedup.sql', '010_logs_list_indexes.sql', '011_second_rollup.sql', '012_daily_key_rollup.sql', '013_hourly_by_day.sql',
  '014_rollups_status_code.sql', '015_rollups_error_records.sql', '016_logs_by_time.sql',
  '017_hourly_filters_rollup.sql', '018_logs_by_master_time.sql', '019_hourly_total_rollup.sql', '020_grains_tables.sql',
];
const dataDir = mkdtempSync(join(tmpdir(), 'ch-test-'));
const ch = await openClickHouse({ dataDir });
t.teardown(async () => {
  await ch.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const T0 = Date.parse('2024-03-01T22:00:00Z'); // the data crosses midnight, so two partitions

/** Deterministic logs spread over ~4 hours, 3 masters, 4 keys, 3 models, 2 groups, 5 statuses. */
function makeLogs(from: number, n: number): string {
  const statuses = [200, 200, 201, 404, 429, 500];
  const lines: string[] = [];
  for (let i = from; i < from + n; i++) {
    lines.push(
      JSON.stringify({
        id: 2 ** 53 - 1 - i,
        master_id: 1 + (i % 3),
        key_id: 10 + (i % 4),
        model: ['gpt', 'claude', 'llama'][(i >> 1) % 3],
        group: i % 5 === 0 ? 'vip' : 'default',
        status_code: statuses[(i * 7) % statuses.length],
        latency_ms: (i * 37) % 2000,
        tokens_in: i % 100,
        tokens_out: (i * 3) % 70,
        // Twelve decimals, as text: the sums must come out exact, not as floats.
        cost: `${i % 13}.${String((i * 7919) % 10 ** 12).padStart(12, '0')}`,
        unpriced: i % 11 === 0 ? 1 : 0,
        client_ip: '10.0.0.1',
        // Under any status, so errors only counts more than the error statuses.
        error_message: i % 9 === 4 ? 'upstream reset' : '',
        created_at: new Date(T0 + i * 4_700 + (i % 1000)).toISOString(),
        ignored_field: true, // unknown fields are skipped
      }),
    );
  }
  return lines.join('\n') + '\n';
}

/** The rollup read back, and the same numbers computed from raw `logs`; they must be equal. */
async function rollupVsRaw(r: Rollup) {
  const keys = [r.bucket.column, ...r.dims.map((d) => d.name)];
  const rawKeys = [
    `${r.bucket.expr} AS ${r.bucket.column}`, ...r.dims.map((d) => d.name),
  ];
  const order = keys.map((_, i) => i + 1).join(', ');
  const rolled = await ch.query(
    `SELECT ${keys.join(', ')}, sum(requests) AS requests, sum(errors) AS errors, sum(error_records) AS error_records, sum(tokens_in) AS tin,
       sum(tokens_out) AS tout, toString(sum(cost)) AS cost, sum(unpriced) AS unp, sum(latency_sum) AS lat,
       ${latencyFunction('Merge')}(latency_q) AS q
     FROM ${r.table}${rowsOf(r) ? ` WHERE ${rowsOf(r)}` : ''} GROUP BY ${keys.join(', ')} ORDER BY ${order}`,
  );
  const raw = await ch.query(
    `SELECT ${rawKeys.join(', ')}, count() AS requests, countIf(status_code >= 400) AS errors,
       countIf(status_code >= 400 OR error_message != '') AS error_records, sum(tokens_in) AS tin,
       sum(tokens_out) AS tout, toString(sum(cost)) AS cost, sum(unpriced) AS unp, sum(latency_ms) AS lat,
       ${latencyFunction('')}(latency_ms) AS q
     FROM logs GROUP BY ${keys.join(', ')} ORDER BY ${order}`,
  );
  return { rolled, raw };
}

async function assertRollupsAgree(t: Asserts, label: string, expectRows: number) {
  const [{ n }] = await ch.query<{ n: number }>('SELECT count() AS n FROM logs');
  t.equal(n, expectRows, `${label}: raw row count`);
  for (const r of ROLLUPS) {
    const { rolled, raw } = await rollupVsRaw(r);
    t.ok(raw.length > 0, `${label}: ${rollupName(r)} has buckets`);
    t.same(rolled, raw, `${label}: ${rollupName(r)} agrees with logs`);
  }
}

async function run(t: Asserts, stmts: { sql: string; params: Record<string, unknown> }[]) {
  for (const s of stmts) await ch.command(s.sql, s.params);
  t.pass(`ran ${stmts.length} statements`);
}

await t.test('migrations apply once and are recorded', async (t) => {
  t.same(await migrateClickHouse(ch, SQL_DIR), MIGRATIONS);
  t.same(await migrateClickHouse(ch, SQL_DIR), [], 'second run applies none');
  const rows = await ch.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
  t.same(rows, MIGRATIONS.map((name) => ({ version: Number(name.slice(0, 3)), name })));
  const [{ db }] = await ch.query<{ db: string }>('SELECT currentDatabase() AS db');
  t.equal(db, 'gateway', 'unqualified names resolve in the gateway database');
});

await t.test('migrations run in numeric order, recorded per database', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ch-mig-'));
  writeFileSync(join(dir, '010_b.sql'), 'INSERT INTO seen VALUES (10);\n');
  writeFileSync(join(dir, '002_a.sql'), '-- first\nCREATE TABLE seen (v UInt32) ENGINE = Memory;\n-- only a comment;\n\nINSERT INTO seen VALUES (2);\n');
  writeFileSync(join(dir, 'README.md'), 'not a migration');
  // schema_migrations is unqualified, so a second database keeps this run apart from the real one.
  await ch.command('CREATE DATABASE IF NOT EXISTS mig_test');
  await ch.command('USE mig_test');
  try {
    t.same(await migrateClickHouse(ch, dir), ['002_a.sql', '010_b.sql']);
    t.same(await ch.query('SELECT v FROM seen ORDER BY v'), [{ v: 2 }, { v: 10 }]);
    t.same(await migrateClickHouse(ch, dir), []);
  } finally {
    await ch.command('USE gateway');
    rmSync(dir, { recursive: true, force: true });
  }
  t.same(
    await ch.query('SELECT version FROM schema_migrations ORDER BY version'),
    MIGRATIONS.map((name) => ({ version: Number(name.slice(0, 3)) })),
    'the gateway database is untouched',
  );
});

t.test('splitStatements', async (t) => {
  t.same(splitStatements("-- c\nSELECT ';' ;\n\n  -- only comment;\nSELECT 2;"), ["-- c\nSELECT ';'", 'SELECT 2']);
  t.same(splitStatements('SELECT 1; SELECT 2'), ['SELECT 1; SELECT 2'], 'only a ; ending a line splits');
});

await t.test('the views in force are the ones rollups.ts generates, and no later migration writes one', async (t) => {
  for (const f of MIGRATIONS.filter((name) => Number(name.slice(0, 3)) >= 7)) {
    t.notMatch(readFileSync(join(SQL_DIR, f), 'utf8'), /CREATE MATERIALIZED VIEW/, `${f} makes no view`);
  }
  const views = await ch.query<{ name: string; q: string }>(
    "SELECT name, as_select AS q FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView' ORDER BY name",
  );
  t.same(views.map((v) => v.name), [...new Set(ROLLUPS.map((r) => r.mv))].sort(), 'exactly one view per rollup, one for the grains of a shared table');
  for (const r of ROLLUPS) {
    const cols = await ch.query<{ name: string }>(
      'SELECT name FROM system.columns WHERE database = currentDatabase() AND table = {t:String} ORDER BY position',
      { t: r.table },
    );
    t.same(cols.map((c) => c.name), rollupColumns(r).map((c) => c.replaceAll('`', '')), `${r.table} columns`);
    const [setting] = await ch.query<{ v: string }>(
      "SELECT extract(create_table_query, 'non_replicated_deduplication_window = (\\d+)') AS v FROM system.tables WHERE database = currentDatabase() AND name = {t:String}",
      { t: r.table },
    );
    t.ok(Number(setting?.v) >= 1000, `${r.table} keeps a deduplication window for replayed inserts`);
    // The list's counts read a rollup whose first dimension is the master only when a master or key is named (log-counts.ts).
    const [{ key }] = await ch.query<{ key: string }>(
      'SELECT sorting_key AS key FROM system.tables WHERE database = currentDatabase() AND name = {t:String}',
      { t: r.table },
    );
    t.equal(key.startsWith('master_id'), sortedByMaster(r), `${r.table} is sorted by master first exactly when its first dimension is the master (${key})`);
  }
});

await t.test('bound parameters round-trip', async (t) => {
  const s = `it's "quoted" \\ back\nslash\t'; DROP TABLE logs; --`;
  const at = new Date('2024-01-02T03:04:05.678Z');
  const [row] = await ch.query<{ s: string; d: string; n: number; big: string }>(
    "SELECT {s:String} AS s, {d:DateTime64(3, 'UTC')} AS d, {n:UInt64} AS n, toString({big:UInt64}) AS big",
    { s, d: at, n: 2 ** 53 - 1, big: 2n ** 64n - 1n },
  );
  t.same(row, { s, d: '2024-01-02 03:04:05.678', n: 2 ** 53 - 1, big: '18446744073709551615' });
  // A DateTime64 without a zone still binds the same instant, whatever the server zone.
  const [{ same }] = await ch.query<{ same: number }>(
    "SELECT {d:DateTime64(3)} = toDateTime64('2024-01-02 03:04:05.678', 3, 'UTC') AS same",
    { d: at },
  );
  t.equal(same, 1);
  await t.resolves(ch.query('SELECT count() FROM logs'), 'logs still exists');
});

await t.test('NDJSON insert, defaults, 64-bit numbers', async (t) => {
  await ch.insert('logs', Buffer.from(makeLogs(0, 1500)));
  await ch.insert('logs', makeLogs(1500, 1500)); // a second block: rollup keys repeat across parts
  await ch.insert('logs', Buffer.alloc(0)); // nothing to do
  await ch.insert('logs', '{"id":7,"created_at":"2024-03-01 23:59:59.999"}\n');
  const [min] = await ch.query('SELECT * EXCEPT (id) FROM logs WHERE id = 7');
  t.same(min, {
    key_id: 0, master_id: 0, group: '', model: '', status_code: 0, latency_ms: 0, tokens_in: 0, tokens_out: 0,
    request_size: 0, response_size: 0, cost: 0, unpriced: 0, client_ip: '', error_message: '', audit_reason: '', request_body: '',
    response_body: '', created_at: '2024-03-01 23:59:59.999', updated_at: '2024-03-01 23:59:59.999',
  }, 'omitted fields get defaults; updated_at defaults to created_at');

  // (An alias equal to a column name shadows it in later expressions, hence top_id.)
  const [top] = await ch.query<{ top_id: unknown; n: unknown; c: unknown }>(
    'SELECT max(id) AS top_id, toUInt64(top_id) AS n, count() AS c FROM logs',
  );
  t.same(top, { top_id: 2 ** 53 - 1, n: 2 ** 53 - 1, c: 3001 }, '64-bit integers are JSON numbers');
  t.type(top.top_id, 'number');
  await t.rejects(ch.insert('logs; DROP TABLE logs', '{}'), /invalid ClickHouse table name/);
});

await t.test('JSONCompactEachRow insert over a column list (chDB)', async (t) => {
  await ch.command(
    "CREATE TABLE compact_rows (id UInt64, `group` String DEFAULT '', n UInt32 DEFAULT 7, c DateTime64(3, 'UTC') DEFAULT now64(3), " +
      "u DateTime64(3, 'UTC') DEFAULT c) ENGINE = MergeTree ORDER BY id",
  );
  t.teardown(() => ch.command('DROP TABLE compact_rows'));
  const columns = ['id', 'group', 'c']; // `group` is a keyword: the list must still parse
  await ch.insert('compact_rows', Buffer.from('[1,"g\\"1","2024-03-01 23:59:59.999"]\n[2,"",  "2024-03-02 00:00:00.000"]\n'), {
    format: 'JSONCompactEachRow',
    columns,
  });
  await ch.insert('compact_rows', '[3,"h","2024-03-02 00:00:01.000"]', { format: 'JSONCompactEachRow', columns });
  await ch.insert('compact_rows', Buffer.alloc(0), { format: 'JSONCompactEachRow', columns }); // nothing to do
  await ch.insert('compact_rows', '{"id":4,"n":1,"c":"2024-03-02 00:00:02.000","u":"2024-03-02 00:00:03.000"}\n', { columns: ['id', 'n', 'c', 'u'] });
  t.same(
    await ch.query('SELECT id, `group`, n, toString(c) AS c, toString(u) AS u FROM compact_rows ORDER BY id'),
    [
      { id: 1, group: 'g"1', n: 7, c: '2024-03-01 23:59:59.999', u: '2024-03-01 23:59:59.999' },
      { id: 2, group: '', n: 7, c: '2024-03-02 00:00:00.000', u: '2024-03-02 00:00:00.000' },
      { id: 3, group: 'h', n: 7, c: '2024-03-02 00:00:01.000', u: '2024-03-02 00:00:01.000' },
      { id: 4, group: '', n: 1, c: '2024-03-02 00:00:02.000', u: '2024-03-02 00:00:03.000' },
    ],
    'values land in the listed columns; the others get their DEFAULT (u = c)',
  );
  await t.rejects(ch.insert('compact_rows', '[5,"x"]\n', { format: 'JSONCompactEachRow', columns }), 'a row of the wrong length is refused');
  await t.rejects(ch.insert('compact_rows', '[5]\n', { format: 'JSONCompactEachRow' }), /needs its column list/);
  await t.rejects(ch.insert('compact_rows', '[5]\n', { format: 'JSONCompactEachRow', columns: ['id) SELECT 1 --'] }), /invalid ClickHouse column name/);
  await t.rejects(ch.insert('compact_rows', '[5]\n', { format: 'JSONCompactEachRow', columns: [] }), /must not be empty/);
  await t.rejects(ch.insert('compact_rows', '5\n', { format: 'CSV' as 'JSONEachRow' }), /unsupported insert format/);
  const [{ n }] = await ch.query<{ n: number }>('SELECT count() AS n FROM compact_rows');
  t.equal(n, 4, 'refused inserts stored nothing');
});

await t.test('rollups agree with raw logs after inserts', async (t) => {
  await assertRollupsAgree(t, 'after inserts', 3001);
});

const before = (minutes: number) => new Date(T0 + minutes * 60_000 + 30_500); // mid-bucket, on purpose

for (const [label, slice] of [
  ['before', { before: before(40) }],
  ['before + master_id', { before: before(150), master_id: 2 }],
  ['before + status_code', { before: before(200), status_code: 404 }],
  ['before + key_id + model', { before: before(230), key_id: 11, model: 'gpt' }],
] as [string, LogsSlice][]) {
  await t.test(`delete by ${label}, rebuild, rollups agree`, async (t) => {
    const [{ n: was }] = await ch.query<{ n: number }>('SELECT count() AS n FROM logs');
    await run(t, deleteSliceSql(slice));
    const [{ n }] = await ch.query<{ n: number }>('SELECT count() AS n FROM logs');
    t.ok(n < was, `deleted ${was - n} rows`);
    await assertRollupsAgree(t, label, n);
  });
}

await t.test('a deletion mutates each table once: the grains of a shared table in one DELETE, their buckets found by one read', async (t) => {
  const stmts = deleteSliceSql({ before: before(40), master_id: 2 });
  const tables = (verb: RegExp) => stmts.map((s) => verb.exec(s.sql)?.[1]).filter((x): x is string => !!x).sort();
  t.same(tables(/^DELETE FROM (\w+) /), ['logs', ...new Set(ROLLUPS.map((r) => r.table))].sort(), 'one DELETE per table');
  t.same(tables(/^INSERT INTO (\w+) /), ROLLUPS.map((r) => r.table).sort(), 'one INSERT per rollup (grain)');
  t.match(stmts.at(-1)!.sql, /^DELETE FROM logs /, 'logs last');
  const grains = stmts.find((s) => s.sql.startsWith('DELETE FROM logs_total_grains '))!;
  const all = ROLLUPS.filter((x) => x.table === 'logs_total_grains').map((r) => r.grain);
  t.match(grains.sql, `(grain, t) IN (SELECT DISTINCT arrayJoin([${all.join(', ')}]) AS grain, `, 'every grain\'s buckets from one read of the slice');
});

await t.test('a deletion cut short heals when it runs again: the slice stays in logs until the last statement', async (t) => {
  const slice: LogsSlice = { before: before(250), master_id: 3 };
  const stmts = deleteSliceSql(slice);
  const [{ n: was }] = await ch.query<{ n: number }>('SELECT count() AS n FROM logs');
  // Cut after some rollups were rebuilt without the slice (logs_hourly among them).
  await run(t, stmts.slice(0, 7));
  t.equal((await ch.query<{ n: number }>('SELECT count() AS n FROM logs'))[0]!.n, was, 'the slice is still in logs');
  const [{ bad }] = await ch.query<{ bad: number }>(
    'SELECT (SELECT sum(requests) FROM logs_hourly) != (SELECT count() FROM logs) AS bad',
  );
  t.equal(Number(bad), 1, 'cut short: a rollup already lacks the slice');
  await run(t, deleteSliceSql(slice));
  const [{ n }] = await ch.query<{ n: number }>('SELECT count() AS n FROM logs');
  t.ok(n < was, `deleted ${was - n} rows`);
  await assertRollupsAgree(t, 'after the rerun', n);
});

await t.test('a rollup rebuilt after a change in place (repricing) agrees again', async (t) => {
  const slice: LogsSlice = { before: before(120) };
  await ch.command(`ALTER TABLE logs UPDATE tokens_in = tokens_in + 1 WHERE created_at < {before:DateTime64(3, 'UTC')} SETTINGS mutations_sync = 2`, { before: slice.before });
  await run(t, rebuildRollupsSql(slice));
  const [{ n }] = await ch.query<{ n: number }>('SELECT count() AS n FROM logs');
  await assertRollupsAgree(t, 'after the repricing rebuild', n);
});

await t.test('each rollup\'s backfill (TRUNCATE, INSERT SELECT) rebuilds it exactly', async (t) => {
  for (const r of ROLLUPS) for (const sql of backfillSql(r)) await ch.command(sql);
  const [{ n }] = await ch.query<{ n: number }>('SELECT count() AS n FROM logs');
  await assertRollupsAgree(t, 'after the backfill', n);
});

/** The rollups as releases before 015 declared them: without `error_records`. */
const ROLLUPS_BEFORE_015: Rollup[] = ROLLUPS.map((r) => ({ ...r, metrics: ROLLUP_METRICS.filter((m) => m !== 'error_records') }));
/** The rollups as releases before 014 declared them: the status class where 014 keeps the code. */
const ROLLUPS_BEFORE_014: Rollup[] = ROLLUPS_BEFORE_015.map((r) => ({
  ...r,
  dims: r.dims.map((d) => (d.name === 'status_code' ? { name: 'status_class', from: 'status_code' as const, map: (x: string) => `intDiv(${x}, 100)` } : d)),
}));

// Installs made before a migration that reshapes the rollups, with logs in them: the next start backfills them equal to raw.
// `column` is in logs_minute before the migration and gone after it (`added`: the other way round).
for (const [first, column, added, was, rollups] of [
  // Before 007 the views came from the migrations themselves.
  ['007_rollups_regrained.sql', 'key_id', false, 'the old logs_minute had key_id', undefined],
  ['014_rollups_status_code.sql', 'status_class', false, 'logs_minute kept the status class', ROLLUPS_BEFORE_014],
  ['015_rollups_error_records.sql', 'error_records', true, 'logs_minute had no error_records', ROLLUPS_BEFORE_015],
] as const) {
  await t.test(`an install made before ${first.slice(0, 3)} migrates: old views gone, new rollups backfilled equal to raw`, async (t) => {
    const old = mkdtempSync(join(tmpdir(), 'ch-old-'));
    const earlier = MIGRATIONS.slice(0, MIGRATIONS.indexOf(first));
    for (const f of earlier) writeFileSync(join(old, f), readFileSync(join(SQL_DIR, f)));
    await ch.command('CREATE DATABASE IF NOT EXISTS mig_upgrade');
    await ch.command('USE mig_upgrade');
    try {
      t.same(await migrateClickHouse(ch, old, { rollups }), earlier);
      await ch.insert('logs', makeLogs(0, 1200));
      const oldColumn = "SELECT count() AS n FROM system.columns WHERE database = 'mig_upgrade' AND table = 'logs_minute' AND name = {c:String}";
      t.equal(Number((await ch.query<{ n: number }>(oldColumn, { c: column }))[0]!.n), added ? 0 : 1, was);
      t.same(await migrateClickHouse(ch, SQL_DIR), MIGRATIONS.slice(MIGRATIONS.indexOf(first)));
      t.equal(Number((await ch.query<{ n: number }>(oldColumn, { c: column }))[0]!.n), added ? 1 : 0, 'reshaped');
      await assertRollupsAgree(t, 'after the upgrade', 1200);
      // The new views take new records.
      await ch.insert('logs', makeLogs(1200, 300));
      await assertRollupsAgree(t, 'upgraded, then ingesting', 1500);
    } finally {
      await ch.command('USE gateway');
      await ch.command('DROP DATABASE IF EXISTS mig_upgrade');
      rmSync(old, { recursive: true, force: true });
    }
  });
}

await t.test('rollups still agree after merges and new inserts', async (t) => {
  await ch.insert('logs', makeLogs(3000, 500));
  for (const table of new Set(ROLLUPS.map((r) => r.table))) await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
  const [{ n }] = await ch.query<{ n: number }>('SELECT count() AS n FROM logs');
  await assertRollupsAgree(t, 'after optimize', n);
});

await t.test('concurrent calls', async (t) => {
  const results = await Promise.all([
    ...Array.from({ length: 20 }, (_, i) =>
      ch.query<{ i: number; s: number }>('SELECT {i:UInt32} AS i, sum(number) AS s FROM numbers({i:UInt32} * 1000)', { i }),
    ),
    ...Array.from({ length: 5 }, () => ch.query<{ c: number }>('SELECT count() AS c FROM logs')),
  ]);
  for (let i = 0; i < 20; i++) {
    const n = i * 1000;
    t.same(results[i], [{ i, s: (n * (n - 1)) / 2 }], `query ${i} got its own params`);
  }
  const inserts = Array.from({ length: 10 }, (_, k) =>
    ch.insert('logs', JSON.stringify({ id: 1_000_000 + k, master_id: 99, created_at: '2024-03-02 05:00:00' }) + '\n'),
  );
  const reads = Array.from({ length: 10 }, () => ch.query('SELECT count() FROM logs WHERE master_id = 99'));
  await Promise.all([...inserts, ...reads]);
  t.same(await ch.query('SELECT count() AS c FROM logs WHERE master_id = 99'), [{ c: 10 }]);
});

await t.test('one engine per process', async (t) => {
  await t.rejects(openClickHouse({ dataDir }), /already open/);
});

// Last of the chDB tests: it closes the shared instance.
await t.test('ping, then close makes calls reject', async (t) => {
  t.equal(await ch.ping(), true);
  const pending = ch.query('SELECT sum(number) AS s FROM numbers(1000000)');
  await ch.close();
  t.same(await pending, [{ s: 499999500000 }], 'close waits for a call in flight');
  await t.rejects(ch.query('SELECT 1'), /closed/);
  await t.rejects(ch.command('SELECT 1'), /closed/);
  await t.rejects(ch.insert('logs', '{}\n'), /closed/);
  t.equal(await ch.ping(), false);
  await ch.close(); // idempotent
});

await t.test('reopening the data directory finds the data', async (t) => {
  const again = await openClickHouse({ dataDir });
  t.teardown(() => again.close());
  t.same(await migrateClickHouse(again, SQL_DIR), []);
  const [{ n }] = await again.query<{ n: number }>('SELECT count() AS n FROM logs WHERE master_id = 99');
  t.equal(n, 10);
});

t.test('http transport without a server', async (t) => {
  const http = new HttpClickHouse({ url: 'http://127.0.0.1:1', requestTimeoutMs: 2_000 });
  t.equal(http.transport, 'http');
  const started = Date.now();
  t.equal(await http.ping(), false, 'connection refused is not healthy');
  t.ok(Date.now() - started < 2_000, 'and says so quickly');
  await t.rejects(http.query('SELECT {x:UInt8} AS x', { x: 1 }));
  await http.close();
  await t.rejects(http.query('SELECT 1'), /closed/);
  t.equal(await http.ping(), false);
});

t.test('openClickHouse picks http for a url', async (t) => {
  const http: ClickHouse = await openClickHouse({ url: 'http://127.0.0.1:1', dataDir });
  t.equal(http.transport, 'http');
  await http.close();
});
