/**
 * Caller roles. Admin and Internal are checked here against the configured
 * tokens (constant-time); Master and Key are resolved by hooks the tenancy
 * domain plugs in. Repeated failures from one client address throttle that
 * address's bad credentials (429), never its valid ones: many clients behind
 * one egress address (the data plane among them) cannot be locked out by a
 * neighbour's bad tries.
 */
import { AppError, unauthorized } from '../errors.js';
import type { Config } from '../config/settings.js';
import type { Principal } from '../contract/principal.js';
import { sha256Hex } from '../contract/hash.js';

/** Who may call a route. `identify` accepts any valid bearer (whoami). */
export type Role = 'public' | 'admin' | 'internal' | 'master' | 'admin_or_internal' | 'identify';

/** What a lookup may answer at once (a cached identity) or later. */
export type Resolved = Principal | null | Promise<Principal | null>;

/** Looks a bearer token up; null when it is not one of this kind. */
export type TokenResolver = (token: string, tokenHash: string) => Resolved;

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

/**
 * Constant-time equality of two hex digests of the same algorithm: secrets are compared by digest, so their
 * lengths leak nothing and every comparison runs over 64 characters.
 */
function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

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
  /** Digests of the configured tokens, taken once: each check then hashes only the presented token. */
  private readonly adminDigest: string | null;
  private readonly internalDigest: string | null;

  constructor(
    private readonly config: Config,
    now: () => number,
  ) {
    this.limiter = new FailureLimiter(config.authFailLimit, now);
    this.adminDigest = config.adminToken ? sha256Hex(config.adminToken) : null;
    this.internalDigest = config.internalToken ? sha256Hex(config.internalToken) : null;
  }

  /** The principal, at once when no lookup has to wait (a cached identity), else as a promise. */
  authenticate(role: Role, cred: Credentials): Principal | Promise<Principal> {
    if (role === 'public') return anonymous;
    const wait = this.limiter.idle ? 0 : this.limiter.blockedFor(cred.clientIp);
    // Even a throttled address gets its credential checked: only a failure is refused (429, not counted again).
    const found = this.resolve(role, cred);
    return found instanceof Promise ? found.then((p) => this.verdict(p, cred, wait)) : this.verdict(found, cred, wait);
  }

  /** The principal; else 401 counted against the address, or 429 while the address is throttled. */
  private verdict(principal: Principal | null, cred: Credentials, wait: number): Principal {
    if (principal) return principal;
    if (wait > 0) throw throttled(wait);
    this.limiter.fail(cred.clientIp);
    throw unauthorized();
  }

  private resolve(role: Role, cred: Credentials): Resolved {
    switch (role) {
      case 'public':
        return anonymous;
      case 'admin':
        return this.admin(presented(cred.authorization));
      case 'internal':
        return this.internal(cred);
      case 'admin_or_internal':
        return (cred.internalToken ? this.internal(cred) : null) ?? this.admin(presented(cred.authorization));
      case 'master':
        return this.viaHook('master', presented(cred.authorization));
      case 'identify': {
        const bearerToken = presented(cred.authorization);
        const admin = this.admin(bearerToken);
        if (admin) return admin;
        const master = this.viaHook('master', bearerToken);
        if (master instanceof Promise) return master.then((p) => p ?? this.viaHook('key', bearerToken));
        return master ?? this.viaHook('key', bearerToken);
      }
    }
  }

  private admin(token: Presented | null): Principal | null {
    return token && this.adminDigest && sameDigest(token.digest, this.adminDigest) ? adminPrincipal : null;
  }

  private internal(cred: Credentials): Principal | null {
    if (!this.internalDigest) return this.config.internalAllowAnonymous ? internalPrincipal : null;
    return cred.internalToken && sameDigest(sha256Hex(cred.internalToken), this.internalDigest) ? internalPrincipal : null;
  }

  private viaHook(kind: keyof AuthHooks, token: Presented | null): Resolved {
    const hook = this.hooks[kind];
    return hook && token ? hook(token.token, token.digest) : null;
  }
}

const throttled = (wait: number): AppError =>
  new AppError('rate_limited', 'too many failed authentications from this address', { retry_after: wait }, {
    'Retry-After': String(wait),
  });

const anonymous: Principal = Object.freeze({ type: 'anonymous' });
const adminPrincipal: Principal = Object.freeze({ type: 'admin' });
const internalPrincipal: Principal = Object.freeze({ type: 'internal' });

/** A bearer token as presented, hashed once for every check that needs it. */
interface Presented {
  token: string;
  digest: string;
}

function presented(authorization: string): Presented | null {
  const token = bearer(authorization);
  return token ? { token, digest: sha256Hex(token) } : null;
}
