/**
 * Money as ClickHouse stores it, Decimal(38, 12) (decisions.md, "Money"), read
 * as text and held as a bigint count of 10^-12 units, so sums across groups
 * stay exact; sent as a JSON number rounded to 12 decimal places.
 */
export const MONEY_SCALE = 12;
const UNIT = 10n ** BigInt(MONEY_SCALE);

/** Decimal text ("12.5", "-0.000000000001", "3") as 10^-12 units; digits beyond the 12th are cut. */
export function parseMoney(text: string | number): bigint {
  const s = String(text).trim();
  const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(s);
  if (!m) throw new Error(`not a decimal: ${s}`);
  const units = BigInt(m[2]!) * UNIT + BigInt((m[3] ?? '').slice(0, MONEY_SCALE).padEnd(MONEY_SCALE, '0'));
  return m[1] ? -units : units;
}

/** 10^-12 units as exact decimal text. */
export function moneyText(units: bigint): string {
  const neg = units < 0n;
  const a = neg ? -units : units;
  const frac = (a % UNIT).toString().padStart(MONEY_SCALE, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${a / UNIT}${frac ? `.${frac}` : ''}`;
}

/** 10^-12 units as the nearest JSON number (at most 12 decimal places). */
export const moneyNumber = (units: bigint): number => Number(moneyText(units));
