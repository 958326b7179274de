-- The logs list by key (docs/analytics.md, "The logs list"): the sort key
-- starts with master_id, so a key filter without its master cannot use the
-- primary index. The list reads only the newest time window that holds its page
-- (counted from the rollups); inside that window's partitions this index skips
-- the granules without the key (a granule holds the keys of one or two masters).
-- Parts written before it get it as they merge; one row of bloom filter per
-- granule (about 1 KB per 8,192 rows).

ALTER TABLE logs ADD INDEX IF NOT EXISTS key_id_bloom key_id TYPE bloom_filter(0.01) GRANULARITY 1;
