/**
 * The ClickHouse server version is stated in three places that must agree: the minimum in
 * docs/clickhouse-compat.md and in the README, and the image compose pins (at or above that minimum).
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const read = (path: string): string => readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8');
const version = (text: string): [number, number] => text.split('.').map(Number) as [number, number];
const atLeast = (a: [number, number], b: [number, number]): boolean => a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);

t.test('the minimum ClickHouse version agrees between the docs, the README and compose', async (t) => {
  const minimum = /\*\*Minimum server version: ClickHouse (\d+\.\d+)\.\*\*/.exec(read('docs/clickhouse-compat.md'))?.[1];
  t.ok(minimum, 'docs/clickhouse-compat.md states the minimum');
  t.match(read('README.md'), `must be **${minimum} or newer**`, 'the README states the same minimum');
  const pinned = /image: clickhouse\/clickhouse-server:(\d+\.\d+)\b/.exec(read('docker-compose.yml'))?.[1];
  t.ok(pinned, 'compose pins a ClickHouse version');
  t.ok(atLeast(version(pinned!), version(minimum!)), `compose's ${pinned} is at or above ${minimum}`);
  t.match(read('docs/clickhouse-compat.md'), `pins **${pinned}**`, 'the compatibility page names the pinned version');
});
