/**
 * A loopback Postgres wire-protocol server in front of one PGlite instance.
 *
 * PGlite is a single backend session, so every client connection shares it.
 * To keep connections from seeing each other's protocol state (the unnamed
 * statement and portal, an open transaction), a connection's messages are
 * grouped into units that end where the client waits for an answer (Sync,
 * simple Query, Flush, ...), and each unit runs whole, in one PGlite call,
 * from a single FIFO queue. While a connection holds the session (an open
 * transaction, or a unit that did not end with ReadyForQuery) only its units
 * run; when it goes away holding it, the session is rolled back first.
 */
import net from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

export interface EmbeddedServer {
  readonly port: number;
  /** Stops listening, drops every connection and waits for the session to be released (rolled back if needed). */
  stop(): Promise<void>;
}

const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
/** Postgres refuses larger startup packets too. */
const MAX_STARTUP_PACKET = 10_000;

/** Messages after which the client waits for an answer: they end a unit. */
const UNIT_END = new Set(['S', 'Q', 'H', 'F', 'c', 'f', 'p'].map((c) => c.charCodeAt(0)));
const TERMINATE = 'X'.charCodeAt(0);
const READY_FOR_QUERY = 'Z'.charCodeAt(0);
const IDLE = 'I'.charCodeAt(0);

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const cstring = (s: string): Buffer => Buffer.from(`${s}\0`, 'utf8');

function fatal(code: string, text: string): Buffer {
  return message('E', Buffer.concat([cstring('SFATAL'), cstring('VFATAL'), cstring(`C${code}`), cstring(`M${text}`), Buffer.from([0])]));
}

/**
 * Releases whatever state a vanished client left: ROLLBACK ends an explicit
 * transaction block and aborts an implicit one (extended protocol before its
 * Sync); if the first one was skipped because the session was discarding
 * messages until Sync after an error, the Sync ends that and the second
 * ROLLBACK does the work.
 */
const RELEASE_UNIT = Buffer.concat([
  message('Q', cstring('ROLLBACK')),
  message('S', Buffer.alloc(0)),
  message('Q', cstring('ROLLBACK')),
]);

/** True when the last message in `out` is ReadyForQuery with status idle: the unit left nothing open. */
function endsIdle(out: Buffer): boolean {
  let at = 0;
  let last = -1;
  while (at + 5 <= out.length) {
    last = at;
    at += 1 + out.readInt32BE(at + 1);
  }
  return last >= 0 && at === out.length && out[last] === READY_FOR_QUERY && out[last + 5] === IDLE;
}

interface Connection {
  readonly socket: net.Socket;
  /** Received bytes not yet split into messages. */
  chunks: Buffer[];
  size: number;
  /** Bytes needed before the next message (or its header) is complete. */
  want: number;
  /** Complete messages of the unit being received. */
  unit: Buffer[];
  started: boolean;
  /** Units queued, not yet run. */
  queued: number;
  /** Terminate received: close once the queued units have run. */
  ending: boolean;
  closed: boolean;
}

interface Job {
  /** null: the server's own unit releasing the session of a vanished client. */
  conn: Connection | null;
  bytes: Buffer;
}

export async function serveEmbedded(
  db: PGlite,
  opts: { host?: string; port?: number; maxConnections?: number } = {},
): Promise<EmbeddedServer> {
  const maxConnections = opts.maxConnections ?? 100;
  /** Connections whose units may still run. */
  const conns = new Set<Connection>();
  /** Every open socket, including those already closed on our side and waiting for the peer. */
  const sockets = new Set<net.Socket>();
  const queue: Job[] = [];
  /** The connection holding the session (null: the release unit); undefined: nobody. */
  let owner: Connection | null | undefined;
  let running: Connection | null | undefined;
  let pumping = false;
  let stopping = false;
  let drained: (() => void) | undefined;

  function nextJob(): Job | undefined {
    if (owner === undefined) return queue.shift();
    const i = queue.findIndex((job) => job.conn === owner);
    return i < 0 ? undefined : queue.splice(i, 1)[0];
  }

  async function runJob(job: Job): Promise<void> {
    const out: Buffer[] = [];
    let failed = false;
    try {
      await db.runExclusive(() =>
        db.execProtocolRawStream(job.bytes, {
          // A view into WASM memory, overwritten by the next chunk: copy it.
          onRawData: (bytes) => out.push(Buffer.from(bytes)),
        }),
      );
    } catch {
      // Not a SQL error (those are answered in the output) but PGlite refusing the unit: drop the client.
      failed = true;
    }
    const output = Buffer.concat(out);
    const conn = job.conn;
    if (conn && !conn.closed) {
      conn.queued--;
      if (failed) closeConnection(conn, true);
      else {
        // The whole answer in one write.
        if (output.length > 0) conn.socket.write(output);
        if (conn.ending && conn.queued === 0) closeConnection(conn, false);
      }
    }
    owner = undefined;
    if (conn && (db.isInTransaction() || (!failed && !endsIdle(output)))) hold(conn);
  }

  /** `conn` keeps the session; if it is gone already, release the session first. */
  function hold(conn: Connection): void {
    if (!conn.closed) {
      owner = conn;
      return;
    }
    owner = null;
    queue.unshift({ conn: null, bytes: RELEASE_UNIT });
  }

  function pump(): void {
    if (pumping) return;
    pumping = true;
    void (async () => {
      for (let job = nextJob(); job; job = nextJob()) {
        running = job.conn;
        try {
          await runJob(job);
        } finally {
          running = undefined;
        }
      }
      pumping = false;
      if (queue.length === 0 && owner === undefined) drained?.();
    })();
  }

  function enqueue(conn: Connection, bytes: Buffer): void {
    conn.queued++;
    queue.push({ conn, bytes });
    pump();
  }

  function closeConnection(conn: Connection, destroy: boolean): void {
    if (conn.closed) return;
    conn.closed = true;
    conns.delete(conn);
    conn.chunks = [];
    conn.unit = [];
    for (let i = queue.length - 1; i >= 0; i--) if (queue[i].conn === conn) queue.splice(i, 1);
    conn.queued = 0;
    if (destroy) conn.socket.destroy();
    else conn.socket.end();
    // A unit of its own still running settles the session when it finishes.
    if (owner === conn && running !== conn) {
      hold(conn);
      pump();
    }
  }

  /** Splits the buffered bytes into messages and queues every complete unit. */
  function receive(conn: Connection): void {
    const buf = conn.chunks.length === 1 ? conn.chunks[0] : Buffer.concat(conn.chunks);
    let at = 0;
    for (;;) {
      const left = buf.length - at;
      if (!conn.started) {
        // Untyped packets: length, then a code (the protocol version of a startup packet).
        conn.want = left < 4 ? 8 : buf.readInt32BE(at);
        if (conn.want < 8 || conn.want > MAX_STARTUP_PACKET) return closeConnection(conn, true);
        if (left < conn.want) break;
        const len = conn.want;
        const code = buf.readInt32BE(at + 4);
        const packet = buf.subarray(at, at + len);
        at += len;
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          conn.socket.write('N');
        } else if (code === CANCEL_REQUEST) {
          // Not supported; a cancel connection carries nothing else.
          return closeConnection(conn, false);
        } else if (code === PROTOCOL_3) {
          conn.started = true;
          enqueue(conn, packet);
        } else {
          conn.socket.write(fatal('0A000', `unsupported frontend protocol ${code >>> 16}.${code & 0xffff}`));
          return closeConnection(conn, false);
        }
        continue;
      }
      conn.want = left < 5 ? 5 : 1 + buf.readInt32BE(at + 1);
      if (conn.want < 5) return closeConnection(conn, true);
      if (left < conn.want) break;
      const type = buf[at];
      const msg = buf.subarray(at, at + conn.want);
      at += conn.want;
      if (type === TERMINATE) {
        // Not forwarded: PGlite's session outlives this client.
        conn.ending = true;
        conn.unit = [];
        if (conn.queued === 0) closeConnection(conn, false);
        return;
      }
      conn.unit.push(msg);
      if (UNIT_END.has(type)) {
        enqueue(conn, conn.unit.length === 1 ? conn.unit[0] : Buffer.concat(conn.unit));
        conn.unit = [];
      }
    }
    const rest = buf.subarray(at);
    conn.chunks = rest.length > 0 ? [rest] : [];
    conn.size = rest.length;
  }

  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    const conn: Connection = { socket, chunks: [], size: 0, want: 8, unit: [], started: false, queued: 0, ending: false, closed: false };
    socket.on('error', () => closeConnection(conn, true));
    socket.on('close', () => {
      sockets.delete(socket);
      closeConnection(conn, true);
    });
    if (stopping) {
      conn.closed = true;
      socket.destroy();
      return;
    }
    if (conns.size >= maxConnections) {
      conn.closed = true;
      socket.end(fatal('53300', 'sorry, too many clients already'));
      return;
    }
    conns.add(conn);
    socket.on('data', (chunk: Buffer) => {
      if (conn.closed || conn.ending) return;
      conn.chunks.push(chunk);
      conn.size += chunk.length;
      // A large message arrives in many chunks: split only once it is whole.
      if (conn.size >= conn.want) receive(conn);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as net.AddressInfo).port;

  let stopped: Promise<void> | undefined;
  return {
    port,
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        const idle = new Promise<void>((resolve) => {
          drained = resolve;
        });
        for (const conn of [...conns]) closeConnection(conn, true);
        for (const socket of sockets) socket.destroy();
        if (!pumping && queue.length === 0 && owner === undefined) drained?.();
        await Promise.all([idle, closed]);
      })()),
  };
}
