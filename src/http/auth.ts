/**
 * Caller roles. Admin and Internal are checked here against the configured
 * tokens (constant-time); Master and Key are resolved by hooks the tenancy
 * domain plugs in. Repeated failures from one client address are stopped by
 * the failure limiter before any lookup.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError, unauthorized } from '../errors.js';
import type { Config } from '../config/settings.js';

/** Who may call a route. `identify` accepts any valid bearer (whoami). */
export type Role = 'public' | 'admin' | 'internal' | 'master' | 'admin_or_internal' | 'identify';

export type Principal =
  | { type: 'anonymous' }
  | { type: 'admin' }
  | { type: 'internal' }
  | { type: 'master'; id: number; name: string; group: string; epoch: number }
  | { type: 'key'; id: number; masterId: number; tokenHash: string };

/** Looks a bearer token up; null when it is not one of this kind. */
export type TokenResolver = (token: string, tokenHash: string) => Promise<Principal | null>;

export interface AuthHooks {
  master?: TokenResolver;
  key?: TokenResolver;
}

export interface Credentials {
  authorization: string;
  internalToken: string;
  /** May be computed on first read (the HTTP server reads the socket's address only when asked). */
  readonly clientIp: string;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Constant-time equality of two secrets (compares digests, so lengths may differ). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

export const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');

export function bearer(authorization: string): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return m ? m[1]! : null;
}

/**
 * Counts failed authentications per client address in fixed one-minute
 * windows; an address over the limit is refused until its window ends.
 */
export class FailureLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number,
  ) {}

  /** True while no address has failed: nothing can be blocked, so callers need not look up the address. */
  get idle(): boolean {
    return this.limit <= 0 || this.windows.size === 0;
  }

  /** Seconds to wait when the address is blocked, else 0. */
  blockedFor(ip: string): number {
    if (this.limit <= 0) return 0;
    const w = this.windows.get(ip);
    if (!w) return 0;
    const elapsed = this.now() - w.start;
    if (elapsed >= 60_000) {
      this.windows.delete(ip);
      return 0;
    }
    return w.count >= this.limit ? Math.ceil((60_000 - elapsed) / 1000) : 0;
  }

  fail(ip: string): void {
    if (this.limit <= 0) return;
    const now = this.now();
    const w = this.windows.get(ip);
    if (!w || now - w.start >= 60_000) this.windows.set(ip, { start: now, count: 1 });
    else w.count++;
    if (this.windows.size > 100_000) this.sweep(now);
  }

  private sweep(now: number): void {
    for (const [ip, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(ip);
  }
}

export class Authenticator {
  readonly hooks: AuthHooks = {};
  readonly limiter: FailureLimiter;

  constructor(
    private readonly config: Config,
    now: () => number,
  ) {
    this.limiter = new FailureLimiter(config.authFailLimit, now);
  }

  async authenticate(role: Role, cred: Credentials): Promise<Principal> {
    if (role === 'public') return { type: 'anonymous' };
    const wait = this.limiter.idle ? 0 : this.limiter.blockedFor(cred.clientIp);
    if (wait > 0) {
      throw new AppError('rate_limited', 'too many failed authentications from this address', { retry_after: wait }, {
        'Retry-After': String(wait),
      });
    }
    const principal = await this.resolve(role, cred);
    if (!principal) {
      this.limiter.fail(cred.clientIp);
      throw unauthorized();
    }
    return principal;
  }

  private async resolve(role: Role, cred: Credentials): Promise<Principal | null> {
    switch (role) {
      case 'public':
        return { type: 'anonymous' };
      case 'admin':
        return this.admin(cred);
      case 'internal':
        return this.internal(cred);
      case 'admin_or_internal':
        return (cred.internalToken ? this.internal(cred) : null) ?? this.admin(cred);
      case 'master':
        return this.viaHook('master', cred);
      case 'identify':
        return this.admin(cred) ?? (await this.viaHook('master', cred)) ?? (await this.viaHook('key', cred));
    }
  }

  private admin(cred: Credentials): Principal | null {
    const token = bearer(cred.authorization);
    const expected = this.config.adminToken;
    return token && expected && safeEqual(token, expected) ? { type: 'admin' } : null;
  }

  private internal(cred: Credentials): Principal | null {
    const expected = this.config.internalToken;
    if (!expected) return this.config.internalAllowAnonymous ? { type: 'internal' } : null;
    return cred.internalToken && safeEqual(cred.internalToken, expected) ? { type: 'internal' } : null;
  }

  private async viaHook(kind: keyof AuthHooks, cred: Credentials): Promise<Principal | null> {
    const hook = this.hooks[kind];
    const token = bearer(cred.authorization);
    if (!hook || !token) return null;
    return hook(token, sha256Hex(token));
  }
}
