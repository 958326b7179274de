/**
 * ingest-batch's store ceiling (harness/direct-clickhouse.ts) cycles the same
 * few batches. `logs` drops a block whose hash it holds among its recent ones
 * (009), so a ceiling whose repeats were dropped would time parsing, not
 * storing, and make the service look slower than it is. Every row it sends
 * must be stored, and it says how many were.
 */
import t from 'tap';
import { insertRate, withDirectClickHouse } from '../../src/bench/harness/direct-clickhouse.js';
import { ndjsonBodies } from '../../src/bench/fixtures/log-records.js';
import { countLogs } from '../../src/storage/clickhouse/logs.js';

t.test('the store ceiling stores every row it inserts, repeated batches included', async (t) => {
  await withDirectClickHouse(async (ch) => {
    const batches = ndjsonBodies(2, 300).map((data) => ({ data, rows: 300 }));
    const first = await insertRate(ch, batches, 1500);
    t.equal(first.rows, 1500, 'five inserts of two batches cycled');
    t.equal(first.stored, 1500, 'each repeat stored, none dropped as a duplicate');
    const again = await insertRate(ch, batches, 600);
    t.equal(again.stored, 600, 'a later call stores its repeats too');
    t.equal(await countLogs(ch), 2100, 'what logs holds');
    t.ok(first.rate > 0 && first.seconds > 0);
  });
});
