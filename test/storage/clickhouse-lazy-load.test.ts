/**
 * chDB is loaded only when the embedded engine is opened: importing it maps
 * libchdb (~150 MB resident), which a node on a ClickHouse server never needs.
 * Checked in a fresh process, since this one may have loaded it already.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const module = (p: string): string => new URL(`../../src/${p}`, import.meta.url).href;

const script = `
import { readFileSync } from 'node:fs';
const mapped = () => readFileSync('/proc/self/maps', 'utf8').includes('libchdb');
await import(${JSON.stringify(module('service.js'))});
const { openClickHouse } = await import(${JSON.stringify(module('storage/clickhouse/open.js'))});
const server = await openClickHouse({ url: 'http://127.0.0.1:1', dataDir: process.argv[1] });
const afterServer = mapped();
await server.close();
const embedded = await openClickHouse({ dataDir: process.argv[1] });
const afterEmbedded = mapped();
await embedded.close();
console.log(JSON.stringify({ afterServer, afterEmbedded }));
`;

t.test('libchdb is mapped only once the embedded engine is opened', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ch-lazy-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, dir], { timeout: 120_000 });
  const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as { afterServer: boolean; afterEmbedded: boolean };
  t.equal(seen.afterServer, false, 'the service modules and a ClickHouse server: not mapped');
  t.equal(seen.afterEmbedded, true, 'the embedded engine: mapped');
});
