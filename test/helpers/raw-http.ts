/**
 * HTTP/1.1 over a plain socket, for what fetch cannot show: a request head sent
 * in pieces that the server reads one at a time, and a connection closed
 * without an answer told apart from an answer.
 */
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** An answer, or how the connection ended without one ('closed', or the socket error's code such as ECONNRESET). */
export type RawOutcome = RawAnswer | { closed: string };

/** Lets the event loop pass its poll phase twice, so an in-process server has read what was written before. */
export async function serverRead(): Promise<void> {
  await new Promise((r) => setTimeout(r, 20));
  for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
}

export class RawConnection {
  private readonly socket: net.Socket;
  private buffer = Buffer.alloc(0);
  private ended: string | null = null;
  private wake: (() => void) | null = null;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.wake?.();
    });
    this.socket.on('error', (err: NodeJS.ErrnoException) => (this.ended ??= err.code ?? err.message));
    this.socket.on('close', () => {
      this.ended ??= 'closed';
      this.wake?.();
    });
  }

  /** Writes `parts` in turn, each read by the server before the next is written. */
  async send(...parts: string[]): Promise<void> {
    for (const [i, part] of parts.entries()) {
      if (i > 0) await serverRead();
      if (this.ended === null) this.socket.write(part);
    }
  }

  /** The next whole answer (read by its Content-Length), or how the connection ended first. */
  async answer(timeoutMs = 10_000): Promise<RawOutcome> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.ended !== null) return { closed: this.ended };
      if (Date.now() > deadline) throw new Error(`no answer in ${timeoutMs} ms (${this.buffer.length} bytes)`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 100);
      });
      this.wake = null;
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(): RawAnswer | null {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return null;
    const body = this.buffer.subarray(end + 4, end + 4 + length).toString();
    this.buffer = this.buffer.subarray(end + 4 + length);
    return { status: Number(statusLine!.split(' ')[1]), headers, body };
  }
}

/** A request head: the request line, `headers`, and the blank line. */
export function head(method: string, target: string, headers: Record<string, string> = {}): string {
  return `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}
