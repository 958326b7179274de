/** derived(): a value computed from rows once per rows array and key (src/storage/clickhouse/derived.ts). */
import t from 'tap';
import { derived } from '../../src/storage/clickhouse/derived.js';

t.test('computed once per rows array and key', async (t) => {
  const rows = [{ n: 1 }, { n: 2 }];
  let computed = 0;
  const sum = (key: string) => derived(rows, key, () => (computed++, rows.reduce((a, r) => a + r.n, 0)));
  t.equal(sum('a'), 3);
  t.equal(sum('a'), 3);
  t.equal(computed, 1, 'the second call is served from the first');
  sum('b');
  t.equal(computed, 2, 'another key computes again');
  derived([...rows], 'a', () => computed++);
  t.equal(computed, 3, 'other rows (a fresh read) compute again');
});

t.test('a computed undefined or null is kept too', async (t) => {
  const rows: unknown[] = [];
  let computed = 0;
  t.equal(derived(rows, 'k', () => (computed++, undefined)), undefined);
  t.equal(derived(rows, 'k', () => (computed++, 1)), undefined);
  t.equal(computed, 1);
});
