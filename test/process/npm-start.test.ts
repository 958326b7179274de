/**
 * `npm start` as a process manager runs it: on a built tree it starts without compiling, and the signal sent to
 * npm's own pid stops the service (node is exec'd, not left behind a shell holding the data directory's lock).
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitForListening } from '../helpers/spawn.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

t.test('npm start on a built tree does not compile, answers /health, and SIGTERM to npm stops the service', { timeout: 280_000 }, async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cp-npm-start-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const stamp = join(repo, 'dist/build-info.json');
  const builtAt = statSync(stamp).mtimeMs;

  const started = Date.now();
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: repo,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_DATA_DIR: dataDir, SVC_ADMIN_TOKEN: 'adm' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const npmExited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (npm.exitCode === null) npm.kill('SIGTERM'); // a failed run leaves nothing behind
  });
  const lines: string[] = [];
  const listening = await waitForListening(npm, lines, npmExited, 240_000);
  t.ok(listening.pid, 'the listening line names the pid');
  const health = await fetch(`http://127.0.0.1:${listening.port}/health`);
  t.equal(health.status, 200);
  t.comment(`npm start on a built tree to /health 200: ${Date.now() - started} ms`);
  t.equal(statSync(stamp).mtimeMs, builtAt, 'an up-to-date tree is not rebuilt');
  t.not(listening.pid, npm.pid, 'the service logs its own pid');

  npm.kill('SIGTERM');
  await npmExited;
  const deadline = Date.now() + 20_000;
  while (alive(listening.pid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.notOk(alive(listening.pid!), 'the node process is gone');
  t.ok(lines.some((l) => l.includes('"msg":"stopped"')), 'it stopped cleanly');
  await t.rejects(fetch(`http://127.0.0.1:${listening.port}/health`), 'nothing answers on the port');
});
