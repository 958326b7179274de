/**
 * The snapshot of one bindingKey as the data plane reads it: the weighted
 * candidates it may route to and the capabilities aggregated over the
 * upstream models the key resolves to. Pure: built from rows already read.
 */
import type { BindingState, GroupState, ModelCapabilities, UsableKey } from '../../storage/postgres/routing.js';
import type { BindingSnapshot, Candidate, Capabilities } from '../../storage/redis/writers/routing.js';
import { resolveSelector } from './selector.js';

const usableGroup = (g: GroupState | undefined): g is GroupState => !!g && !g.deleted && g.status === 'active';

/**
 * Candidates: active bindings with weight > 0 whose group is active and has a
 * usable key and whose selector resolves. Capabilities: over the upstream
 * models of every active binding whose selector resolves, available or not,
 * so they do not flap while keys are banned.
 */
export function buildBindingSnapshot(
  bindingKey: string,
  bindings: BindingState[],
  groups: Map<number, GroupState>,
  keys: UsableKey[],
  models: Map<string, ModelCapabilities>,
  version: number,
  nowMs: number,
): BindingSnapshot {
  const first = bindings[0]!;
  const candidates: Candidate[] = [];
  const resolved = new Set<string>();
  for (const b of bindings) {
    const g = groups.get(b.group_id);
    if (b.status !== 'active' || !g || g.deleted) continue;
    const upstream = resolveSelector(b.selector_type, b.selector_value, g.models);
    if (upstream === null) continue;
    resolved.add(upstream);
    const groupKeys = keys.filter((k) => k.group_id === g.id);
    if (b.weight <= 0 || !usableGroup(g) || groupKeys.length === 0) continue;
    candidates.push({
      binding_id: b.id,
      group_id: g.id,
      group_name: g.name,
      group_type: g.type,
      upstream_model: upstream,
      weight: b.weight,
      key_count: groupKeys.length,
      key_weight: groupKeys.reduce((s, k) => s + k.weight, 0),
    });
  }
  return {
    binding_key: bindingKey,
    namespace: first.namespace,
    public_model: first.public_model,
    namespace_status: first.namespace_status,
    version,
    updated_at: Math.floor(nowMs / 1000),
    available: first.namespace_status === 'active' && candidates.length > 0,
    total_weight: candidates.reduce((s, c) => s + c.weight, 0),
    candidates,
    capabilities: aggregateCapabilities([...resolved].sort(), models),
  };
}

/**
 * Any candidate may serve a request, so the aggregate promises only what all of
 * them offer: the smallest context window and output limit, a feature only
 * when every known model supports it, the highest cost. Names missing from the
 * registry are listed and left out; with none known the result is null.
 */
export function aggregateCapabilities(names: string[], models: Map<string, ModelCapabilities>): Capabilities | null {
  const known = names.map((n) => models.get(n)).filter((m): m is ModelCapabilities => !!m);
  if (known.length === 0) return null;
  const all = (f: keyof ModelCapabilities) => known.every((m) => m[f] === true);
  return {
    models: names,
    unknown_models: names.filter((n) => !models.has(n)),
    kinds: [...new Set(known.map((m) => m.kind))].sort(),
    context_window: Math.min(...known.map((m) => m.context_window)),
    max_output_tokens: Math.min(...known.map((m) => m.max_output_tokens)),
    cost_per_token: Math.max(...known.map((m) => m.cost_per_token)),
    cost_per_input_token: Math.max(...known.map((m) => m.cost_per_input_token ?? m.cost_per_token)),
    cost_per_output_token: Math.max(...known.map((m) => m.cost_per_output_token ?? m.cost_per_token)),
    supports_fim: all('supports_fim'),
    supports_functions: all('supports_functions'),
    supports_tool_choice: all('supports_tool_choice'),
    supports_vision: all('supports_vision'),
  };
}
