-- Outbox rows live for milliseconds (written, read once, deleted), yet a stats
-- flush writes ~40 KB of operations per row: compressing them on insert and
-- decompressing them on read cost the embedded Postgres more than storing them
-- out of line as they are (docs/performance.md, "stats-flush").
ALTER TABLE outbox ALTER COLUMN ops SET STORAGE EXTERNAL;
