/** Samples a process's resident memory (VmRSS in /proc/<pid>/status) every 200 ms and keeps the peak. */
import { readFileSync } from 'node:fs';

export function readRssBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null; // exited, or no /proc
  }
}

export interface RssSampler {
  /** Stops sampling; the peak in bytes (null when no sample could be read). */
  stop(): number | null;
}

export function sampleRss(pid: number, everyMs = 200): RssSampler {
  let peak: number | null = null;
  const take = (): void => {
    const rss = readRssBytes(pid);
    if (rss !== null && (peak === null || rss > peak)) peak = rss;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return peak;
    },
  };
}
