/** Starts the bare uWS ceiling server (ceiling-server.ts) in its own process. */
import { fileURLToPath } from 'node:url';
import { startChild, type LoadTarget } from './child.js';

export type Ceiling = LoadTarget;

export async function startCeiling(): Promise<Ceiling> {
  const script = fileURLToPath(new URL('./ceiling-server.js', import.meta.url));
  const child = await startChild(script, {});
  return { pid: child.pid, base: `http://127.0.0.1:${child.port}`, stop: async () => void (await child.stop(5000)) };
}
