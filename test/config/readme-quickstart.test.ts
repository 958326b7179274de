/**
 * Runs the README's "Quick start" as a new user would, so that its commands cannot rot: the first shell block says
 * how to start the service (run here from the built tree, on a port of the test's choosing), the other blocks run
 * with bash against it, and their output must show the master, the child key, the accepted log and its statistics.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProcess } from '../helpers/spawn.js';

const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');

/** The section's text from its heading to the next heading of the same level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

const shellBlocks = (text: string): string[] => [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** The start block's environment: `npm ci` is skipped (the tree is installed), `VAR=value ... npm start` gives the settings. */
function startSettings(block: string): Record<string, string> {
  const env: Record<string, string> = {};
  let starts = 0;
  for (const raw of block.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '' || line === 'npm ci') continue;
    const m = /^((?:[A-Z_]+=\S+\s+)*)npm start$/.exec(line);
    if (!m) throw new Error(`the start block has a line this test does not know how to run: ${raw}`);
    starts++;
    for (const [, k, v] of m[1]!.matchAll(/([A-Z_]+)=(\S+)/g)) env[k!] = v!;
  }
  if (starts !== 1) throw new Error(`the start block should start the service once, found ${starts}`);
  return env;
}

const bash = (script: string): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile('bash', ['-c', `set -euo pipefail\n${script}`], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });

t.test('the README quick start works as written', async (t) => {
  const blocks = shellBlocks(section(readme, 'Quick start'));
  t.ok(blocks.length >= 2, 'a start block and at least one block to run against it');
  const env = startSettings(blocks[0]!);
  t.equal(env.SVC_ADMIN_TOKEN, 'admin-secret', 'the start block sets the admin token the other blocks use');
  t.match(blocks[0]!, ':8080', 'the start block names the default port the other blocks use');

  const dataDir = mkdtempSync(join(tmpdir(), 'quickstart-'));
  // A shorter flush window than the default 1 s, so that a loaded test machine still stores the record within the
  // block's `sleep 2` (the wait itself is the log writer's: docs/log-pipeline.md).
  const svc = await startProcess({ ...env, SVC_DATA_DIR: dataDir, SVC_LOG_FLUSH_MS: '200' });
  t.teardown(async () => {
    svc.child.kill('SIGTERM');
    await svc.exited;
    rmSync(dataDir, { recursive: true, force: true });
  });

  // The start block's comment: the "listening" line names the console and the API docs.
  const listening = JSON.parse(svc.lines.find((l) => l.includes('"listening"'))!) as { console?: string; apiDocs?: string };
  t.match(listening.console, /\/console\/$/, 'the listening line names the console');
  t.match(listening.apiDocs, /\/swagger\/index\.html$/, 'the listening line names the API docs');
  t.notOk(svc.lines.some((l) => l.includes('SVC_ADMIN_TOKEN is not set')), 'no warning about a missing admin token');

  let out = '';
  for (const block of blocks.slice(1)) {
    t.match(block, 'localhost:8080', 'each block talks to the service at the default address');
    const run = await bash(block.replaceAll('localhost:8080', `127.0.0.1:${svc.port}`));
    t.equal(run.code, 0, `the block runs without error\n${block}\nstderr: ${run.stderr}`);
    out += run.stdout;
  }

  const lines = out.split('\n').map((l) => l.trim()).filter(Boolean);
  const master = /^master (\d+), child key (\d+)$/.exec(lines.find((l) => l.startsWith('master ')) ?? '');
  t.ok(master, `the ids of the created master and the issued key are printed\n${out}`);
  t.ok(lines.includes('202'), `the log record is accepted (202)\n${out}`);
  const stats = JSON.parse(lines.at(-1)!) as { group_by?: string; items?: { key?: string; requests?: number }[] };
  t.equal(stats.group_by, 'model', 'the statistics are per model');
  t.same(
    stats.items?.map((i) => ({ model: i.key, requests: i.requests })),
    [{ model: 'gpt-4o', requests: 1 }],
    'the statistics show the record: one request of the posted model',
  );

  // What the output claims is true in the service: the master and its key exist, the record is stored under them.
  const admin = { authorization: 'Bearer admin-secret' };
  const base = `http://127.0.0.1:${svc.port}`;
  const keys = (await (await fetch(`${base}/admin/masters/${master![1]}/keys`, { headers: admin })).json()) as { items: { id: number }[] };
  t.same(keys.items.map((k) => k.id), [Number(master![2])], 'the master exists with the issued child key');
  const logs = (await (await fetch(`${base}/admin/logs?master_id=${master![1]}`, { headers: admin })).json()) as {
    items: { key_id: number; model: string }[];
  };
  t.same(logs.items.map((l) => [l.key_id, l.model]), [[Number(master![2]), 'gpt-4o']], 'the record is stored under them');
});
