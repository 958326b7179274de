/**
 * One webhook delivery: POST the body, each attempt bounded by a timeout,
 * retried with exponential backoff on network errors and 5xx answers (other
 * statuses are final). Every attempt is reported to `onAttempt`.
 */
import { createHmac } from 'node:crypto';

export interface AttemptResult {
  attempt: number;
  ok: boolean;
  status_code: number | null;
  error: string;
  duration_ms: number;
}

export interface DeliveryOptions {
  attempts: number;
  timeoutMs: number;
  /** Wait before the second attempt; doubles after each failure. */
  backoffMs: number;
}

export const defaultDelivery: DeliveryOptions = { attempts: 3, timeoutMs: 5000, backoffMs: 500 };

/** `sha256=<hex HMAC-SHA256 of the body>`. */
export const signature = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

export async function postWithRetries(
  url: string,
  body: string,
  secret: string,
  opts: DeliveryOptions,
  onAttempt: (r: AttemptResult) => Promise<void>,
): Promise<boolean> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'gateway-control-plane/webhook' };
  if (secret !== '') headers['x-signature'] = signature(secret, body);
  for (let attempt = 1; attempt <= opts.attempts; attempt++) {
    const started = Date.now();
    let status: number | null = null;
    let error = '';
    try {
      const res = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(opts.timeoutMs) });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
      if (status < 200 || status > 299) error = `HTTP ${status}`;
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      error = e.name === 'TimeoutError' ? `timed out after ${opts.timeoutMs} ms` : (e.cause?.code ?? e.message);
    }
    const ok = error === '';
    await onAttempt({ attempt, ok, status_code: status, error, duration_ms: Date.now() - started });
    if (ok) return true;
    const retryable = status === null || status >= 500;
    if (!retryable || attempt === opts.attempts) return false;
    await new Promise((r) => setTimeout(r, opts.backoffMs * 2 ** (attempt - 1)));
  }
  return false;
}
