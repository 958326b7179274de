/**
 * The shared store layout: the data plane's contract (docs/store-layout.md).
 * Every key and channel name the control plane writes is built here and
 * nowhere else; the operations that write each key are built beside it, in
 * ./writers/ (tenancy, routing, flags, markers).
 */
export const layoutVersion = 3;

export const keys = {
  /** Hash of regular feature flags: field = flag name, value = string form. */
  features: 'meta:features',
  /** Log retention override in days (absent: default). */
  logRetentionDays: 'meta:log:retention_days',
  /** Log row cap override (absent: default). */
  logMaxRecords: 'meta:log:max_records',
  /**
   * The layout version of this contract, written by the LAST entry of every
   * full snapshot: absent (or another version) means the store is empty, being
   * refilled, or written under another layout.
   */
  layoutVersion: 'meta:layout_version',
  /**
   * Control-plane internal: written by the FIRST entry of every full snapshot.
   * A store holding the layout version without it was emptied while a snapshot
   * was being delivered, so it is refilled again.
   */
  snapshotStarted: 'cp:store:snapshot',
  /** The global configuration version: the newest change delivered (see docs/store-layout.md). */
  configVersion: 'meta:config:version',
};

/** Channel on which every configuration change is announced. */
export const configChannel = 'gateway:config';

/** What a message on configChannel announces (docs/store-layout.md, "Change notifications"). */
export type ChangeKind = 'masters' | 'keys' | 'quota' | 'features' | 'routing' | 'routing_snapshot' | 'snapshot' | 'budget';

/** The message published on configChannel. */
export interface ConfigChange {
  kind: ChangeKind;
  /** Identifiers touched by the change, when it has any. */
  ids?: Array<string | number>;
  at: number;
}

export const configChange = (kind: ChangeKind, at: number, ids?: Array<string | number>) => ({
  op: 'publish' as const,
  channel: configChannel,
  message: JSON.stringify({ kind, at, ...(ids ? { ids } : {}) } satisfies ConfigChange),
});

/** Tenancy (docs/store-layout.md, "Tenancy"): token metadata and master state for the data plane and /auth/whoami. */
export const tenancyKeys = {
  /** Hash of one child key's metadata, keyed by the SHA-256 hex digest of the key (token_hash). */
  token: (tokenHash: string): string => `tenancy:token:${tokenHash}`,
  /** Hash of one master's state: epoch, status (`active`, `suspended`, `deleted`), limits. */
  master: (masterId: number | string): string => `tenancy:master:${masterId}`,
};

/** Upstream routing tables (docs/store-layout.md, "Upstream routing"). */
export const routingKeys = {
  /** String: the routing version of the last routing write delivered. */
  version: 'route:version',
  /** Set of the ids of the groups the data plane may use. */
  groups: 'route:groups',
  /** Hash of one usable provider group. */
  group: (id: number) => `route:group:${id}`,
  /** Hash of a usable group's usable keys: field = key id, value = JSON. */
  groupKeys: (id: number) => `route:group:${id}:keys`,
  /** Set of every bindingKey with a snapshot. */
  bindings: 'route:bindings',
  /** String: the JSON snapshot of one bindingKey (namespace + "." + public_model). */
  binding: (bindingKey: string) => `route:binding:${bindingKey}`,
  /** Globs of every routing key, for removing stale ones on a full snapshot. */
  patterns: ['route:group:*', 'route:binding:*'],
};

/** A routing change on configChannel: configChange plus the routing version and the groups touched. */
export const routingChange = (kind: 'routing' | 'routing_snapshot', at: number, version: number, bindingKeys: string[], groupIds: number[]) => ({
  op: 'publish' as const,
  channel: configChannel,
  message: JSON.stringify({ kind, at, ids: bindingKeys, version, groups: groupIds } satisfies ConfigChange & { version: number; groups: number[] }),
});

/**
 * Control-plane internal (docs/store-layout.md, "Log data generations"): a hash
 * of counters raised after every change to the stored logs, so that each node's
 * statistics cache knows when its answers are out of date. Fields: `all` (any
 * change), `epoch` (a change whose masters are unknown: deletion, retention,
 * spool replay), `m:<master_id>` (rows of that master were stored).
 */
export const logGenerationKey = 'cp:logs:generation';
