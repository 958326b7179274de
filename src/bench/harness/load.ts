/**
 * Drives load with autocannon for a measured window, then lets every request
 * in flight be answered.
 *
 * autocannon ends a run by destroying its connections, cutting off up to
 * connections x pipelining requests that the server may still have accepted,
 * so the client's 2xx count would not be the server's. Instead, when the
 * window closes each connection stops sending (its send method is wrapped
 * through autocannon's setupClient hook) and the answers still due arrive
 * during `drainSeconds`; the run's cut-off then finds nothing in flight.
 * Requests are prebuilt (static), so the client spends nothing per request on
 * building them, which matters on a 2-core machine where it shares the CPUs.
 *
 * Throughput counts 2xx answered inside the window; latency covers every answer.
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  base: string;
  /** POST unless given. */
  method?: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** Cycled, one per request, per connection; none for a GET. */
  bodies: Buffer[];
  connections: number;
  pipelining: number;
  seconds: number;
  /** Seconds allowed for the answers in flight when the window closes (default 3). */
  drainSeconds?: number;
}

export interface LoadResult {
  /** Seconds of the measured window. */
  window: number;
  /** performance.now() at the start. */
  startedAt: number;
  /** Requests sent, answered, answered 2xx, answered otherwise. */
  sent: number;
  answered: number;
  ok: number;
  /** 2xx answered inside the window. */
  okInWindow: number;
  non2xx: number;
  statuses: Record<string, number>;
  /** Connection errors and timeouts (autocannon's). */
  errors: number;
  /** Requests never answered (nonzero only when the drain was too short or connections failed). */
  unanswered: number;
  /** 2xx per second inside the window. */
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const drainSeconds = o.drainSeconds ?? 3;
  let holding = false;
  let sent = 0;
  const latencies = new Growable();
  const statuses: Record<string, number> = {};
  let answered = 0;
  let ok = 0;
  let okInWindow = 0;

  const startedAt = performance.now();
  const windowEnd = startedAt + o.seconds * 1000;
  const instance = autocannon({
    url: o.base,
    connections: o.connections,
    pipelining: o.pipelining,
    duration: o.seconds + drainSeconds,
    timeout: 30,
    requests: o.bodies.length
      ? o.bodies.map((body) => ({ method: o.method ?? 'POST', path: o.path, headers: o.headers, body }))
      : [{ method: o.method ?? 'POST', path: o.path, headers: o.headers }],
    setupClient: (client) => {
      const send = client._doRequest;
      if (typeof send !== 'function') throw new Error('autocannon internals changed: Client#_doRequest is gone (see harness/load.ts)');
      client._doRequest = function (this: typeof client, ...args: unknown[]) {
        if (holding) return undefined;
        const before = this.reqsMade;
        const r = send.apply(this, args);
        if (this.reqsMade > before) sent++;
        return r;
      };
    },
  });
  const hold = setTimeout(() => (holding = true), o.seconds * 1000);
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    answered++;
    statuses[status] = (statuses[status] ?? 0) + 1;
    latencies.push(ms);
    if (status >= 200 && status < 300) {
      ok++;
      if (performance.now() <= windowEnd) okInWindow++;
    }
  });
  const result = await instance;
  clearTimeout(hold);
  const sorted = latencies.sorted();
  const pct = (p: number): number => (sorted.length ? round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!) : 0);
  return {
    window: o.seconds,
    startedAt,
    sent,
    answered,
    ok,
    okInWindow,
    non2xx: answered - ok,
    statuses,
    errors: result.errors,
    unanswered: sent - answered,
    rps: okInWindow / o.seconds,
    latencyMs: { p50: pct(50), p90: pct(90), p99: pct(99), max: sorted.length ? round(sorted[sorted.length - 1]!) : 0 },
  };
}

const round = (ms: number): number => Math.round(ms * 100) / 100;

/** A growing Float64Array: hundreds of thousands of latencies without boxing. */
class Growable {
  private data = new Float64Array(1 << 16);
  private n = 0;
  push(v: number): void {
    if (this.n === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.n++] = v;
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.n).sort();
  }
}
