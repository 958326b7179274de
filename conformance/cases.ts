/**
 * The conformance population and its expected decisions, written by hand from
 * docs/store-layout.md ("Decisions"), not computed by the service: the API
 * makes no IP, quota or model-limit decision, so the only source is the
 * document. Everything is named by label; the kit (kit.ts) creates it through
 * the API and resolves labels to ids and secrets.
 *
 * A case: credential (a key label, `master:<label>` for a master key, or
 * `unknown`), client address, public model, namespace the request names
 * ("" = none), optionally a clock offset, and the expected decision, reason
 * and (when allowed) route: group label -> binding weight, upstream model and
 * key label -> key weight.
 */

export interface ExpectedRoute {
  [group: string]: { weight: number; model: string; keys: Record<string, number> };
}

export interface Expected {
  decision: 'allow' | 'deny' | 'unavailable';
  reason: string;
  route?: ExpectedRoute;
}

export interface Case {
  name: string;
  credential: string;
  ip: string;
  model: string;
  namespace: string;
  /** Evaluate as if the clock were this many seconds ahead (expiry, quota periods). */
  at_offset_s?: number;
  expect: Expected;
}

export const population = {
  namespaces: [{ name: 'prod' }, { name: 'dev' }, { name: 'edge' }],
  groups: [
    { label: 'ga', type: 'openai', models: ['gpt-a', 'gpt-b'] },
    { label: 'gb', type: 'anthropic', models: ['claude-a'] },
    { label: 'gc', type: 'openai', models: ['gpt-a'] },
  ],
  upstreamKeys: [
    { label: 'ga1', group: 'ga', weight: 3 },
    { label: 'ga2', group: 'ga', weight: 1 },
    { label: 'gb1', group: 'gb', weight: 2 },
    { label: 'gc1', group: 'gc', weight: 1, status: 'manual_disabled' },
  ],
  bindings: [
    { label: 'chat-ga', namespace: 'prod', public_model: 'chat', group: 'ga', selector_value: 'gpt-a', weight: 70 },
    { label: 'chat-gb', namespace: 'prod', public_model: 'chat', group: 'gb', selector_value: 'claude-a', weight: 30 },
    { label: 'fast', namespace: 'prod', public_model: 'fast', group: 'ga', selector_value: 'gpt-b', weight: 1 },
    { label: 'dev-chat', namespace: 'dev', public_model: 'chat', group: 'gb', selector_value: 'claude-a', weight: 1 },
    { label: 'dead', namespace: 'prod', public_model: 'dead', group: 'gc', selector_value: 'gpt-a', weight: 1 },
    { label: 'zero', namespace: 'prod', public_model: 'zero', group: 'ga', selector_value: 'gpt-a', weight: 0 },
    { label: 'edge-chat', namespace: 'edge', public_model: 'chat', group: 'ga', selector_value: 'gpt-a', weight: 1 },
  ],
  masters: [
    { label: 'acme', name: 'acme', group: 'acme' },
    { label: 'beta', name: 'beta', group: 'beta', access: { default_namespace: 'prod', allowed_namespaces: ['prod', 'edge'] } },
  ],
  /** Key options as POST /admin/masters/{id}/keys takes them; `expires_in_s` becomes expires_at; `revoke` revokes it at once. */
  keys: [
    { label: 'plain', master: 'acme', body: {} },
    { label: 'bare', master: 'acme', body: {} },
    { label: 'ns', master: 'acme', body: { default_namespace: 'prod' } },
    { label: 'ip', master: 'acme', body: { default_namespace: 'prod', allow_ips: '10.0.0.0/8, 2001:DB8::/32', deny_ips: '10.9.0.0/16' } },
    { label: 'models', master: 'acme', body: { default_namespace: 'prod', model_limits_enabled: true, model_limits: 'chat' } },
    { label: 'quota', master: 'acme', body: { default_namespace: 'prod', quota_limit: 100, quota_reset_type: 'daily' } },
    { label: 'zero', master: 'acme', body: { default_namespace: 'prod', quota_limit: 0 } },
    { label: 'nobudget', master: 'acme', body: { default_namespace: 'prod', budget: 0 } },
    { label: 'susp', master: 'acme', body: { default_namespace: 'prod', status: 'suspended' } },
    { label: 'exp', master: 'acme', body: { default_namespace: 'prod' }, expires_in_s: 3600 },
    { label: 'revoked', master: 'acme', body: { default_namespace: 'prod' }, revoke: true },
    { label: 'beta', master: 'beta', body: {} },
  ],
};

const ga = (keys: Record<string, number> = { ga1: 3, ga2: 1 }, weight = 70, model = 'gpt-a') => ({ ga: { weight, model, keys } });
const gb = (weight = 30) => ({ gb: { weight, model: 'claude-a', keys: { gb1: 2 } } });
const allow = (route: ExpectedRoute): Expected => ({ decision: 'allow', reason: 'ok', route });
const deny = (reason: string): Expected => ({ decision: 'deny', reason });
const unavailable = (reason: string): Expected => ({ decision: 'unavailable', reason });
const ip = '203.0.113.7';

/** The decisions right after population. */
export const initialCases: Case[] = [
  { name: 'no namespace anywhere', credential: 'plain', ip, model: 'chat', namespace: '', expect: deny('namespace_required') },
  { name: 'named namespace, two groups', credential: 'plain', ip, model: 'chat', namespace: 'prod', expect: allow({ ...ga(), ...gb() }) },
  { name: 'other namespace', credential: 'plain', ip, model: 'chat', namespace: 'dev', expect: allow({ gb: { weight: 1, model: 'claude-a', keys: { gb1: 2 } } }) },
  { name: 'third namespace', credential: 'plain', ip, model: 'chat', namespace: 'edge', expect: allow(ga(undefined, 1)) },
  { name: 'key default namespace', credential: 'ns', ip, model: 'chat', namespace: '', expect: allow({ ...ga(), ...gb() }) },
  { name: 'second upstream model', credential: 'ns', ip, model: 'fast', namespace: '', expect: allow(ga(undefined, 1, 'gpt-b')) },
  { name: 'unknown public model', credential: 'ns', ip, model: 'nope', namespace: '', expect: deny('model_not_found') },
  { name: 'public model is case-sensitive', credential: 'ns', ip, model: 'CHAT', namespace: '', expect: deny('model_not_found') },
  { name: 'binding whose group has no usable key', credential: 'ns', ip, model: 'dead', namespace: '', expect: unavailable('no_upstream') },
  { name: 'weight-0 binding only', credential: 'ns', ip, model: 'zero', namespace: '', expect: unavailable('no_upstream') },
  { name: 'inside allow range', credential: 'ip', ip: '10.1.2.3', model: 'chat', namespace: '', expect: allow({ ...ga(), ...gb() }) },
  { name: 'deny range wins over allow', credential: 'ip', ip: '10.9.1.1', model: 'chat', namespace: '', expect: deny('ip_denied') },
  { name: 'outside allow list', credential: 'ip', ip: '192.168.1.1', model: 'chat', namespace: '', expect: deny('ip_not_allowed') },
  { name: 'IPv4-mapped IPv6 is IPv4', credential: 'ip', ip: '::ffff:10.1.2.3', model: 'chat', namespace: '', expect: allow({ ...ga(), ...gb() }) },
  { name: 'IPv4-mapped IPv6 in deny range', credential: 'ip', ip: '::ffff:10.9.0.1', model: 'chat', namespace: '', expect: deny('ip_denied') },
  { name: 'IPv6 inside range (rule written upper case)', credential: 'ip', ip: '2001:db8::5', model: 'chat', namespace: '', expect: allow({ ...ga(), ...gb() }) },
  { name: 'IPv6 outside range', credential: 'ip', ip: '2001:db9::5', model: 'chat', namespace: '', expect: deny('ip_not_allowed') },
  { name: 'model limit: listed public name', credential: 'models', ip, model: 'chat', namespace: '', expect: allow({ ...ga(), ...gb() }) },
  { name: 'model limit: other public name', credential: 'models', ip, model: 'fast', namespace: '', expect: deny('model_not_allowed') },
  { name: 'model limit: upstream name does not count', credential: 'models', ip, model: 'gpt-a', namespace: '', expect: deny('model_not_allowed') },
  { name: 'quota unused', credential: 'quota', ip, model: 'chat', namespace: '', expect: allow({ ...ga(), ...gb() }) },
  { name: 'quota limit 0', credential: 'zero', ip, model: 'chat', namespace: '', expect: deny('quota_exceeded') },
  { name: 'budget 0', credential: 'nobudget', ip, model: 'chat', namespace: '', expect: deny('budget_exceeded') },
  { name: 'suspended key', credential: 'susp', ip, model: 'chat', namespace: '', expect: deny('key_suspended') },
  { name: 'expiring key, before', credential: 'exp', ip, model: 'chat', namespace: '', expect: allow({ ...ga(), ...gb() }) },
  { name: 'expiring key, two hours later', credential: 'exp', ip, model: 'chat', namespace: '', at_offset_s: 7200, expect: deny('expired') },
  { name: 'revoked key', credential: 'revoked', ip, model: 'chat', namespace: '', expect: deny('revoked') },
  { name: 'master key', credential: 'master:acme', ip, model: 'chat', namespace: 'prod', expect: deny('master_key') },
  { name: 'unknown key', credential: 'unknown', ip, model: 'chat', namespace: 'prod', expect: deny('unknown_key') },
  { name: 'inherited default namespace', credential: 'beta', ip, model: 'chat', namespace: '', expect: allow({ ...ga(), ...gb() }) },
  { name: 'outside master allowed namespaces', credential: 'beta', ip, model: 'chat', namespace: 'dev', expect: deny('namespace_not_allowed') },
  { name: 'inside master allowed namespaces', credential: 'beta', ip, model: 'chat', namespace: 'edge', expect: allow(ga(undefined, 1)) },
];

/** A change through the API, described as data (the kit performs it). */
export type Change =
  | { kind: 'flush_usage'; key: string; tokens: number }
  | { kind: 'revoke_key'; key: string }
  | { kind: 'freeze_master' | 'unfreeze_master' | 'reset_master_key' | 'delete_master'; master: string }
  | { kind: 'namespace_status'; namespace: string; status: string }
  | { kind: 'binding_status'; binding: string; status: string }
  | { kind: 'binding_weight'; binding: string; weight: number }
  | { kind: 'upstream_key'; key: string; body: Record<string, unknown> }
  | { kind: 'group_status'; group: string; status: string }
  | { kind: 'key_update'; key: string; body: Record<string, unknown> }
  | { kind: 'key_access'; key: string; body: Record<string, unknown> }
  | { kind: 'master_access'; master: string; body: Record<string, unknown> }
  | { kind: 'features'; body: Record<string, unknown> };

export interface Step {
  name: string;
  change: Change;
  /** Cases whose expectation changes with this step (by case name), and new cases. */
  expect: Record<string, Expected>;
  add?: Case[];
  /** The flags a data plane reads after this step (absent: unchanged). */
  flags?: Record<string, unknown>;
}

export const initialFlags = {
  dp_state_store_backend: 'memory',
  dp_proto_cross_upstream: true,
  log_request_body_enabled: true,
  log_body_retention_days: 30,
  log_retention_days: 30,
  log_max_records: 1_000_000,
};

const every = (names: string[], e: Expected) => Object.fromEntries(names.map((n) => [n, e]));

/** The cases of acme's keys that reach the master checks (not revoked, suspended or expired before). */
const acmeCases = ['no namespace anywhere', 'named namespace, two groups', 'other namespace', 'third namespace',
  'inside allow range', 'deny range wins over allow', 'outside allow list', 'IPv4-mapped IPv6 is IPv4', 'IPv4-mapped IPv6 in deny range',
  'IPv6 inside range (rule written upper case)', 'IPv6 outside range', 'model limit: listed public name', 'model limit: other public name',
  'model limit: upstream name does not count', 'quota unused', 'quota limit 0', 'budget 0', 'expiring key, before'];

/** Changes of every kind, in order; each lists what it changes in the table. */
export const steps: Step[] = [
  {
    name: 'usage flushed up to the quota',
    change: { kind: 'flush_usage', key: 'quota', tokens: 100 },
    expect: { 'quota unused': deny('quota_exceeded') },
    add: [{ name: 'quota used up, next day (new period)', credential: 'quota', ip, model: 'chat', namespace: '', at_offset_s: 86400, expect: allow({ ...ga(), ...gb() }) }],
  },
  { name: 'key revoked', change: { kind: 'revoke_key', key: 'ns' }, expect: every(['key default namespace', 'second upstream model', 'unknown public model', 'public model is case-sensitive', 'binding whose group has no usable key', 'weight-0 binding only'], deny('revoked')) },
  {
    name: 'master frozen',
    change: { kind: 'freeze_master', master: 'acme' },
    expect: every([...acmeCases, 'quota used up, next day (new period)'], deny('master_suspended')),
  },
  {
    name: 'master unfrozen',
    change: { kind: 'unfreeze_master', master: 'acme' },
    expect: {
      'no namespace anywhere': deny('namespace_required'), 'named namespace, two groups': allow({ ...ga(), ...gb() }),
      'other namespace': allow({ gb: { weight: 1, model: 'claude-a', keys: { gb1: 2 } } }), 'third namespace': allow(ga(undefined, 1)),
      'inside allow range': allow({ ...ga(), ...gb() }), 'deny range wins over allow': deny('ip_denied'), 'outside allow list': deny('ip_not_allowed'),
      'IPv4-mapped IPv6 is IPv4': allow({ ...ga(), ...gb() }), 'IPv4-mapped IPv6 in deny range': deny('ip_denied'),
      'IPv6 inside range (rule written upper case)': allow({ ...ga(), ...gb() }), 'IPv6 outside range': deny('ip_not_allowed'),
      'model limit: listed public name': allow({ ...ga(), ...gb() }), 'model limit: other public name': deny('model_not_allowed'),
      'model limit: upstream name does not count': deny('model_not_allowed'), 'quota unused': deny('quota_exceeded'), 'quota limit 0': deny('quota_exceeded'),
      'budget 0': deny('budget_exceeded'),
      'expiring key, before': allow({ ...ga(), ...gb() }), 'quota used up, next day (new period)': allow({ ...ga(), ...gb() }),
    },
  },
  {
    name: 'namespace suspended',
    change: { kind: 'namespace_status', namespace: 'edge', status: 'suspended' },
    expect: { 'third namespace': deny('namespace_suspended'), 'inside master allowed namespaces': deny('namespace_suspended') },
  },
  {
    name: 'one binding of a bindingKey disabled',
    change: { kind: 'binding_status', binding: 'chat-gb', status: 'disabled' },
    expect: every(['named namespace, two groups', 'inside allow range', 'IPv4-mapped IPv6 is IPv4', 'IPv6 inside range (rule written upper case)', 'model limit: listed public name',
      'expiring key, before', 'quota used up, next day (new period)', 'inherited default namespace'], allow(ga())),
  },
  {
    name: 'binding weight changed',
    change: { kind: 'binding_weight', binding: 'chat-ga', weight: 5 },
    expect: every(['named namespace, two groups', 'inside allow range', 'IPv4-mapped IPv6 is IPv4', 'IPv6 inside range (rule written upper case)', 'model limit: listed public name',
      'expiring key, before', 'quota used up, next day (new period)', 'inherited default namespace'], allow(ga(undefined, 5))),
  },
  {
    name: 'upstream key disabled',
    change: { kind: 'upstream_key', key: 'ga1', body: { status: 'manual_disabled' } },
    expect: {
      ...every(['named namespace, two groups', 'inside allow range', 'IPv4-mapped IPv6 is IPv4', 'IPv6 inside range (rule written upper case)', 'model limit: listed public name',
        'expiring key, before', 'quota used up, next day (new period)', 'inherited default namespace'], allow(ga({ ga2: 1 }, 5))),
      'third namespace': deny('namespace_suspended'),
    },
  },
  {
    name: 'upstream key weight changed',
    change: { kind: 'upstream_key', key: 'ga2', body: { weight: 4 } },
    expect: every(['named namespace, two groups', 'inside allow range', 'IPv4-mapped IPv6 is IPv4', 'IPv6 inside range (rule written upper case)', 'model limit: listed public name',
      'expiring key, before', 'quota used up, next day (new period)', 'inherited default namespace'], allow(ga({ ga2: 4 }, 5))),
  },
  {
    name: 'upstream key banned until a future time',
    change: { kind: 'upstream_key', key: 'gb1', body: { ban_until: '+3600' } },
    expect: { 'other namespace': unavailable('no_upstream') },
  },
  {
    name: 'provider group disabled',
    change: { kind: 'group_status', group: 'ga', status: 'manual_disabled' },
    expect: every(['named namespace, two groups', 'inside allow range', 'IPv4-mapped IPv6 is IPv4', 'IPv6 inside range (rule written upper case)', 'model limit: listed public name',
      'expiring key, before', 'quota used up, next day (new period)', 'inherited default namespace'], unavailable('no_upstream')),
  },
  {
    name: 'provider group enabled again',
    change: { kind: 'group_status', group: 'ga', status: 'active' },
    expect: every(['named namespace, two groups', 'inside allow range', 'IPv4-mapped IPv6 is IPv4', 'IPv6 inside range (rule written upper case)', 'model limit: listed public name',
      'expiring key, before', 'quota used up, next day (new period)', 'inherited default namespace'], allow(ga({ ga2: 4 }, 5))),
  },
  {
    name: 'key IP rules changed',
    change: { kind: 'key_update', key: 'ip', body: { allow_ips: '', deny_ips: '2001:db8::/32' } },
    expect: {
      'deny range wins over allow': allow(ga({ ga2: 4 }, 5)), 'outside allow list': allow(ga({ ga2: 4 }, 5)), 'IPv4-mapped IPv6 in deny range': allow(ga({ ga2: 4 }, 5)),
      'IPv6 inside range (rule written upper case)': deny('ip_denied'), 'IPv6 outside range': allow(ga({ ga2: 4 }, 5)),
    },
  },
  {
    name: 'key namespaces changed by the admin',
    change: { kind: 'key_access', key: 'plain', body: { default_namespace: 'dev', allowed_namespaces: ['dev'] } },
    expect: { 'no namespace anywhere': unavailable('no_upstream'), 'named namespace, two groups': deny('namespace_not_allowed'), 'third namespace': deny('namespace_not_allowed') },
  },
  {
    name: 'master namespaces changed without propagation',
    change: { kind: 'master_access', master: 'acme', body: { default_namespace: 'prod', allowed_namespaces: ['prod'] } },
    expect: { 'no namespace anywhere': deny('namespace_not_allowed'), 'other namespace': deny('namespace_not_allowed') },
    add: [{ name: 'master default namespace when the key has none', credential: 'bare', ip, model: 'chat', namespace: '', expect: allow(ga({ ga2: 4 }, 5)) }],
  },
  {
    name: 'master key reset (epoch raised)',
    change: { kind: 'reset_master_key', master: 'beta' },
    expect: every(['inherited default namespace', 'outside master allowed namespaces', 'inside master allowed namespaces'], deny('epoch_mismatch')),
  },
  {
    name: 'flags changed',
    change: { kind: 'features', body: { dp_proto_cross_upstream: false, log_retention_days: 7, log_max_records: 5000 } },
    expect: {},
    flags: { dp_proto_cross_upstream: false, log_retention_days: 7, log_body_retention_days: 7, log_max_records: 5000 },
  },
  {
    name: 'master deleted',
    change: { kind: 'delete_master', master: 'beta' },
    expect: every(['inherited default namespace', 'outside master allowed namespaces', 'inside master allowed namespaces'], deny('master_deleted')),
  },
];

/** The table in force after `upTo` steps (0: right after population). */
export function casesAfter(upTo: number): Case[] {
  const table = initialCases.map((c) => ({ ...c }));
  for (const step of steps.slice(0, upTo)) {
    for (const c of step.add ?? []) table.push({ ...c });
    for (const c of table) if (step.expect[c.name]) c.expect = step.expect[c.name]!;
  }
  return table;
}

export function flagsAfter(upTo: number): Record<string, unknown> {
  return Object.assign({}, initialFlags, ...steps.slice(0, upTo).map((s) => s.flags ?? {}));
}
