/** Runs the built service as its own process, as production does, and finds its port in the log. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const mainJs = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface Running {
  child: ChildProcess;
  port: number;
  lines: string[];
  exited: Promise<number | null>;
}

export function startProcess(env: Record<string, string>, timeoutMs = 30_000): Promise<Running> {
  const child = spawn(process.execPath, [mainJs], {
    env: { PATH: process.env.PATH ?? '', SVC_PORT: '0', SVC_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Not left running (with its data directory's lock) after the test gives up.
  return waitForListening(child, lines, exited, timeoutMs, () => child.kill('SIGKILL')).then(({ port }) => ({ child, port, lines, exited }));
}

/**
 * Collects a child's output lines into `lines` and resolves with the port and pid of its `listening` log line;
 * rejects (after `onTimeout`) when none comes in time or the child exits first.
 */
export function waitForListening(
  child: ChildProcess,
  lines: string[],
  exited: Promise<number | null>,
  timeoutMs: number,
  onTimeout: () => void = () => {},
): Promise<{ port: number; pid: number | undefined }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`no listening line in ${timeoutMs} ms:\n${lines.join('\n')}`));
    }, timeoutMs);
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      let i;
      while ((i = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        lines.push(line);
        try {
          const rec = JSON.parse(line) as { msg?: string; port?: number; pid?: number };
          if (rec.msg === 'listening' && rec.port) {
            clearTimeout(timer);
            resolve({ port: rec.port, pid: rec.pid });
          }
        } catch {
          // not JSON: keep it for the failure message
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => lines.push(c.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${lines.join('\n')}`));
    });
  });
}
