/**
 * The built service (dist/src/main.js) as production runs it, with its
 * embedded stores (PGlite, in-process store, chDB) in a fresh temporary
 * SVC_DATA_DIR that is removed after it stops.
 *
 * It is booted twice: the first boot creates the stores (PGlite's initdb
 * leaves some 500 MB resident for the life of that process), the second is
 * the one measured, a restart on existing data as a production node runs.
 * Both idle RSS figures are kept.
 */
import { rmSync } from 'node:fs';
import { startChild, type Child } from './child.js';
import { benchDataDir, serviceMain } from './paths.js';
import { readRssBytes } from './rss.js';

/**
 * The environment the Dockerfile and `npm start` give the service: glibc malloc
 * serves blocks of 1 MiB and more from their own mappings, returned when freed.
 */
export const launcherEnv = { MALLOC_MMAP_THRESHOLD_: '1048576' };

export const benchAdminToken = 'bench-admin-token';
export const benchInternalToken = 'bench-internal-token';

export interface BenchService {
  pid: number;
  base: string;
  dataDir: string;
  /** Resident memory once listening: on the first boot (fresh stores) and on the measured restart. */
  firstBootRss: number | null;
  idleRss: number | null;
  /** SIGTERM (the service flushes its log buffer and exits), then the data directory goes. */
  stop(): Promise<void>;
  lines: string[];
}

const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 1000));

export async function startService(env: Record<string, string> = {}, nodeArgs: string[] = [], main = serviceMain): Promise<BenchService> {
  const dataDir = benchDataDir('cp-bench-svc-');
  const vars = {
    ...launcherEnv,
    SVC_PORT: '0',
    SVC_HOST: '127.0.0.1',
    SVC_DATA_DIR: dataDir,
    SVC_ADMIN_TOKEN: benchAdminToken,
    SVC_INTERNAL_STATS_TOKEN: benchInternalToken,
    SVC_LOG_LEVEL: 'info',
    ...env,
  };
  let child: Child;
  let firstBootRss: number | null;
  try {
    const first = await startChild(main, vars, 120_000);
    await settle();
    firstBootRss = readRssBytes(first.pid);
    const code = await first.stop();
    if (code !== 0) throw new Error(`the first boot exited with ${code}:\n${first.lines.slice(-20).join('\n')}`);
    child = await startChild(main, vars, 120_000, nodeArgs);
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  await settle();
  return {
    pid: child.pid,
    base: `http://127.0.0.1:${child.port}`,
    dataDir,
    firstBootRss,
    idleRss: readRssBytes(child.pid),
    lines: child.lines,
    stop: async () => {
      const code = await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
      if (code !== 0) throw new Error(`the service exited with ${code} on SIGTERM:\n${child.lines.slice(-20).join('\n')}`);
    },
  };
}
