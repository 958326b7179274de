/**
 * The embedded engine's allocator returns freed pages after the configured
 * decay, unless the operator set JE_MALLOC_CONF. The library reads it once when
 * it loads, so each case runs in a fresh process and asks the engine itself.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';

const run = promisify(execFile);
const openModule = new URL('../../src/storage/clickhouse/open.js', import.meta.url).href;

const script = `
const { openClickHouse } = await import(${JSON.stringify(openModule)});
const ch = await openClickHouse({ dataDir: process.argv[1], dirtyDecayMs: 700 });
const rows = await ch.query('SELECT * FROM system.jemalloc_stats');
await ch.close();
const text = rows.map((r) => Object.values(r).join('')).join('\\n');
console.log(/opt\\.dirty_decay_ms: (-?\\d+)/.exec(text)?.[1] ?? 'missing');
`;

async function dirtyDecayMs(t: Test, env: NodeJS.ProcessEnv): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ch-allocator-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, dir], { env, timeout: 120_000 });
  return stdout.trim().split('\n').at(-1)!;
}

t.test('the configured decay reaches the engine', async (t) => {
  const { JE_MALLOC_CONF: _, ...env } = process.env;
  t.equal(await dirtyDecayMs(t, env), '700');
});

t.test("an operator's JE_MALLOC_CONF wins", async (t) => {
  t.equal(await dirtyDecayMs(t, { ...process.env, JE_MALLOC_CONF: 'dirty_decay_ms:1234' }), '1234');
});
