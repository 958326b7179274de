/**
 * CPU time a process spent during a stretch of time, per thread name, read
 * from /proc/<pid>/task/<tid>/stat (utime + stime). It tells where the two
 * cores went: the service's JS thread, its worker threads, the engines'
 * native threads (chDB), or the load generator.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second (USER_HZ); 100 on Linux. */
const ticksPerSecond = 100;

type Snapshot = Map<string, { comm: string; ticks: number }>;

function snapshot(pid: number): Snapshot {
  const out: Snapshot = new Map();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // comm is parenthesised and may hold spaces: fields resume after the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      out.set(tid, { comm, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the thread ended
    }
  }
  return out;
}

export interface CpuUsage {
  /** Wall seconds measured. */
  seconds: number;
  /** CPU seconds per wall second over the stretch (1 = one core busy). */
  cores: number;
  /** The same, per thread name, largest first. */
  byThread: Array<{ thread: string; cores: number }>;
}

/** Starts measuring; `stop()` gives the usage since. Threads that ended meanwhile are not counted. */
export function measureCpu(pid: number): { stop(): CpuUsage } {
  const before = snapshot(pid);
  const started = performance.now();
  return {
    stop: () => {
      const seconds = (performance.now() - started) / 1000;
      const byName = new Map<string, number>();
      for (const [tid, t] of snapshot(pid)) {
        const used = t.ticks - (before.get(tid)?.ticks ?? 0);
        byName.set(t.comm, (byName.get(t.comm) ?? 0) + used);
      }
      const cores = (ticks: number): number => Math.round((ticks / ticksPerSecond / seconds) * 100) / 100;
      const byThread = [...byName]
        .map(([thread, ticks]) => ({ thread, cores: cores(ticks) }))
        .filter((t) => t.cores > 0)
        .sort((a, b) => b.cores - a.cores);
      return { seconds, cores: cores([...byName.values()].reduce((a, b) => a + b, 0)), byThread };
    },
  };
}

export const describeCpu = (u: CpuUsage, top = 5): string =>
  `${u.cores} cores (${u.byThread.slice(0, top).map((t) => `${t.thread} ${t.cores}`).join(', ')})`;

/** Runs `work` while measuring the CPU of the server process `pid` and of this process (the load generator). */
export async function withCpu<T>(pid: number, work: () => Promise<T>): Promise<{ value: T; server: CpuUsage; client: CpuUsage }> {
  const server = measureCpu(pid);
  const client = measureCpu(process.pid);
  const value = await work();
  return { value, server: server.stop(), client: client.stop() };
}

/** Microseconds of CPU per item (request, record, key) over a measured stretch. */
export const cpuMicros = (u: CpuUsage, items: number): number => (items > 0 ? Math.round(((u.cores * u.seconds) / items) * 1e7) / 10 : 0);
