import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mainJs, startProcess } from '../helpers/spawn.js';

t.test('--version and -v print the version and exit 0', async (t) => {
  for (const flag of ['--version', '-v']) {
    const out = execFileSync(process.execPath, [mainJs, flag], { encoding: 'utf8' });
    t.match(out.trim(), /^\d+\.\d+\.\d+/);
  }
});

t.test('a bad setting stops start-up with one line naming it', async (t) => {
  let err: { status?: number; stderr?: string } = {};
  try {
    execFileSync(process.execPath, [mainJs], { env: { PATH: process.env.PATH, SVC_PORT: 'abc' }, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    err = e as typeof err;
  }
  t.equal(err.status, 2);
  t.match(err.stderr, /SVC_PORT/);
  t.equal(err.stderr!.trim().split('\n').length, 1);
});

t.test('with no stores configured it serves /health on embedded stores; SIGTERM under load exits 0', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cp-proc-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const started = Date.now();
  const run = await startProcess({ SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: 'adm' });
  const base = `http://127.0.0.1:${run.port}`;
  const health = await fetch(`${base}/health`);
  t.equal(health.status, 200);
  t.comment(`embedded start-up to /health 200: ${Date.now() - started} ms`);
  const body = (await health.json()) as Record<string, string>;
  t.match(body, { database: 'up', store: 'up', clickhouse: 'up' });

  // Keep requests flowing while the signal lands.
  let stop = false;
  const statuses = new Map<number, number>();
  const load = Promise.all(
    Array.from({ length: 8 }, async () => {
      while (!stop) {
        try {
          const r = await fetch(`${base}/admin/features`, { headers: { authorization: 'Bearer adm' } });
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          await r.arrayBuffer();
        } catch {
          statuses.set(0, (statuses.get(0) ?? 0) + 1); // connection refused after close
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    }),
  );
  await new Promise((r) => setTimeout(r, 300));
  run.child.kill('SIGTERM');
  const code = await run.exited;
  stop = true;
  await load;
  t.equal(code, 0, 'exit 0');
  t.ok((statuses.get(200) ?? 0) > 0, 'served requests before the signal');
  for (const s of statuses.keys()) t.ok([0, 200, 503].includes(s), `only 200, 503 or refused (saw ${s})`);
  t.ok(run.lines.some((l) => l.includes('"msg":"stopped"')), 'logged a clean stop');
});
