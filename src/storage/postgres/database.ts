/**
 * Postgres for configuration: a slonik pool over the pg driver, pointed either
 * at SVC_DATABASE_URL or at an embedded PGlite served on a loopback socket, so
 * both run through the same driver and the same SQL.
 */
import type { DatabasePool } from 'slonik';

export interface Database {
  /** Connection URL (the embedded server's loopback URL when embedded); worker threads connect with it. */
  readonly url: string;
  readonly embedded: boolean;
  readonly pool: DatabasePool;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
