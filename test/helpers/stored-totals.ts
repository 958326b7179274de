/**
 * What a store holds, for the tests that check nothing is lost or counted
 * twice: how many times each `audit_reason` mark is stored in `logs`, and the
 * raw table's totals beside each rollup's (each grain of a shared table on its
 * own), as `requests/tokens_in/errors`.
 */
import { ROLLUPS, rollupName, rollupWhere } from '../../src/storage/clickhouse/rollups.js';
import type { ClickHouse } from '../../src/storage/clickhouse/client.js';

export interface StoredTotals {
  marks: Record<string, number>;
  /** requests/tokens_in/errors */
  raw: string;
  rollups: Record<string, string>;
}

export async function storedTotals(ch: ClickHouse): Promise<StoredTotals> {
  const marks: Record<string, number> = {};
  for (const r of await ch.query<{ m: string; n: number }>('SELECT audit_reason AS m, count() AS n FROM logs GROUP BY m')) marks[r.m] = Number(r.n);
  const [raw] = await ch.query<{ v: string }>("SELECT concat(toString(count()), '/', toString(sum(tokens_in)), '/', toString(countIf(status_code >= 400))) AS v FROM logs");
  const rollups: Record<string, string> = {};
  for (const r of ROLLUPS) {
    const own = rollupWhere(r);
    const [x] = await ch.query<{ v: string }>(
      `SELECT concat(toString(sum(requests)), '/', toString(sum(tokens_in)), '/', toString(sum(errors))) AS v FROM ${r.table}${own ? ` WHERE ${own}` : ''}`,
    );
    rollups[rollupName(r)] = x!.v;
  }
  return { marks, raw: raw!.v, rollups };
}
