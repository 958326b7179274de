/**
 * The reference data-plane reader: what a data plane decides for a request,
 * read from the shared store alone and written from docs/store-layout.md
 * alone. It imports nothing of the service (only Node built-ins), so that it
 * checks the document, not the code: where the two disagree, the test of this
 * folder fails. Sections cited as "§" are the document's.
 */
import { createHash } from 'node:crypto';
import { parseAddress, parseList, inRange } from './ip.js';

/** The three reads a data plane needs (an ioredis client fits). */
export interface StoreReads {
  get(key: string): Promise<string | null>;
  hgetall(key: string): Promise<Record<string, string>>;
}

/** The layout version this reader was written against (§ "Layout versions"). */
export const readerLayoutVersion = 3;

export interface Request {
  /** The bearer credential as the client sent it. */
  credential: string;
  /** The client's address as the data plane sees it (IPv4, IPv6 or IPv4-mapped IPv6). */
  clientIp: string;
  /** The public model name the client asked for. */
  model: string;
  /** The namespace the request names; empty: none. */
  namespace: string;
  /** Tokens this node counted for the key and has not yet flushed (§ "Quota"). */
  unflushedTokens?: number;
}

export type Outcome = 'allow' | 'deny' | 'unavailable';

export interface RoutedKey {
  id: number;
  weight: number;
}

export interface RoutedCandidate {
  group_id: number;
  group_name: string;
  upstream_model: string;
  weight: number;
  keys: RoutedKey[];
}

export interface Decision {
  decision: Outcome;
  /** `ok` when allowed; otherwise one of the reasons of § "Decisions". */
  reason: string;
  key_id?: number;
  master_id?: number;
  namespace?: string;
  binding_key?: string;
  candidates?: RoutedCandidate[];
  /** The key's expires_at (Unix seconds, 0 = never), so a cached allowance is judged again (§ "Caching"). */
  expires_at?: number;
}

const deny = (reason: string, extra: Partial<Decision> = {}): Decision => ({ decision: 'deny', reason, ...extra });
const unavailable = (reason: string, extra: Partial<Decision> = {}): Decision => ({ decision: 'unavailable', reason, ...extra });

/** § "Tenancy": trimmed, strictly decimal; anything else is bad metadata. */
function int(hash: Record<string, string>, field: string): number | null {
  const raw = (hash[field] ?? '').trim();
  return /^-?\d+$/.test(raw) ? Number(raw) : null;
}

/** § "Tenancy": a decimal amount (budget fields) as an integer of 10^-12 units; null when it does not parse. */
function money(hash: Record<string, string>, field: string): bigint | null {
  const m = /^(-?)(\d+)(?:\.(\d{1,12}))?$/.exec((hash[field] ?? '').trim());
  return m ? BigInt(`${m[1]}${m[2]}${(m[3] ?? '').padEnd(12, '0')}`) : null;
}

/** § "Budget": refused once the period's spend reached the limit; a period that has ended counts as unspent. */
function budgetSpent(hash: Record<string, string>, nowS: number): boolean | null {
  if (!('budget_limit' in hash)) return false; // written before layout 3: no budget
  const limit = money(hash, 'budget_limit');
  if (limit === null) return null;
  if (limit === -1000000000000n) return false;
  const used = money(hash, 'budget_used');
  const start = int(hash, 'budget_period_start');
  if (used === null || start === null) return null;
  const type = (hash.budget_reset_type ?? 'never').trim();
  const inPeriod = type === 'never' || periodStartS(type, nowS) <= start ? used : 0n;
  return inPeriod >= limit;
}

const list = (value: string | undefined): string[] => (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);

/** § "Quota": start (Unix seconds, UTC) of the period containing `nowS`; 0 for `never`. */
export function periodStartS(type: string, nowS: number): number {
  const d = new Date(nowS * 1000);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.getUTCDate();
  switch (type) {
    case 'daily':
      return Date.UTC(y, m, day) / 1000;
    case 'weekly':
      return Date.UTC(y, m, day - ((d.getUTCDay() + 6) % 7)) / 1000;
    case 'monthly':
      return Date.UTC(y, m, 1) / 1000;
    default:
      return 0;
  }
}

/** § "Feature flags": the flags in force, defaults for anything missing. */
export interface Flags {
  dp_state_store_backend: string;
  dp_proto_cross_upstream: boolean;
  log_request_body_enabled: boolean;
  log_body_retention_days: number;
  log_retention_days: number;
  log_max_records: number;
}

export const flagDefaults: Flags = {
  dp_state_store_backend: 'memory',
  dp_proto_cross_upstream: true,
  log_request_body_enabled: true,
  log_body_retention_days: 30,
  log_retention_days: 30,
  log_max_records: 1_000_000,
};

export interface Versions {
  /** null: the store is empty or being refilled (§ "Full snapshot and refill"). */
  layout_version: number | null;
  config_version: number;
  route_version: number;
}

export class Reader {
  constructor(
    private readonly store: StoreReads,
    private readonly now: () => number = Date.now,
  ) {}

  /** § "Layout versions" and "Configuration version". */
  async versions(): Promise<Versions> {
    const [layout, config, route] = await Promise.all([
      this.store.get('meta:layout_version'),
      this.store.get('meta:config:version'),
      this.store.get('route:version'),
    ]);
    return { layout_version: layout === null ? null : Number(layout), config_version: Number(config ?? 0), route_version: Number(route ?? 0) };
  }

  /** True when the store holds a complete snapshot of the layout this reader knows. */
  async complete(): Promise<boolean> {
    return (await this.store.get('meta:layout_version')) === String(readerLayoutVersion);
  }

  async flags(): Promise<Flags> {
    const [hash, retention, maxRecords] = await Promise.all([
      this.store.hgetall('meta:features'),
      this.store.get('meta:log:retention_days'),
      this.store.get('meta:log:max_records'),
    ]);
    const bool = (v: string | undefined, d: boolean) => (v === 'true' ? true : v === 'false' ? false : d);
    const num = (v: string | null | undefined, d: number) => (v !== null && v !== undefined && /^\d+$/.test(v.trim()) ? Number(v) : d);
    const retentionDays = num(retention, flagDefaults.log_retention_days);
    return {
      dp_state_store_backend: hash.dp_state_store_backend ?? flagDefaults.dp_state_store_backend,
      dp_proto_cross_upstream: bool(hash.dp_proto_cross_upstream, flagDefaults.dp_proto_cross_upstream),
      log_request_body_enabled: bool(hash.log_request_body_enabled, flagDefaults.log_request_body_enabled),
      log_body_retention_days: Math.min(num(hash.log_body_retention_days, retentionDays), retentionDays),
      log_retention_days: retentionDays,
      log_max_records: num(maxRecords, flagDefaults.log_max_records),
    };
  }

  /**
   * § "Decisions": credential, client address, namespace, model limits,
   * quota, budget, then routing, in that order; the first failing check gives the reason.
   */
  async decide(req: Request): Promise<Decision> {
    const nowS = Math.floor(this.now() / 1000);
    // Only child keys call the data plane; master keys are never in the store.
    if (!/^sk-[0-9A-Za-z]{48}$/.test(req.credential)) return deny(req.credential.startsWith('mk-') ? 'master_key' : 'unknown_key');
    const tokenHash = createHash('sha256').update(req.credential, 'utf8').digest('hex');
    const token = await this.store.hgetall(`tenancy:token:${tokenHash}`);
    if (Object.keys(token).length === 0) return (await this.complete()) ? deny('unknown_key') : unavailable('store_incomplete');

    const keyId = int(token, 'key_id');
    const masterId = int(token, 'master_id');
    const revoked = int(token, 'revoked');
    const expiresAt = int(token, 'expires_at');
    const issuedAtEpoch = int(token, 'issued_at_epoch');
    if (keyId === null || masterId === null || revoked === null || expiresAt === null || issuedAtEpoch === null) return deny('bad_metadata');
    const who = { key_id: keyId, master_id: masterId, expires_at: expiresAt };
    if (revoked !== 0) return deny('revoked', who);
    if ((token.status ?? '').trim() !== 'active') return deny('key_suspended', who);
    if (expiresAt !== 0 && expiresAt <= nowS) return deny('expired', who);

    const master = await this.store.hgetall(`tenancy:master:${masterId}`);
    if (Object.keys(master).length === 0) return (await this.complete()) ? deny('unknown_master', who) : unavailable('store_incomplete', who);
    const epoch = int(master, 'epoch');
    if (epoch === null) return deny('bad_metadata', who);
    const masterStatus = (master.status ?? '').trim();
    if (masterStatus === 'deleted') return deny('master_deleted', who);
    if (masterStatus !== 'active') return deny('master_suspended', who);
    if (epoch !== issuedAtEpoch) return deny('epoch_mismatch', who);

    // Client address: deny rules first, then the allow list when it has entries.
    const addr = parseAddress(req.clientIp);
    const denyRules = parseList(token.deny_ips ?? '');
    const allowRules = parseList(token.allow_ips ?? '');
    if (denyRules === null || allowRules === null) return deny('bad_metadata', who);
    if (addr === null) return deny(allowRules.length > 0 ? 'ip_not_allowed' : 'bad_address', who);
    if (denyRules.some((r) => inRange(addr, r))) return deny('ip_denied', who);
    if (allowRules.length > 0 && !allowRules.some((r) => inRange(addr, r))) return deny('ip_not_allowed', who);

    // Namespace: the request's, else the key's default, else the master's default.
    const namespace = req.namespace.trim() || (token.default_namespace ?? '').trim() || (master.default_namespace ?? '').trim();
    if (!namespace) return deny('namespace_required', who);
    const keyAllowed = list(token.allowed_namespaces);
    const masterAllowed = list(master.allowed_namespaces);
    if ((keyAllowed.length > 0 && !keyAllowed.includes(namespace)) || (masterAllowed.length > 0 && !masterAllowed.includes(namespace))) {
      return deny('namespace_not_allowed', { ...who, namespace });
    }

    // Model limits: the public name, exactly (case-sensitive).
    if (int(token, 'model_limits_enabled') === 1 && !list(token.model_limits).includes(req.model)) {
      return deny('model_not_allowed', { ...who, namespace });
    }

    // Quota: refused once used >= limit; a period that has ended counts as unused.
    const limit = int(token, 'quota_limit');
    if (limit === null) return deny('bad_metadata', who);
    if (limit !== -1) {
      const used = int(token, 'quota_used');
      const periodStart = int(token, 'quota_period_start') ?? 0;
      if (used === null) return deny('bad_metadata', who);
      const type = (token.quota_reset_type ?? 'never').trim();
      const inPeriod = type === 'never' || periodStartS(type, nowS) <= periodStart ? used : 0;
      if (inPeriod + (req.unflushedTokens ?? 0) >= limit) return deny('quota_exceeded', { ...who, namespace });
    }

    // Budget: the key's, then its master's.
    for (const hash of [token, master]) {
      const spent = budgetSpent(hash, nowS);
      if (spent === null) return deny('bad_metadata', who);
      if (spent) return deny('budget_exceeded', { ...who, namespace });
    }

    return this.route(namespace, req.model, { ...who, namespace });
  }

  /** § "Upstream routing": the bindingKey's snapshot, then each candidate's usable keys. */
  async route(namespace: string, model: string, extra: Partial<Decision> = {}): Promise<Decision> {
    const bindingKey = `${namespace}.${model}`;
    const raw = await this.store.get(`route:binding:${bindingKey}`);
    const at = { ...extra, binding_key: bindingKey };
    if (raw === null) return (await this.complete()) ? deny('model_not_found', at) : unavailable('store_incomplete', at);
    const snapshot = JSON.parse(raw) as {
      namespace_status: string;
      available: boolean;
      candidates: Array<{ group_id: number; group_name: string; upstream_model: string; weight: number }>;
    };
    if (snapshot.namespace_status !== 'active') return deny('namespace_suspended', at);
    const nowS = Math.floor(this.now() / 1000);
    const candidates: RoutedCandidate[] = [];
    for (const c of snapshot.candidates) {
      if (c.weight <= 0) continue;
      const keys = await this.store.hgetall(`route:group:${c.group_id}:keys`);
      const usable = Object.values(keys)
        .map((v) => JSON.parse(v) as { id: number; weight: number; expires_at: number; ban_until: number })
        .filter((k) => k.weight > 0 && k.ban_until <= nowS && (k.expires_at === 0 || k.expires_at > nowS))
        .map((k) => ({ id: k.id, weight: k.weight }))
        .sort((a, b) => a.id - b.id);
      if (usable.length === 0) continue;
      candidates.push({ group_id: c.group_id, group_name: c.group_name, upstream_model: c.upstream_model, weight: c.weight, keys: usable });
    }
    if (!snapshot.available || candidates.length === 0) return unavailable('no_upstream', at);
    return { decision: 'allow', reason: 'ok', ...at, candidates };
  }

  /** Weighted pick (§ "Upstream routing"): a candidate by weight / total, then a key by weight / total. */
  static pick(candidates: RoutedCandidate[], random: () => number = Math.random): { candidate: RoutedCandidate; key: RoutedKey } {
    const weighted = <T extends { weight: number }>(items: T[]): T => {
      let r = random() * items.reduce((s, i) => s + i.weight, 0);
      for (const i of items) if ((r -= i.weight) < 0) return i;
      return items[items.length - 1]!;
    };
    const candidate = weighted(candidates);
    return { candidate, key: weighted(candidate.keys) };
  }
}

/** A message of § "Change notifications". */
export interface Announcement {
  kind: string;
  at: number;
  ids?: Array<string | number>;
  version?: number;
  groups?: number[];
}

/**
 * An identity cache that follows the announcement channel (§ "How long a
 * data plane may cache"): a `masters`, `keys` or `snapshot` message empties
 * it, a `quota` message drops the keys it names (all without `ids`); entries
 * older than `maxAgeMs` are read again in any case.
 */
export class CachingReader extends Reader {
  private readonly cache = new Map<string, { at: number; decision: Decision }>();
  readonly heard: Announcement[] = [];

  constructor(
    store: StoreReads,
    private readonly maxAgeMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    super(store, clock);
  }

  /** Feed every message of `gateway:config` here. */
  announced(message: string): void {
    let m: Announcement;
    try {
      m = JSON.parse(message) as Announcement;
    } catch {
      this.cache.clear();
      return;
    }
    this.heard.push(m);
    if (m.kind === 'quota' && m.ids) {
      for (const [k, v] of this.cache) if (v.decision.key_id !== undefined && m.ids.includes(v.decision.key_id)) this.cache.delete(k);
    } else if (['masters', 'keys', 'quota', 'snapshot', 'routing', 'routing_snapshot'].includes(m.kind)) {
      this.cache.clear();
    }
  }

  override async decide(req: Request): Promise<Decision> {
    const k = JSON.stringify([req.credential, req.clientIp, req.model, req.namespace, req.unflushedTokens ?? 0]);
    const hit = this.cache.get(k);
    const expired = (d: Decision) => !!d.expires_at && d.expires_at * 1000 <= this.clock();
    if (hit && this.clock() - hit.at < this.maxAgeMs && !expired(hit.decision)) return hit.decision;
    const decision = await super.decide(req);
    // Only allowed decisions are kept, and expiry is judged again by reading; refusals are always read again.
    if (decision.decision === 'allow') this.cache.set(k, { at: this.clock(), decision });
    return decision;
  }
}
