/** What the figures were measured on: they only compare within one machine. */
import { cpus, totalmem } from 'node:os';
import { availableParallelism } from 'node:os';

export interface Machine {
  nproc: number;
  cpu: string;
  memoryGiB: number;
  node: string;
}

export function machine(): Machine {
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
  };
}
