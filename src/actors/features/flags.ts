/**
 * The runtime feature flags of the spec, their types and defaults, and how
 * each one is laid out in the shared store.
 */
import type { StoreOp } from '../../storage/redis/store.js';
import { flagsWritten } from '../../storage/redis/writers/flags.js';

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

/** Flags kept in keys of their own, present only while overridden. */
const ownKeys = new Set<string>(['log_retention_days', 'log_max_records']);

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
  const regular = Object.fromEntries(Object.entries(flags).filter(([name]) => !ownKeys.has(name)).map(([name, value]) => [name, String(value)]));
  const override = (name: keyof Flags) => (name in overrides ? (flags[name] as number) : null);
  return flagsWritten({ regular, logRetentionDays: override('log_retention_days'), logMaxRecords: override('log_max_records') });
}
