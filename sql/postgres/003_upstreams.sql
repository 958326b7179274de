-- Upstream routing: provider groups, their credentials, the model capability
-- registry, namespaces and bindings (docs/upstreams.md).

-- Every routing write to the shared store carries a number from here, taken
-- under an advisory lock in the writing transaction, so the data plane can
-- tell a stale snapshot from a fresh one.
CREATE SEQUENCE routing_version;

CREATE TABLE provider_groups (
  id               bigserial PRIMARY KEY,
  name             text NOT NULL,
  type             text NOT NULL,
  base_url         text NOT NULL,
  models           text[] NOT NULL DEFAULT '{}',
  status           text NOT NULL DEFAULT 'active',
  cloud_project    text,
  cloud_location   text,
  static_headers   jsonb NOT NULL DEFAULT '{}',
  headers_profile  text NOT NULL DEFAULT 'default',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz
);
CREATE UNIQUE INDEX provider_groups_name ON provider_groups (name) WHERE deleted_at IS NULL;

CREATE TABLE upstream_keys (
  id             bigserial PRIMARY KEY,
  group_id       bigint NOT NULL REFERENCES provider_groups (id),
  api_key        text NOT NULL DEFAULT '',
  weight         integer NOT NULL DEFAULT 1,
  status         text NOT NULL DEFAULT 'active',
  auto_ban       boolean NOT NULL DEFAULT true,
  ban_reason     text NOT NULL DEFAULT '',
  ban_until      timestamptz,
  access_token   text,
  refresh_token  text,
  expires_at     timestamptz,
  account_id     text,
  project_id     text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  deleted_at     timestamptz
);
CREATE INDEX upstream_keys_group ON upstream_keys (group_id) WHERE deleted_at IS NULL;
-- The OAuth refresh job looks for tokens about to expire.
CREATE INDEX upstream_keys_expiry ON upstream_keys (expires_at) WHERE deleted_at IS NULL AND refresh_token IS NOT NULL;

-- Usage counters per upstream key and UTC day, so any since/until window can be summed.
CREATE TABLE upstream_usage_daily (
  api_key_id  bigint NOT NULL REFERENCES upstream_keys (id),
  day         date NOT NULL,
  requests    bigint NOT NULL DEFAULT 0,
  success     bigint NOT NULL DEFAULT 0,
  failure     bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, day)
);
CREATE INDEX upstream_usage_day ON upstream_usage_daily (day);

CREATE TABLE models (
  id                    bigserial PRIMARY KEY,
  name                  text NOT NULL,
  kind                  text NOT NULL DEFAULT 'chat',
  context_window        integer NOT NULL DEFAULT 0,
  max_output_tokens     integer NOT NULL DEFAULT 0,
  cost_per_token        double precision NOT NULL DEFAULT 0,
  supports_fim          boolean NOT NULL DEFAULT false,
  supports_functions    boolean NOT NULL DEFAULT false,
  supports_tool_choice  boolean NOT NULL DEFAULT false,
  supports_vision       boolean NOT NULL DEFAULT false,
  -- `admin` (written through /admin/models) or `registry` (written by a registry refresh).
  source                text NOT NULL DEFAULT 'admin',
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  deleted_at            timestamptz
);
CREATE UNIQUE INDEX models_name ON models (name) WHERE deleted_at IS NULL;

-- Each registry refresh keeps what it fetched, so rollback can re-apply the previous one.
CREATE TABLE model_registry_refreshes (
  id           bigserial PRIMARY KEY,
  ref          text NOT NULL,
  source_url   text NOT NULL,
  version      text,
  models       jsonb NOT NULL,
  applied_at   timestamptz NOT NULL DEFAULT now(),
  rolled_back  boolean NOT NULL DEFAULT false
);

CREATE TABLE namespaces (
  id           bigserial PRIMARY KEY,
  name         text NOT NULL UNIQUE,
  description  text NOT NULL DEFAULT '',
  status       text NOT NULL DEFAULT 'active',
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bindings (
  id              bigserial PRIMARY KEY,
  namespace       text NOT NULL REFERENCES namespaces (name) ON UPDATE CASCADE,
  public_model    text NOT NULL,
  group_id        bigint NOT NULL REFERENCES provider_groups (id),
  selector_type   text NOT NULL DEFAULT 'exact',
  selector_value  text NOT NULL,
  weight          integer NOT NULL DEFAULT 1,
  status          text NOT NULL DEFAULT 'active',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  deleted_at      timestamptz
);
CREATE INDEX bindings_key ON bindings (namespace, public_model) WHERE deleted_at IS NULL;
CREATE INDEX bindings_group ON bindings (group_id) WHERE deleted_at IS NULL;
-- One rule per target: the same upstream model of the same group under one bindingKey twice is a conflict.
CREATE UNIQUE INDEX bindings_target ON bindings (namespace, public_model, group_id, selector_value) WHERE deleted_at IS NULL;
