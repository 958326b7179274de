/**
 * Log data generations: counters raised after every change to the stored
 * logs, read by the statistics cache (src/actors/analytics/read-cache.ts) to
 * know whether an answer it holds is still the answer. Each counter lives in
 * the shared store, so a change made by any node is seen by every node, and
 * also in this process, so this node's own changes count at once even while
 * the store write is on its way (or failing).
 *
 * Scopes: an unfiltered read depends on `all`; a read of one master on
 * `epoch` (changes whose masters are unknown) and `m:<id>`.
 */
import type { Logger } from '../../logger.js';
import type { SharedStore } from '../../storage/redis/store.js';
import { logGenerationKey } from '../../storage/redis/layout.js';
import { generationsRaised } from '../../storage/redis/writers/markers.js';

export class LogGenerations {
  readonly #local = new Map<string, number>();

  constructor(
    private readonly store: SharedStore,
    private readonly log: Logger,
  ) {}

  /**
   * Rows of `masters` were stored, or (null) logs changed in a way that may
   * touch any master. Call it after the change is visible to reads.
   */
  changed(masters: Iterable<number> | null): void {
    const fields = masters === null ? ['all', 'epoch'] : ['all', ...[...masters].map((m) => `m:${m}`)];
    for (const field of fields) this.#local.set(field, (this.#local.get(field) ?? 0) + 1);
    this.store.apply(generationsRaised(fields)).catch((err: unknown) => {
      // Other nodes see this change only once their cache entries expire (SVC_STATS_CACHE_MAX_AGE_MS).
      this.log.warn({ err }, 'could not publish a log data generation; other nodes may serve older statistics for a while');
    });
  }

  /**
   * The current generation of a scope (one master, or everything), as an
   * opaque string: equal strings mean no change to that scope in between.
   */
  async of(masterId?: number): Promise<string> {
    const fields = masterId === undefined ? ['all'] : ['epoch', `m:${masterId}`];
    const shared = await Promise.all(fields.map((f) => this.store.hget(logGenerationKey, f)));
    return fields.map((f, i) => `${this.#local.get(f) ?? 0}.${shared[i] ?? 0}`).join('/');
  }
}
