/**
 * The conformance kit: creates the population of cases.ts in a running
 * service through its HTTP API, performs the steps, and turns the hand-written
 * table into concrete cases (secrets, ids) a data plane can be checked
 * against. It talks HTTP only (no import of the service).
 */
import { createHash, randomBytes } from 'node:crypto';
import { casesAfter, flagsAfter, population, steps, type Change, type Case, type ExpectedRoute } from './cases.js';

export interface KitOptions {
  base: string;
  adminToken: string;
  internalToken: string;
}

/** A case with its labels resolved: what a data plane is given and what it must answer. */
export interface ConcreteCase {
  name: string;
  credential: string;
  client_ip: string;
  model: string;
  namespace: string;
  at_offset_s: number;
  expected: {
    decision: string;
    reason: string;
    /** Allowed only: candidates by provider group id, each with its binding weight, upstream model and key weights by key id. */
    route?: Array<{ group_id: number; group: string; weight: number; upstream_model: string; keys: Array<{ id: number; label: string; weight: number }> }>;
  };
}

export interface StepResult {
  /** 0: population; n: after the n-th step. */
  index: number;
  name: string;
  change: Change | null;
  /** The configuration version (GET /admin/sync/status) once the step was accepted: a data plane at or past it must answer `cases`. */
  config_version: number;
  flags: Record<string, unknown>;
  cases: ConcreteCase[];
}

class Http {
  constructor(private readonly o: KitOptions) {}

  async call(method: string, path: string, body?: unknown, auth: { token?: string; internal?: boolean } = {}): Promise<any> {
    const headers: Record<string, string> = {};
    if (auth.internal) headers['x-internal-token'] = this.o.internalToken;
    else headers.authorization = `Bearer ${auth.token ?? this.o.adminToken}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.o.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  }
}

/** What the kit created, by label. */
export interface Created {
  groups: Record<string, number>;
  upstreamKeys: Record<string, number>;
  bindings: Record<string, number>;
  masters: Record<string, { id: number; key: string }>;
  keys: Record<string, { id: number; secret: string }>;
  unknown: string;
  /** Labels are suffixed with this, so the kit can run twice against one service. */
  suffix: string;
}

const iso = (offsetS: number): string => new Date(Math.floor(Date.now() / 1000 + offsetS) * 1000).toISOString();

export class Kit {
  private readonly http: Http;
  created!: Created;

  constructor(private readonly o: KitOptions) {
    this.http = new Http(o);
  }

  async populate(): Promise<Created> {
    const suffix = randomBytes(3).toString('hex');
    const c: Created = { groups: {}, upstreamKeys: {}, bindings: {}, masters: {}, keys: {}, unknown: `sk-${'0'.repeat(16)}${randomBytes(16).toString('hex')}`, suffix };
    const api = this.http;
    // Flags are global: back to their defaults (0 clears an override), so the table's flags hold on a used service too.
    await api.call('PUT', '/admin/features', {
      dp_state_store_backend: 'memory', dp_proto_cross_upstream: true, log_request_body_enabled: true,
      log_retention_days: 0, log_max_records: 0, log_body_retention_days: 0,
    });
    // Namespace names are global; the suffix keeps runs apart (bindingKeys use the suffixed names).
    for (const ns of population.namespaces) await api.call('POST', '/admin/namespaces', { name: this.ns(ns.name, suffix) });
    for (const g of population.groups) {
      c.groups[g.label] = (await api.call('POST', '/admin/provider-groups', { name: `${g.label}-${suffix}`, type: g.type, base_url: 'https://upstream.example', models: g.models })).id;
    }
    for (const k of population.upstreamKeys) {
      const body: Record<string, unknown> = { group_id: c.groups[k.group], api_key: `key-${k.label}`, weight: k.weight };
      if (k.status) body.status = k.status;
      c.upstreamKeys[k.label] = (await api.call('POST', '/admin/api-keys', body)).id;
    }
    for (const b of population.bindings) {
      c.bindings[b.label] = (
        await api.call('POST', '/admin/bindings', {
          namespace: this.ns(b.namespace, suffix), public_model: b.public_model, group_id: c.groups[b.group], selector_value: b.selector_value, weight: b.weight,
        })
      ).id;
    }
    for (const m of population.masters) {
      const created = await api.call('POST', '/admin/masters', { name: `${m.name}-${suffix}`, group: `${m.group}-${suffix}` });
      c.masters[m.label] = { id: created.id, key: created.master_key };
      if (m.access) await api.call('PUT', `/admin/masters/${created.id}/access`, this.access(m.access, suffix));
    }
    for (const k of population.keys) {
      const body: Record<string, unknown> = { ...k.body };
      if (typeof body.default_namespace === 'string') body.default_namespace = this.ns(body.default_namespace, suffix);
      if ('expires_in_s' in k) body.expires_at = iso(k.expires_in_s as number);
      const created = await api.call('POST', `/admin/masters/${c.masters[k.master]!.id}/keys`, body);
      c.keys[k.label] = { id: created.id, secret: created.key_secret };
      if ('revoke' in k && k.revoke) await api.call('POST', `/admin/masters/${c.masters[k.master]!.id}/keys/${created.id}/revoke`);
    }
    this.created = c;
    return c;
  }

  /** Namespaces are suffixed per run: `prod` becomes `prod-<suffix>`. */
  ns(name: string, suffix = this.created.suffix): string {
    return name ? `${name}-${suffix}` : '';
  }

  private access(a: { default_namespace?: string; allowed_namespaces?: string[] }, suffix = this.created.suffix) {
    return {
      ...(a.default_namespace !== undefined ? { default_namespace: this.ns(a.default_namespace, suffix) } : {}),
      ...(a.allowed_namespaces ? { allowed_namespaces: a.allowed_namespaces.map((n) => this.ns(n, suffix)) } : {}),
    };
  }

  /** Performs one change of the case table through the API. */
  async apply(change: Change): Promise<void> {
    const c = this.created;
    const api = this.http;
    switch (change.kind) {
      case 'flush_usage': {
        const tokenHash = createHash('sha256').update(c.keys[change.key]!.secret).digest('hex');
        await api.call('POST', '/internal/stats/flush', { keys: [{ token_hash: tokenHash, requests: 1, tokens: change.tokens }] }, { internal: true });
        return;
      }
      case 'revoke_key': {
        const key = population.keys.find((k) => k.label === change.key)!;
        await api.call('POST', `/admin/masters/${c.masters[key.master]!.id}/keys/${c.keys[change.key]!.id}/revoke`);
        return;
      }
      case 'freeze_master': await api.call('POST', `/admin/masters/${c.masters[change.master]!.id}/freeze`); return;
      case 'unfreeze_master': await api.call('POST', `/admin/masters/${c.masters[change.master]!.id}/unfreeze`); return;
      case 'reset_master_key': c.masters[change.master]!.key = (await api.call('POST', `/admin/masters/${c.masters[change.master]!.id}/reset-key`)).master_key; return;
      case 'delete_master': await api.call('DELETE', `/admin/masters/${c.masters[change.master]!.id}`); return;
      case 'namespace_status': await api.call('PUT', `/admin/namespaces/${this.ns(change.namespace)}`, { status: change.status }); return;
      case 'binding_status': await api.call('PUT', `/admin/bindings/${c.bindings[change.binding]}`, { status: change.status }); return;
      case 'binding_weight': await api.call('PUT', `/admin/bindings/${c.bindings[change.binding]}`, { weight: change.weight }); return;
      case 'group_status': await api.call('PUT', `/admin/provider-groups/${c.groups[change.group]}`, { status: change.status }); return;
      case 'upstream_key': {
        const body = { ...change.body };
        if (typeof body.ban_until === 'string' && body.ban_until.startsWith('+')) body.ban_until = iso(Number(body.ban_until.slice(1)));
        await api.call('PUT', `/admin/api-keys/${c.upstreamKeys[change.key]}`, body);
        return;
      }
      case 'key_update': {
        const key = population.keys.find((k) => k.label === change.key)!;
        await api.call('PUT', `/v1/tokens/${c.keys[change.key]!.id}`, change.body, { token: c.masters[key.master]!.key });
        return;
      }
      case 'key_access': await api.call('PUT', `/admin/keys/${c.keys[change.key]!.id}/access`, this.access(change.body)); return;
      case 'master_access': await api.call('PUT', `/admin/masters/${c.masters[change.master]!.id}/access`, this.access(change.body)); return;
      case 'features': await api.call('PUT', '/admin/features', change.body); return;
    }
  }

  async configVersion(): Promise<number> {
    return (await this.http.call('GET', '/admin/sync/status')).config_version;
  }

  /** The table after `index` steps, with labels resolved. */
  concrete(index: number): ConcreteCase[] {
    return casesAfter(index).map((k) => this.resolve(k));
  }

  private resolve(k: Case): ConcreteCase {
    const c = this.created;
    const credential = k.credential === 'unknown' ? c.unknown : k.credential.startsWith('master:') ? c.masters[k.credential.slice(7)]!.key : c.keys[k.credential]!.secret;
    const route = (r: ExpectedRoute) =>
      Object.entries(r)
        .map(([label, g]) => ({
          group_id: c.groups[label]!,
          group: label,
          weight: g.weight,
          upstream_model: g.model,
          keys: Object.entries(g.keys).map(([kl, w]) => ({ id: c.upstreamKeys[kl]!, label: kl, weight: w })).sort((a, b) => a.id - b.id),
        }))
        .sort((a, b) => a.group_id - b.group_id);
    return {
      name: k.name,
      credential,
      client_ip: k.ip,
      model: k.model,
      namespace: this.ns(k.namespace),
      at_offset_s: k.at_offset_s ?? 0,
      expected: { decision: k.expect.decision, reason: k.expect.reason, ...(k.expect.route ? { route: route(k.expect.route) } : {}) },
    };
  }

  /**
   * Populates, then performs every step; `check` is called with the table in
   * force after population and after each step (it may wait for the data
   * plane and assert).
   */
  async run(check?: (step: StepResult) => Promise<void>, upTo = steps.length): Promise<StepResult[]> {
    await this.populate();
    const results: StepResult[] = [];
    for (let i = 0; i <= upTo; i++) {
      if (i > 0) await this.apply(steps[i - 1]!.change);
      const step: StepResult = {
        index: i,
        name: i === 0 ? 'population' : steps[i - 1]!.name,
        change: i === 0 ? null : steps[i - 1]!.change,
        config_version: await this.configVersion(),
        flags: flagsAfter(i),
        cases: this.concrete(i),
      };
      results.push(step);
      await check?.(step);
    }
    return results;
  }
}

export { steps };
