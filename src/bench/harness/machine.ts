/** What the figures were measured on: they only compare within one machine. */
import { readFileSync, realpathSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';

export interface Machine {
  nproc: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  /** Where the stores' files were, and its filesystem (ClickHouse's inserts cost differs by filesystem). */
  dataDir: string;
  filesystem: string;
}

export function machine(): Machine {
  const dataDir = process.env.BENCH_DATA_DIR || tmpdir();
  return {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    dataDir,
    filesystem: filesystemOf(dataDir),
  };
}

/**
 * The filesystem type of the mount holding `dir` (the longest mount point
 * prefixing it in /proc/self/mounts), with "no journal" for an ext4 mounted
 * without one: there, creating files gets slower the more were deleted lately.
 */
export function filesystemOf(dir: string): string {
  try {
    const path = realpathSync(dir);
    let best: { point: string; type: string; device: string } | null = null;
    for (const line of readFileSync('/proc/self/mounts', 'utf8').split('\n')) {
      const [device, point, type] = line.split(' ');
      if (!device || !point || !type) continue;
      const inside = path === point || path.startsWith(point.endsWith('/') ? point : `${point}/`);
      if (inside && (!best || point.length > best.point.length)) best = { point, type, device };
    }
    if (!best) return 'unknown';
    if (best.type !== 'ext4') return best.type;
    const name = best.device.split('/').pop() ?? '';
    let journal = '';
    try {
      journal = readFileSync(`/sys/fs/ext4/${name}/journal_task`, 'utf8').trim();
    } catch {
      return 'ext4';
    }
    return journal === '<none>' ? 'ext4 (no journal)' : 'ext4';
  } catch {
    return 'unknown';
  }
}
