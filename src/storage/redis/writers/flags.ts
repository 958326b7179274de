/**
 * The feature flags of the data plane's contract (docs/store-layout.md,
 * "Feature flags"): the regular flags in one hash, the two log overrides in
 * keys of their own that exist only while overridden.
 */
import { keys } from '../layout.js';
import type { StoreOp } from '../store.js';

export interface StoredFlags {
  /** Every regular flag, name → string form. */
  regular: Record<string, string>;
  /** The log overrides; null: not overridden (the key is deleted). */
  logRetentionDays: number | null;
  logMaxRecords: number | null;
}

const setOrDel = (key: string, value: number | null): StoreOp => (value === null ? { op: 'del', key } : { op: 'set', key, value: String(value) });

/** Operations that make the store hold exactly these flags. */
export const flagsWritten = (f: StoredFlags): StoreOp[] => [
  { op: 'hset', key: keys.features, fields: f.regular },
  setOrDel(keys.logRetentionDays, f.logRetentionDays),
  setOrDel(keys.logMaxRecords, f.logMaxRecords),
];
