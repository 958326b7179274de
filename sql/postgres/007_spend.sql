-- Spend (docs/spend.md; decisions.md, "Money"): prices and budgets in one
-- currency unit, as exact decimals with 12 places.

-- Prices. cost_per_token becomes exact; the input and output prices default
-- to it when NULL.
ALTER TABLE models ALTER COLUMN cost_per_token TYPE numeric(38, 12) USING round(cost_per_token::numeric, 12);
ALTER TABLE models
  ADD COLUMN cost_per_input_token  numeric(38, 12) CHECK (cost_per_input_token >= 0),
  ADD COLUMN cost_per_output_token numeric(38, 12) CHECK (cost_per_output_token >= 0),
  ADD CONSTRAINT models_cost_per_token_nonnegative CHECK (cost_per_token >= 0);

-- Budgets of masters and child keys: NULL = none. budget_used is the spend of
-- the current period as the spend job last computed it from the logs (and
-- mirrored into the shared store); budget_period_start is that period's start
-- (NULL for `never`: all time).
ALTER TABLE masters
  ADD COLUMN budget              numeric(38, 12) CHECK (budget >= 0),
  ADD COLUMN budget_period       text NOT NULL DEFAULT 'never' CHECK (budget_period IN ('never', 'daily', 'weekly', 'monthly')),
  ADD COLUMN budget_period_start timestamptz,
  ADD COLUMN budget_used         numeric(38, 12) NOT NULL DEFAULT 0;
ALTER TABLE child_keys
  ADD COLUMN budget              numeric(38, 12) CHECK (budget >= 0),
  ADD COLUMN budget_period       text NOT NULL DEFAULT 'never' CHECK (budget_period IN ('never', 'daily', 'weekly', 'monthly')),
  ADD COLUMN budget_period_start timestamptz,
  ADD COLUMN budget_used         numeric(38, 12) NOT NULL DEFAULT 0;
CREATE INDEX masters_budgeted ON masters (id) WHERE budget IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX child_keys_budgeted ON child_keys (id) WHERE budget IS NOT NULL AND NOT revoked;

-- Budget alerts raised: one row per master or key, period and threshold
-- (80 or 100 percent), so each is raised once per period even after the
-- alert itself was resolved. period_start is '-infinity' for `never`.
CREATE TABLE budget_alerts_raised (
  scope         text NOT NULL CHECK (scope IN ('master', 'key')),
  target_id     bigint NOT NULL,
  period_start  timestamptz NOT NULL,
  threshold     smallint NOT NULL CHECK (threshold IN (80, 100)),
  raised_at     timestamptz NOT NULL,
  PRIMARY KEY (scope, target_id, period_start, threshold)
);
