/**
 * The store's own markers (docs/store-layout.md, "Layout versions",
 * "Configuration version", and the control-plane internal keys): what tells a
 * reader that the store is complete and current.
 */
import { keys, layoutVersion, logGenerationKey } from '../layout.js';
import type { StoreOp } from '../store.js';

/** First entry of a full snapshot: the time it started (control-plane internal). */
export const snapshotStartedOp = (nowMs: number): StoreOp => ({ op: 'set', key: keys.snapshotStarted, value: String(nowMs) });

/** Last entry of a full snapshot: the store is complete under this layout. */
export const layoutVersionOp = (): StoreOp => ({ op: 'set', key: keys.layoutVersion, value: String(layoutVersion) });

/** Set with every outbox entry: the newest change delivered. */
export const configVersionOp = (version: number): StoreOp => ({ op: 'set', key: keys.configVersion, value: String(version) });

/** Raises the log data generation counters (control-plane internal, written directly). */
export const generationsRaised = (fields: string[]): StoreOp[] => fields.map((field) => ({ op: 'hincrby', key: logGenerationKey, field, by: 1 }));
