-- Money on every log record (decisions.md, "Money"): the cost computed from the
-- registry's price in force when the record was accepted, so a later price
-- change never rewrites history, and whether a price was found (`unpriced` = 1
-- when the record's model had none; its cost is then 0). Rows written before
-- this migration read as cost 0, priced; an admin can price them from current
-- prices through the backfill endpoint (docs/spend.md).

ALTER TABLE logs
    ADD COLUMN IF NOT EXISTS cost     Decimal(38, 12) DEFAULT 0 CODEC(ZSTD(1)) AFTER response_size,
    ADD COLUMN IF NOT EXISTS unpriced UInt8           DEFAULT 0 CODEC(T64, ZSTD(1)) AFTER cost;
