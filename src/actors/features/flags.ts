/**
 * The runtime feature flags of the spec, their types and defaults, and how
 * each one is laid out in the shared store.
 */
import { keys } from '../../storage/redis/layout.js';
import type { StoreOp } from '../../storage/redis/store.js';

export interface Flags {
  dp_state_store_backend: string;
  dp_proto_cross_upstream: boolean;
  log_request_body_enabled: boolean;
  log_retention_days: number;
  log_max_records: number;
  log_body_retention_days: number;
}

export const flagDefaults: Flags = {
  dp_state_store_backend: 'memory',
  dp_proto_cross_upstream: true,
  log_request_body_enabled: true,
  log_retention_days: 30,
  log_max_records: 1_000_000,
  log_body_retention_days: 30,
};

/** Flags where 0 clears the override (back to the default). */
export const clearedByZero = new Set<string>(['log_retention_days', 'log_max_records', 'log_body_retention_days']);

/** Flags kept in their own key, where 0 clears the override. */
export const logOverrideKeys: Partial<Record<keyof Flags, string>> = {
  log_retention_days: keys.logRetentionDays,
  log_max_records: keys.logMaxRecords,
};

export function effectiveFlags(overrides: Record<string, unknown>): Flags {
  const flags = { ...flagDefaults, ...overrides } as Flags;
  // Bodies follow the records unless told otherwise, and never outlive them.
  if (overrides.log_body_retention_days === undefined) flags.log_body_retention_days = flags.log_retention_days;
  flags.log_body_retention_days = Math.min(flags.log_body_retention_days, flags.log_retention_days);
  return flags;
}

/** Store operations that make the store hold exactly these flags. */
export function flagOps(overrides: Record<string, unknown>): StoreOp[] {
  const flags = effectiveFlags(overrides);
  const regular: Record<string, string> = {};
  const ops: StoreOp[] = [];
  for (const [name, value] of Object.entries(flags)) {
    const own = logOverrideKeys[name as keyof Flags];
    if (!own) regular[name] = String(value);
    else if (name in overrides) ops.push({ op: 'set', key: own, value: String(value) });
    else ops.push({ op: 'del', key: own });
  }
  return [{ op: 'hset', key: keys.features, fields: regular }, ...ops];
}
