-- Tenancy: masters (tenants) and the child keys issued under them.
-- Secrets are never stored: only their SHA-256 hex digests, indexed for lookup.

CREATE TABLE masters (
  id                  bigserial PRIMARY KEY,
  name                text NOT NULL,
  "group"             text NOT NULL,
  -- NULL for legacy masters imported without a digest: they can never authenticate.
  key_digest          text,
  -- First characters of the master key, to tell keys apart in listings.
  key_prefix          text NOT NULL DEFAULT '',
  max_child_keys      integer NOT NULL DEFAULT 100 CHECK (max_child_keys >= 0),
  global_qps          integer NOT NULL DEFAULT 0 CHECK (global_qps >= 0),
  -- Raised on delete and reset: keys issued under an older epoch are invalid.
  epoch               integer NOT NULL DEFAULT 1,
  status              text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  default_namespace   text NOT NULL DEFAULT '',
  allowed_namespaces  text[] NOT NULL DEFAULT '{}',
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  deleted_at          timestamptz
);
CREATE UNIQUE INDEX masters_key_digest ON masters (key_digest) WHERE key_digest IS NOT NULL;
CREATE INDEX masters_live ON masters (id) WHERE deleted_at IS NULL;

CREATE TABLE child_keys (
  id                    bigserial PRIMARY KEY,
  master_id             bigint NOT NULL REFERENCES masters (id),
  name                  text NOT NULL DEFAULT '',
  token_hash            text NOT NULL,
  key_prefix            text NOT NULL DEFAULT '',
  issued_by             text NOT NULL CHECK (issued_by IN ('master', 'admin')),
  issued_at_epoch       integer NOT NULL,
  "group"               text NOT NULL,
  scopes                text NOT NULL DEFAULT '',
  quota_limit           bigint NOT NULL DEFAULT -1 CHECK (quota_limit >= -1),
  quota_used            bigint NOT NULL DEFAULT 0,
  quota_reset_type      text NOT NULL DEFAULT 'never' CHECK (quota_reset_type IN ('never', 'daily', 'weekly', 'monthly')),
  -- Start of the quota period quota_used counts from (NULL for `never`); the
  -- reset job zeroes keys whose period start lies before the current boundary,
  -- which is what makes resets survive restarts and catch up missed boundaries.
  quota_period_start    timestamptz,
  model_limits_enabled  boolean NOT NULL DEFAULT false,
  model_limits          text NOT NULL DEFAULT '',
  allow_ips             text NOT NULL DEFAULT '',
  deny_ips              text NOT NULL DEFAULT '',
  default_namespace     text NOT NULL DEFAULT '',
  allowed_namespaces    text[] NOT NULL DEFAULT '{}',
  status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
  revoked               boolean NOT NULL DEFAULT false,
  revoked_at            timestamptz,
  expires_at            timestamptz,
  request_count         bigint NOT NULL DEFAULT 0,
  last_accessed_at      timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX child_keys_token_hash ON child_keys (token_hash);
CREATE INDEX child_keys_master ON child_keys (master_id, id);
CREATE INDEX child_keys_quota_reset ON child_keys (quota_reset_type, quota_period_start) WHERE quota_reset_type <> 'never' AND NOT revoked;

-- Flush ids seen by POST /internal/stats/flush: a repeat inside 10 minutes is
-- acknowledged with the first answer and not applied again.
CREATE TABLE stats_flushes (
  flush_id                text PRIMARY KEY,
  accepted_keys           integer NOT NULL,
  accepted_upstream_keys  integer NOT NULL,
  seen_at                 timestamptz NOT NULL
);
CREATE INDEX stats_flushes_seen ON stats_flushes (seen_at);
