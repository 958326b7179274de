/**
 * slonik's transaction context on the thread that serves HTTP: promise hooks
 * are off between transactions, transactions and slonik's foreign-connection
 * check still work. Run in a child process: tap turns promise hooks on in its
 * own test processes.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { freshDatabase, postgresAvailable } from '../helpers/harness.js';

const dist = (p: string): string => new URL(`../../src/${p}`, import.meta.url).href;

// Promise hooks are on when an await resumes in an async id of its own (each promise gets one).
const child = `
import { executionAsyncId } from 'node:async_hooks';
import { sql, UnexpectedForeignConnectionError } from 'slonik';
import { connectPool } from '${dist('storage/postgres/pool.js')}';
import { releasingTransactionContext } from '${dist('storage/postgres/transaction-context.js')}';

const hooksOn = async () => { await null; const a = executionAsyncId(); await null; return a !== executionAsyncId(); };
const foreignRefused = (pool) => pool.query(sql.unsafe\`SELECT 1\`).then(() => false, (err) => err instanceof UnexpectedForeignConnectionError);
const rows = async (pool) => Number(await pool.oneFirst(sql.unsafe\`SELECT count(*) FROM t\`));
const out = {};
const raw = await connectPool(process.env.DB_URL);
out.atStart = await hooksOn();
await raw.query(sql.unsafe\`CREATE TABLE t (x int)\`);
await raw.transaction((tx) => tx.query(sql.unsafe\`SELECT 1\`));
out.afterSlonikTransaction = await hooksOn();

const pool = releasingTransactionContext(raw);
out.inside = await pool.transaction(async (tx) => {
  await tx.query(sql.unsafe\`INSERT INTO t VALUES (1)\`);
  return { hooksOn: await hooksOn(), foreignRefused: await foreignRefused(pool) };
});
out.afterCommit = { hooksOn: await hooksOn(), rows: await rows(pool) };
out.rollback = await pool.transaction(async (tx) => {
  await tx.query(sql.unsafe\`INSERT INTO t VALUES (2)\`);
  throw new Error('undo');
}).catch((err) => err.message);
out.afterRollback = { hooksOn: await hooksOn(), rows: await rows(pool) };

// Overlapping: the context stays on until the last one ends.
let finishFirst;
const firstMayEnd = new Promise((resolve) => (finishFirst = resolve));
const first = pool.transaction(async (tx) => {
  await firstMayEnd;
  return { foreignRefused: await foreignRefused(pool), rows: Number(await tx.oneFirst(sql.unsafe\`SELECT count(*) FROM t\`)) };
});
await pool.transaction((tx) => tx.query(sql.unsafe\`SELECT 1\`));
out.whileFirstRuns = await hooksOn();
finishFirst();
out.first = await first;
out.afterBoth = await hooksOn();
await raw.end();
process.stdout.write(JSON.stringify(out));
`;

t.test('the HTTP thread pays no promise hooks between transactions', { skip: (await postgresAvailable()) ? false : 'no Postgres' }, async (t) => {
  const db = await freshDatabase();
  t.teardown(db.drop);
  const repo = fileURLToPath(new URL('../../../', import.meta.url)); // bare imports (slonik) resolve from the repository
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', child], { cwd: repo, env: { PATH: process.env.PATH ?? '', DB_URL: db.url } }, (err, out, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(out),
    ),
  );
  const out = JSON.parse(stdout);
  t.equal(out.atStart, false, 'no hooks before any transaction');
  t.equal(out.afterSlonikTransaction, true, 'a plain slonik transaction leaves them on (what this guards against)');
  t.same(out.inside, { hooksOn: true, foreignRefused: true }, 'inside a transaction: context on, foreign connections refused');
  t.same(out.afterCommit, { hooksOn: false, rows: 1 }, 'committed, hooks off again');
  t.equal(out.rollback, 'undo');
  t.same(out.afterRollback, { hooksOn: false, rows: 1 }, 'rolled back, hooks off again');
  t.equal(out.whileFirstRuns, true, 'still on while an overlapping transaction runs');
  t.same(out.first, { foreignRefused: true, rows: 1 }, 'and its check still works');
  t.equal(out.afterBoth, false, 'off once both ended');
});
