/**
 * A server under test in its own process (so it never shares the bench's
 * event loop): started with node, ready once it prints the JSON log line
 * {"msg":"listening","port":N}, stopped with SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export interface Child {
  pid: number;
  port: number;
  /** The last lines of its output, for failure messages. */
  lines: string[];
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/** A server the bench loads: its process, its address, and how to stop it. */
export interface LoadTarget {
  pid: number;
  base: string;
  stop(): Promise<void>;
}

const keptLines = 200;

export function startChild(
  script: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
  nodeArgs: string[] = [],
  args: string[] = [],
): Promise<Child> {
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (line: string): void => {
    lines.push(line);
    if (lines.length > keptLines) lines.shift();
  };
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : null);
      if (signal) keep(`killed by ${signal}`);
      resolve(exitCode);
    }),
  );
  const stop = async (graceMs = 60_000): Promise<number | null> => {
    if (exitCode !== undefined) return exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop(1000);
      reject(new Error(`${script}: no listening line in ${timeoutMs} ms:\n${lines.join('\n')}`));
    }, timeoutMs);
    let buffer = '';
    let ready = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let i;
      while ((i = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        keep(line);
        if (ready || !line.includes('"listening"')) continue;
        try {
          const rec = JSON.parse(line) as { msg?: string; port?: number };
          if (rec.msg === 'listening' && rec.port) {
            ready = true;
            clearTimeout(timer);
            resolve({ pid: child.pid!, port: rec.port, lines, stop });
          }
        } catch {
          // not JSON: kept for the failure message
        }
      }
    });
    child.stderr!.on('data', (c: Buffer) => keep(c.toString().trimEnd()));
    void exited.then((code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${script} exited with ${code} before listening:\n${lines.join('\n')}`));
    });
  });
}
