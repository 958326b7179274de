/**
 * The routing tables of the data plane's contract (docs/store-layout.md,
 * "Upstream routing"): a usable group's hash and key set, a bindingKey's JSON
 * snapshot, the sets listing both, and the routing version. Each writer gives
 * the operations of one thing, written or gone.
 */
import { routingKeys } from '../layout.js';
import type { StoreOp } from '../store.js';
import type { GroupState, UsableKey } from '../../postgres/routing.js';

/** One weighted candidate of a binding snapshot. */
export interface Candidate {
  binding_id: number;
  group_id: number;
  group_name: string;
  group_type: string;
  upstream_model: string;
  weight: number;
  key_count: number;
  key_weight: number;
}

/** What every resolved model of a bindingKey offers (null in the snapshot when none is in the registry). */
export interface Capabilities {
  models: string[];
  unknown_models: string[];
  kinds: string[];
  context_window: number;
  max_output_tokens: number;
  cost_per_token: number;
  /** The input and output prices (each cost_per_token when the model gives none); highest of the candidates. */
  cost_per_input_token: number;
  cost_per_output_token: number;
  supports_fim: boolean;
  supports_functions: boolean;
  supports_tool_choice: boolean;
  supports_vision: boolean;
}

/** The JSON value of `route:binding:<bindingKey>`. */
export interface BindingSnapshot {
  binding_key: string;
  namespace: string;
  public_model: string;
  namespace_status: string;
  version: number;
  updated_at: number;
  available: boolean;
  total_weight: number;
  candidates: Candidate[];
  capabilities: Capabilities | null;
}
const str = (v: string | null | undefined): string => v ?? '';

/** One upstream key as `route:group:<id>:keys` holds it (JSON): times in Unix seconds, 0 when unset. */
function keyEntry(k: UsableKey): string {
  return JSON.stringify({
    id: k.id,
    weight: k.weight,
    api_key: k.api_key,
    access_token: str(k.access_token),
    expires_at: k.expires_at ?? 0,
    account_id: str(k.account_id),
    project_id: str(k.project_id),
    ban_until: k.ban_until ?? 0,
  });
}

/** A usable group: its hash and its usable keys replace what the store held, and it is listed. */
export function groupWritten(g: GroupState, keys: UsableKey[], version: number): StoreOp[] {
  return [
    { op: 'del', key: routingKeys.group(g.id) },
    { op: 'del', key: routingKeys.groupKeys(g.id) },
    {
      op: 'hset',
      key: routingKeys.group(g.id),
      fields: {
        id: String(g.id),
        name: g.name,
        type: g.type,
        base_url: g.base_url,
        models: JSON.stringify(g.models),
        cloud_project: str(g.cloud_project),
        cloud_location: str(g.cloud_location),
        static_headers: JSON.stringify(g.static_headers),
        headers_profile: g.headers_profile,
        version: String(version),
      },
    },
    { op: 'hset', key: routingKeys.groupKeys(g.id), fields: Object.fromEntries(keys.map((k) => [String(k.id), keyEntry(k)])) },
    { op: 'sadd', key: routingKeys.groups, members: [String(g.id)] },
  ];
}

/** A group the data plane may not use (disabled, deleted): neither hash, not listed. */
export const groupGone = (id: number): StoreOp[] => [
  { op: 'del', key: routingKeys.group(id) },
  { op: 'del', key: routingKeys.groupKeys(id) },
  { op: 'srem', key: routingKeys.groups, members: [String(id)] },
];

/** A bindingKey with a live binding: its snapshot, and it is listed. */
export const bindingWritten = (snapshot: BindingSnapshot): StoreOp[] => [
  { op: 'set', key: routingKeys.binding(snapshot.binding_key), value: JSON.stringify(snapshot) },
  { op: 'sadd', key: routingKeys.bindings, members: [snapshot.binding_key] },
];

/** A bindingKey without a live binding: no snapshot, not listed (`model_not_found`). */
export const bindingGone = (bindingKey: string): StoreOp[] => [
  { op: 'del', key: routingKeys.binding(bindingKey) },
  { op: 'srem', key: routingKeys.bindings, members: [bindingKey] },
];

/** The newest routing version written. */
export const routingVersionOp = (version: number): StoreOp => ({ op: 'set', key: routingKeys.version, value: String(version) });

/** A full snapshot starts the two listing sets afresh. */
export const routingListsCleared = (): StoreOp[] => [
  { op: 'del', key: routingKeys.groups },
  { op: 'del', key: routingKeys.bindings },
];

/**
 * The routing keys of `present` (read from the store) that `ops` do not write, to delete, and what they named.
 * A group that is not usable is written as a del: its keys are not stale either way.
 */
export function staleRoutingKeys(present: string[], ops: StoreOp[]) {
  const written = new Set(ops.flatMap((o) => (o.op === 'set' || o.op === 'hset' ? [o.key] : [])));
  const keys = present.filter((k) => !written.has(k));
  const bindingPrefix = routingKeys.binding('');
  const groupPrefix = routingKeys.group(0).slice(0, -1);
  return {
    ops: keys.map((key): StoreOp => ({ op: 'del', key })),
    keys,
    bindingKeys: keys.filter((k) => k.startsWith(bindingPrefix)).map((k) => k.slice(bindingPrefix.length)),
    groupIds: keys.filter((k) => k.startsWith(groupPrefix) && /^\d+$/.test(k.slice(groupPrefix.length))).map((k) => Number(k.slice(groupPrefix.length))),
  };
}
