/**
 * Model prices as the ingestion path uses them: a Map from the registry's
 * model name to its input and output price in pico-units, held in memory on
 * the logs actor's thread. A log record is priced by its `model` field, an
 * exact match on the registry name (decisions.md, "Money"): the name the data
 * plane writes into the record, which is the model it called upstream.
 */
import type { PriceRow } from '../../storage/postgres/models.js';
import { picoText, plus, times, toPico, type Pico } from '../../contract/money.js';

export interface Price {
  input: Pico;
  output: Pico;
}

/** One registry entry's prices as Postgres text (numeric(38,12)); absent input/output fall back to cost_per_token. */
// A model's prices as the registry's query returns them (declared with the query, in storage).
export type { PriceRow };

export type PriceMap = Map<string, Price>;

export function priceMap(rows: PriceRow[]): PriceMap {
  const map: PriceMap = new Map();
  for (const r of rows) {
    map.set(r.name, {
      input: toPico(r.cost_per_input_token ?? r.cost_per_token),
      output: toPico(r.cost_per_output_token ?? r.cost_per_token),
    });
  }
  return map;
}

/** The cost column's text for a priced record. */
const ZERO = '0';

/**
 * A record's cost (decimal text) and whether its model had a price: a model
 * the registry does not list costs 0 and is unpriced; a listed model is priced
 * (at 0 when its prices are 0).
 */
export function costOf(prices: PriceMap, model: unknown, tokensIn: unknown, tokensOut: unknown): { cost: string; unpriced: boolean } {
  const p = typeof model === 'string' ? prices.get(model) : undefined;
  if (!p) return UNPRICED;
  const tin = (tokensIn as number | undefined) ?? 0;
  const tout = (tokensOut as number | undefined) ?? 0;
  if ((tin === 0 || p.input === 0) && (tout === 0 || p.output === 0)) return FREE;
  return { cost: picoText(plus(times(tin, p.input), times(tout, p.output))), unpriced: false };
}

const UNPRICED = Object.freeze({ cost: ZERO, unpriced: true });
const FREE = Object.freeze({ cost: ZERO, unpriced: false });
