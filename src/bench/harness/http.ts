/** One HTTP call to a server under test, outside the measured load (set-up, probes, counting). */
export interface Answer {
  status: number;
  json: any;
}

export async function call(
  base: string,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Answer> {
  const res = await fetch(base + path, {
    method,
    signal: AbortSignal.timeout(opts.timeoutMs ?? 60_000),
    headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
