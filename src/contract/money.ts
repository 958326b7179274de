/**
 * Money in exact decimals (decisions.md, "Money"): amounts travel as decimal
 * text with 12 places (Postgres numeric(38,12), ClickHouse Decimal(38,12)) and
 * are computed in integer pico-units (10^-12 of the currency unit). A price of
 * 0.15 per million tokens is 150,000 pico-units per token; a record's cost is
 * tokens x price, an integer, exact. Numbers are used while the product stays
 * a safe integer (every real price and token count), BigInt past it, so
 * nothing is ever rounded by binary floating point.
 */
export const SCALE = 12;

/** An amount in pico-units: a safe integer Number, or a BigInt when larger. */
export type Pico = number | bigint;

/** Decimal text (`12`, `0.5`, `0.000002000000`, `-3`) to pico-units; digits past the 12th decimal are cut. */
export function toPico(text: string): Pico {
  const m = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw new Error(`not a decimal: ${JSON.stringify(text)}`);
  const digits = `${m[2] || '0'}${(m[3] ?? '').slice(0, SCALE).padEnd(SCALE, '0')}`;
  const big = BigInt(`${m[1]}${digits}`);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

/** Pico-units to decimal text with 12 places (`0.000002000000`): what the Decimal(38,12) column takes. */
export function picoText(p: Pico): string {
  const neg = p < 0;
  // A safe integer prints its exact digits (no exponent below 10^21): no BigInt on the ingestion path.
  const s = (typeof p === 'number' ? String(neg ? -p : p) : (neg ? -p : p).toString()).padStart(SCALE + 1, '0');
  return `${neg ? '-' : ''}${s.slice(0, -SCALE)}.${s.slice(-SCALE)}`;
}

/** a x b (a token count and a price), exact. */
export function times(tokens: number, price: Pico): Pico {
  if (typeof price === 'number') {
    const p = tokens * price;
    if (p <= Number.MAX_SAFE_INTEGER) return p;
  }
  return BigInt(tokens) * BigInt(price);
}

export function plus(a: Pico, b: Pico): Pico {
  if (typeof a === 'number' && typeof b === 'number') {
    const s = a + b;
    if (s <= Number.MAX_SAFE_INTEGER) return s;
  }
  return BigInt(a) + BigInt(b);
}

/** A decimal text as the JSON number the API sends: rounded to 12 places by construction. */
export const moneyNumber = (text: string | null): number | null => (text === null ? null : Number(text));
