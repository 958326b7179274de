-- Feature flag overrides. A missing row means "use the default"; values are JSON
-- so that booleans, integers and strings keep their type.
CREATE TABLE feature_flags (
  name        text PRIMARY KEY,
  value       jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The retry outbox: every write meant for the shared store is recorded here in
-- the same transaction as the change it reflects, then delivered in id order by
-- the relay. A Redis outage therefore delays changes but never loses one.
CREATE TABLE outbox (
  id               bigserial PRIMARY KEY,
  ops              jsonb NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  dead             boolean NOT NULL DEFAULT false
);
CREATE INDEX outbox_pending ON outbox (id) WHERE NOT dead;
