-- Alerts, the traffic-spike thresholds, the log-error webhook configuration and
-- its delivery log (docs/alerts.md). Times are written from the service clock.

CREATE TABLE alerts (
  id               bigserial PRIMARY KEY,
  type             text NOT NULL,
  severity         text NOT NULL,
  status           text NOT NULL DEFAULT 'active',
  fingerprint      text NOT NULL,
  message          text NOT NULL DEFAULT '',
  metadata         jsonb NOT NULL DEFAULT '{}',
  master_id        bigint,
  -- Who raised it: admin, detector or report (the data plane).
  source           text NOT NULL,
  -- How often it was raised again while open (1 at creation), and when last.
  occurrences      integer NOT NULL DEFAULT 1,
  last_seen_at     timestamptz NOT NULL,
  acknowledged_at  timestamptz,
  resolved_at      timestamptz,
  dismissed_at     timestamptz,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
-- Deduplication looks up the latest alert of a fingerprint.
CREATE INDEX alerts_fingerprint ON alerts (fingerprint, created_at DESC);
-- One open alert per fingerprint: a new one only after it is resolved or dismissed.
CREATE UNIQUE INDEX alerts_open_fingerprint ON alerts (fingerprint) WHERE status IN ('active', 'acknowledged');
CREATE INDEX alerts_status_created ON alerts (status, created_at DESC);
-- Cleanup of closed alerts.
CREATE INDEX alerts_closed ON alerts ((coalesce(resolved_at, dismissed_at))) WHERE status IN ('resolved', 'dismissed');

-- The single thresholds record (id 1), created on first use; 0 disables a check.
CREATE TABLE alert_thresholds (
  id           integer PRIMARY KEY CHECK (id = 1),
  global_qps   integer NOT NULL,
  master_rpm   integer NOT NULL,
  master_tpm   bigint NOT NULL,
  master_rpd   bigint NOT NULL,
  master_tpd   bigint NOT NULL,
  min_samples  integer NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- The single log-error webhook configuration (id 1), created on first use.
CREATE TABLE log_webhook_config (
  id                     integer PRIMARY KEY CHECK (id = 1),
  enabled                boolean NOT NULL,
  url                    text NOT NULL,
  threshold              integer NOT NULL,
  window_seconds         integer NOT NULL,
  cooldown_seconds       integer NOT NULL,
  status_code_threshold  integer NOT NULL,
  detect_error_message   boolean NOT NULL,
  -- Needed in clear to sign; never returned by the API.
  secret                 text NOT NULL DEFAULT '',
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);

-- Every delivery attempt and its result; only the latest 100 are kept.
CREATE TABLE log_webhook_deliveries (
  id           bigserial PRIMARY KEY,
  trigger_id   text NOT NULL,
  attempt      integer NOT NULL,
  url          text NOT NULL,
  count        integer NOT NULL,
  ok           boolean NOT NULL,
  status_code  integer,
  error        text NOT NULL DEFAULT '',
  duration_ms  integer NOT NULL,
  created_at   timestamptz NOT NULL
);
