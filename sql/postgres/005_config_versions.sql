-- The global configuration version: the id of the newest outbox entry delivered
-- to the shared store (entries are delivered in id order, so it only grows).
CREATE TABLE config_state (
  id          smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  version     bigint NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO config_state DEFAULT VALUES;

-- Data-plane nodes and the configuration version each reports as applied.
CREATE TABLE dp_nodes (
  node_id        text PRIMARY KEY,
  version        bigint NOT NULL,
  first_seen_at  timestamptz NOT NULL DEFAULT now(),
  last_seen_at   timestamptz NOT NULL DEFAULT now()
);
