/** Exact money arithmetic of the ingestion path (src/actors/spend/money.ts, prices.ts): no binary float rounding anywhere. */
import t from 'tap';
import { picoText, plus, times, toPico } from '../../src/contract/money.js';
import { costOf, priceMap } from '../../src/actors/spend/prices.js';

t.test('decimal text to pico-units and back', async (t) => {
  t.equal(toPico('0.000002000000'), 2_000_000);
  t.equal(toPico('12.5'), 12_500_000_000_000);
  t.equal(toPico('-1'), -1_000_000_000_000);
  t.equal(toPico('0.1234567890129'), 123_456_789_012, 'digits past the 12th are cut');
  t.equal(typeof toPico('100000000'), 'bigint', 'past the safe range: BigInt');
  t.throws(() => toPico('1e-6'));
  t.throws(() => toPico(''));
  for (const [p, text] of [
    [0, '0.000000000000'], [1, '0.000000000001'], [2_000_000, '0.000002000000'], [-5, '-0.000000000005'],
    [Number.MAX_SAFE_INTEGER, '9007.199254740991'], [10n ** 30n, '1000000000000000000.000000000000'],
  ] as const) t.equal(picoText(p), text);
});

t.test('products and sums stay exact past 2^53', async (t) => {
  t.equal(times(1000, 2_000_000), 2_000_000_000);
  const big = times(4_294_967_295, 1_000_000_000_000_000_000); // the largest token count at the largest price
  t.equal(typeof big, 'bigint');
  t.equal(picoText(plus(big, 1)), '4294967295000000.000000000001');
  t.equal(0.1 + 0.2 === 0.3, false, 'what floats would have done');
  t.equal(picoText(plus(toPico('0.1'), toPico('0.2'))), '0.300000000000');
});

t.test('a record is priced by its exact model name; input and output default to cost_per_token', async (t) => {
  const prices = priceMap([
    { name: 'gpt-4o', cost_per_token: '0.000010000000', cost_per_input_token: '0.000002500000', cost_per_output_token: null },
    { name: 'free', cost_per_token: '0.000000000000', cost_per_input_token: null, cost_per_output_token: null },
  ]);
  t.same(costOf(prices, 'gpt-4o', 1000, 100), { cost: '0.003500000000', unpriced: false });
  t.same(costOf(prices, 'gpt-4o', undefined, undefined), { cost: '0', unpriced: false });
  t.same(costOf(prices, 'free', 5, 5), { cost: '0', unpriced: false }, 'a listed model at 0 is priced');
  t.same(costOf(prices, 'GPT-4o', 1, 1), { cost: '0', unpriced: true }, 'case-sensitive: not listed');
  t.same(costOf(prices, undefined, 1, 1), { cost: '0', unpriced: true });
});
