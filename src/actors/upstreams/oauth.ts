/**
 * OAuth refresh of upstream keys: access tokens of the OAuth group kinds that
 * expire within 10 minutes are exchanged at the provider's token endpoint
 * (RFC 6749 refresh_token grant). A failure disables the key automatically.
 */
import type { BaseContext } from '../runtime/actor.js';
import { keysToRefresh, updateKeys } from '../../storage/postgres/upstreams.js';
import { routedChange } from './sync.js';

export const refreshWindowMs = 10 * 60_000;

export const defaultTokenUrls: Record<string, string> = {
  anthropic_oauth: 'https://console.anthropic.com/v1/oauth/token',
  gemini_oauth: 'https://oauth2.googleapis.com/token',
  openai_oauth: 'https://auth.openai.com/oauth/token',
};

/** The token endpoints: defaults overridden by SVC_OAUTH_TOKEN_URLS (`type=url,type=url`). */
export function tokenUrls(setting: string | undefined): Record<string, string> {
  const urls = { ...defaultTokenUrls };
  for (const pair of (setting ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) urls[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return urls;
}

type Outcome =
  | { id: number; ok: true; access_token: string; refresh_token?: string; expires_in: number }
  | { id: number; ok: false; reason: string };

async function exchange(id: number, url: string, refreshToken: string): Promise<Outcome> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (!res.ok) return { id, ok: false, reason: `oauth refresh failed: HTTP ${res.status}` };
    if (!body || typeof body.access_token !== 'string' || body.access_token === '') {
      return { id, ok: false, reason: 'oauth refresh failed: no access_token in the response' };
    }
    return {
      id,
      ok: true,
      access_token: body.access_token,
      refresh_token: typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : undefined,
      expires_in: typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600,
    };
  } catch (err) {
    return { id, ok: false, reason: `oauth refresh failed: ${(err as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable'}` };
  }
}

/** Refreshes every key due; returns how many were refreshed and how many failed. */
export async function refreshDueKeys(ctx: BaseContext): Promise<{ refreshed: number[]; failed: number[] }> {
  const urls = tokenUrls(ctx.config.oauthTokenUrls);
  const due = await keysToRefresh(ctx.db, Object.keys(urls), ctx.now() + refreshWindowMs);
  if (due.length === 0) return { refreshed: [], failed: [] };
  const outcomes = await Promise.all(due.map((k) => exchange(k.id, urls[k.type]!, k.refresh_token!)));
  return routedChange(ctx, async (tx) => {
    for (const o of outcomes) {
      if (o.ok) {
        await updateKeys(tx, [o.id], {
          access_token: o.access_token,
          refresh_token: o.refresh_token,
          expires_at: new Date(ctx.now() + o.expires_in * 1000).toISOString(),
        });
      } else {
        ctx.log.warn({ upstream_key_id: o.id, reason: o.reason }, 'upstream key disabled');
        await updateKeys(tx, [o.id], { status: 'auto_disabled', ban_reason: o.reason });
      }
    }
    return {
      result: { refreshed: outcomes.filter((o) => o.ok).map((o) => o.id), failed: outcomes.filter((o) => !o.ok).map((o) => o.id) },
      affected: { groupIds: due.map((k) => k.group_id) },
    };
  });
}
