/**
 * The cost of durable acknowledgement (SVC_LOG_ACK), measured in the same run
 * on the same machine: the scenario's service acknowledges `durable` (the
 * default); a second service, started beside it, `memory`. The same load goes
 * to each in paired rounds (alternating which goes first); the figure is
 * durable's rate over memory's, and the target is at least 0.8
 * (docs/performance.md, "Durable acknowledgement").
 */
import { target, type Target } from './results.js';
import { pairedRounds } from './rounds.js';
import { startService } from './service.js';

export interface AckCost {
  /** Median of the per-round ratios durable / memory. */
  ratio: number;
  durable: number[];
  memory: number[];
}

/** `measure` loads one service (its base URL) and returns its rate (requests or records answered per second). */
export async function ackCost(durableBase: string, rounds: number, nodeArgs: string[] | undefined, measure: (base: string) => Promise<number>): Promise<AckCost> {
  const memory = await startService({ SVC_LOG_ACK: 'memory' }, nodeArgs);
  try {
    await measure(memory.base); // warm-up, as the durable service had
    const paired = await pairedRounds(rounds, () => measure(durableBase), () => measure(memory.base), (d, m) => d / m);
    return { ratio: paired.ratio, durable: paired.rounds.map((r) => r.service), memory: paired.rounds.map((r) => r.ceiling) };
  } finally {
    await memory.stop();
  }
}

export function ackRows(c: AckCost, unit: string): Array<[string, string | number]> {
  return [
    ['durable / memory acknowledgement (median of rounds)', `${(c.ratio * 100).toFixed(1)}%`],
    [`  durable ${unit}, per round`, c.durable.map(Math.round).join(', ')],
    [`  memory ${unit}, per round`, c.memory.map(Math.round).join(', ')],
  ];
}

export const ackTarget = (c: AckCost): Target => target('durable acknowledgement >= 80% of memory', c.ratio, 0.8);
