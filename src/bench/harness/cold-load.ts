/**
 * A load of distinct requests: `connections` clients each take the next
 * request of a list (so no two requests are the same unless the list runs
 * out, which ends the run) and time its full answer (last byte), for
 * `seconds`. Every answer is kept, so that it can be checked afterwards.
 */
import { bearer } from './http.js';

export interface ColdRequest {
  path: string;
  token: string;
}

export interface TimedAnswer<R extends ColdRequest> {
  req: R;
  ms: number;
  status: number;
  json: any;
}

export interface ColdRun<R extends ColdRequest> {
  answers: Array<TimedAnswer<R>>;
  p50: number;
  p99: number;
  /** Answers other than 200, and requests that failed outright. */
  errors: number;
  /** The list ran out before the time did. */
  exhausted: boolean;
}

/** The p-th percentile (nearest rank) of sorted values. */
export const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

export async function coldLoad<R extends ColdRequest>(base: string, requests: R[], connections: number, seconds: number): Promise<ColdRun<R>> {
  const answers: Array<TimedAnswer<R>> = [];
  let next = 0;
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < end && next < requests.length) {
      const req = requests[next++]!;
      const t = performance.now();
      try {
        const res = await fetch(base + req.path, { headers: bearer(req.token), signal: AbortSignal.timeout(30_000) });
        const text = await res.text();
        const ms = performance.now() - t;
        if (res.status !== 200) errors++;
        answers.push({ req, ms, status: res.status, json: res.status === 200 ? JSON.parse(text) : text });
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  return { answers, p50: percentile(ms, 50), p99: percentile(ms, 99), errors, exhausted: next >= requests.length };
}

/** A seeded pseudo-random source in [0, 1) (mulberry32): the same seed gives the same request list. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
