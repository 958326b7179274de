/**
 * Paired rounds: the service and its ceiling measured one after the other,
 * `rounds` times, alternating which goes first so that drift on a shared
 * machine (other jobs come and go) weighs on both sides alike. The scenario's
 * ratio is the median of the per-round ratios.
 */
export interface Round<S, C> {
  service: S;
  ceiling: C;
  ratio: number;
}

export async function pairedRounds<S, C>(
  rounds: number,
  service: () => Promise<S>,
  ceiling: () => Promise<C>,
  ratio: (s: S, c: C) => number,
): Promise<{ rounds: Array<Round<S, C>>; ratio: number }> {
  const out = (await rotatingRounds<S | C>(rounds, [service, ceiling])).map(([s, c]) => ({
    service: s as S,
    ceiling: c as C,
    ratio: ratio(s as S, c as C),
  }));
  return { rounds: out, ratio: median(out.map((r) => r.ratio)) };
}

/**
 * Every side once per round, the last side first on even rounds and the first
 * side first on odd ones, so that none always runs first. Results per round,
 * in the order of `sides`.
 */
export async function rotatingRounds<T>(rounds: number, sides: Array<() => Promise<T>>): Promise<T[][]> {
  const out: T[][] = [];
  for (let i = 0; i < rounds; i++) {
    const order = sides.map((_, k) => k);
    if (i % 2 === 0) order.reverse();
    const results = new Array<T>(sides.length);
    for (const k of order) results[k] = await sides[k]!();
    out.push(results);
  }
  return out;
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
