/**
 * chDB's allocator (the jemalloc inside libchdb) keeps freed pages for
 * ClickHouse's default 5 s before returning them, so every insert's and
 * merge's memory stays resident well after it is done. The library reads its
 * options once, from JE_MALLOC_CONF, when it is loaded: this must run before
 * the chdb package is imported. An operator's own JE_MALLOC_CONF wins.
 */
export function configureChdbAllocator(dirtyDecayMs: number, env: NodeJS.ProcessEnv = process.env): void {
  // muzzy_decay_ms:0 is the library's own value: purged pages go back to the system at once.
  env.JE_MALLOC_CONF ??= `dirty_decay_ms:${dirtyDecayMs},muzzy_decay_ms:0`;
}
