/**
 * Starts the floor server (floor-server.ts) in its own process, with the
 * service's launcher environment and a temporary data directory removed after
 * it stops.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startChild, type LoadTarget } from './child.js';
import { benchDataDir } from './paths.js';
import { launcherEnv } from './service.js';

export type Floor = LoadTarget;

export async function startFloor(): Promise<Floor> {
  const script = fileURLToPath(new URL('./floor-server.js', import.meta.url));
  const dataDir = benchDataDir('cp-bench-floor-');
  try {
    const child = await startChild(script, { ...launcherEnv, SVC_DATA_DIR: dataDir }, 120_000);
    return {
      pid: child.pid,
      base: `http://127.0.0.1:${child.port}`,
      stop: async () => {
        const code = await child.stop();
        rmSync(dataDir, { recursive: true, force: true });
        if (code !== 0) throw new Error(`the floor server exited with ${code} on SIGTERM:\n${child.lines.slice(-20).join('\n')}`);
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
