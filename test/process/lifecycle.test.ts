import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
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

/** Runs the service to its exit and returns what it printed. */
function runToExit(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [mainJs, ...args], {
    env: { PATH: process.env.PATH ?? '', SVC_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 200_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

t.test('--help prints the usage with every setting and exits 0 without starting', async (t) => {
  for (const flag of ['--help', '-h']) {
    const r = await runToExit([flag], { SVC_PORT: 'not-read' });
    t.equal(r.code, 0, flag);
    t.match(r.stdout, /^Usage: /);
    t.match(r.stdout, /SVC_ADMIN_TOKEN/);
    t.match(r.stdout, /SVC_PORT .*\(default 8080\)/);
  }
});

t.test('an unknown argument is an error: exit 2 with one line, nothing started', async (t) => {
  for (const args of [['--port=9000'], ['serve'], ['--help', '--bogus']]) {
    const r = await runToExit(args, {});
    t.equal(r.code, 2, args.join(' '));
    t.equal(r.stdout, '');
    t.equal(r.stderr.trim().split('\n').length, 1);
    t.match(r.stderr, /unknown argument ".+" .*--help/);
  }
});

t.test('a second service on a port in use, or on a data directory in use, exits 1 with one line and no stack', { timeout: 290_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cp-proc-'));
  const otherDir = mkdtempSync(join(tmpdir(), 'cp-proc-'));
  t.teardown(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(otherDir, { recursive: true, force: true });
  });
  const first = await startProcess({ SVC_DATA_DIR: dataDir }, 120_000);
  t.teardown(async () => {
    first.child.kill('SIGTERM');
    await first.exited;
  });
  // The start-up log tells a new operator where to go, and that the admin API is closed without a token.
  const listening = JSON.parse(first.lines.find((l) => l.includes('"msg":"listening"'))!) as Record<string, string>;
  t.equal(listening.console, `http://127.0.0.1:${first.port}/console/`);
  t.equal(listening.apiDocs, `http://127.0.0.1:${first.port}/swagger/index.html`);
  await new Promise((r) => setTimeout(r, 200));
  t.ok(first.lines.some((l) => /"level":40,.*SVC_ADMIN_TOKEN is not set/.test(l)), 'warns that no admin token is set');

  const port = await runToExit([], { SVC_PORT: String(first.port), SVC_DATA_DIR: otherDir, SVC_ADMIN_TOKEN: 'other' });
  t.equal(port.code, 1, 'port in use: exit 1');
  t.match(port.stderr, new RegExp(`^failed to start: cannot listen on 127\\.0\\.0\\.1:${first.port} .*port is in use`));
  t.equal(port.stderr.trim().split('\n').length, 1, 'one line');
  t.notMatch(port.stderr, /\n\s+at /, 'no stack trace');
  t.notMatch(port.stdout, /"msg":"listening"/, 'it never listened');

  const dir = await runToExit([], { SVC_PORT: '0', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: 'other' });
  t.equal(dir.code, 1, 'data dir in use: exit 1');
  t.match(dir.stderr, /^failed to start: .*in use/);
  t.equal(dir.stderr.trim().split('\n').length, 1, 'one line');

  // The first one still serves, alone.
  const health = await fetch(`http://127.0.0.1:${first.port}/health`);
  t.equal(health.status, 200);
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
  const run = await startProcess({ SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: 'adm' }, 120_000);
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
