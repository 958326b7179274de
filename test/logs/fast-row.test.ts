import t from 'tap';
import { FastRows } from '../../src/actors/logs/fast-row.js';
import { parseLogBody } from '../../src/actors/logs/parse.js';
import { toRow } from '../../src/actors/logs/record.js';
import { logRecord } from '../../src/bench/fixtures/log-records.js';

const at = '2026-11-21 21:00:00.000';
const fast = new FastRows();

/** The general path's rows, as values. */
const general = (body: Buffer, ndjson: boolean, firstId: number, keep: boolean): unknown[] => {
  const { records } = parseLogBody(body, ndjson);
  return records.map((r, k) => toRow(r, firstId + k, at, keep));
};
/** The fast path's rows, as values; null when it declines. */
const fastRows = (body: Buffer, ndjson: boolean, firstId: number, keep: boolean): unknown[] | null => {
  if (!fast.scan(body, ndjson)) return null;
  let id = firstId;
  const text = Buffer.from(fast.rows({ next: () => id++ }, Buffer.from(at), keep)).toString('utf8');
  return text.split('\n').map((line) => JSON.parse(line) as unknown);
};

t.test('the fast path writes the rows the general path writes', async (t) => {
  for (let i = 0; i < 400; i++) {
    const body = Buffer.from(JSON.stringify(logRecord(i)));
    const keep = i % 3 !== 0;
    t.same(fastRows(body, false, 1000 + i, keep), general(body, false, 1000 + i, keep), `record ${i}`);
  }
  const nd = Buffer.from(Array.from({ length: 50 }, (_, i) => JSON.stringify(logRecord(i))).join('\n') + '\n\n');
  t.same(fastRows(nd, true, 5, true), general(nd, true, 5, true), 'NDJSON');
  const arr = Buffer.from(JSON.stringify(Array.from({ length: 20 }, (_, i) => logRecord(i)), null, 2));
  t.same(fastRows(arr, false, 5, true), general(arr, false, 5, true), 'an indented array');
  t.equal(fast.batch, true);
});

t.test('strings with escapes, non-ASCII text, surrogate pairs and unknown fields', async (t) => {
  const tricky = ['a"b\\c/d', 'tab\there\nline', 'é中文😀', '\u2028\u2029', 'x'.repeat(200), '\u0001'];
  for (const [k, s] of tricky.entries()) {
    const body = Buffer.from(JSON.stringify({ key_id: 1, master_id: 2, status_code: 200, model: s.slice(0, 200), extra: { deep: [1, -2.5e3, true, null, s] } }));
    t.same(fastRows(body, false, 1, true), general(body, false, 1, true), `tricky string ${k}`);
  }
  const escaped = Buffer.from('{"key_id":1,"master_id":2,"status_code":200,"model":"\\u00e9\\ud83d\\ude00\\/"}');
  t.same(fastRows(escaped, false, 1, true), general(escaped, false, 1, true), '\\u escapes');
});

t.test('the fast path declines what it does not prove valid', async (t) => {
  const base = '"key_id":1,"master_id":2,"status_code":200';
  const declined = [
    `{${base},"model":null}`, // null
    `{${base},"latency_ms":1.0}`, // not a plain integer
    `{${base},"latency_ms":-1}`,
    `{${base},"latency_ms":01}`,
    `{${base},"latency_ms":4294967296}`, // over its maximum
    `{"key_id":1,"master_id":2}`, // status_code missing
    `{${base},"key_id":3}`, // repeated
    `{${base},"createdAt":"2026-01-01T00:00:00Z"}`, // left to the general path
    `{${base},"model":"${'m'.repeat(201)}"}`, // over maxLength
    `{${base},"model":"\\ud800"}`, // lone surrogate
    `{${base},"model":"a\u0001b"}`, // raw control character
    `{${base},"k\\u0065y":1}`, // escaped key
    `{${base}}x`,
    `{${base},}`,
    `[]`,
    ``,
  ];
  for (const text of declined) t.notOk(fast.scan(Buffer.from(text), false), text);
  t.notOk(fast.scan(Buffer.from([...Buffer.from(`{${base},"model":"`), 0xff, 0x22, 0x7d]), false), 'invalid UTF-8');
});

t.test('error records are marked for the observers', async (t) => {
  const body = Buffer.from(`${JSON.stringify(logRecord(1))}\n${JSON.stringify(logRecord(17))}\n${JSON.stringify({ key_id: 1, master_id: 3, status_code: 200, error_message: 'x' })}`);
  t.ok(fast.scan(body, true));
  t.equal(fast.errors, 2);
  t.same([fast.isError(0), fast.isError(1), fast.isError(2)], [false, true, true]);
  t.same([...fast.masters()], [2, 2, 3]);
  t.same(JSON.parse(fast.text(1)), logRecord(17));
});
