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
  const out: Array<Round<S, C>> = [];
  for (let i = 0; i < rounds; i++) {
    let s: S;
    let c: C;
    if (i % 2 === 0) {
      c = await ceiling();
      s = await service();
    } else {
      s = await service();
      c = await ceiling();
    }
    out.push({ service: s, ceiling: c, ratio: ratio(s, c) });
  }
  return { rounds: out, ratio: median(out.map((r) => r.ratio)) };
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
