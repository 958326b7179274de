/**
 * The shared store layout: the data plane's contract (docs/store-layout.md).
 * Every key and channel name the control plane writes is built here and
 * nowhere else.
 */
export const layoutVersion = 1;

export const keys = {
  /** Hash of regular feature flags: field = flag name, value = string form. */
  features: 'meta:features',
  /** Log retention override in days (absent: default). */
  logRetentionDays: 'meta:log:retention_days',
  /** Log row cap override (absent: default). */
  logMaxRecords: 'meta:log:max_records',
  /** The layout version of this contract. */
  layoutVersion: 'meta:layout_version',
};

/** Channel on which every configuration change is announced. */
export const configChannel = 'gateway:config';

/** The message published on configChannel. */
export interface ConfigChange {
  kind: string;
  /** Identifiers touched by the change, when it has any. */
  ids?: Array<string | number>;
  at: number;
}

export const configChange = (kind: string, at: number, ids?: Array<string | number>) => ({
  op: 'publish' as const,
  channel: configChannel,
  message: JSON.stringify({ kind, at, ...(ids ? { ids } : {}) } satisfies ConfigChange),
});
