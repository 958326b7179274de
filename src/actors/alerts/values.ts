/**
 * The alert domain's values (decisions.md): types, severities, statuses and
 * their legal transitions, and the defaults of the two single records.
 */
import {
  severities,
  statuses,
  type AlertStatus,
  type Severity,
  type Thresholds,
  type WebhookConfig,
} from '../../storage/postgres/alerts.js';

// The values the alert tables hold are declared with their queries (storage); the rules on them are here.
export { severities, statuses, type AlertStatus, type Severity, type Thresholds, type WebhookConfig };

export { alertTypes, type AlertType } from '../../contract/alert-values.js';

/** Statuses that hold the fingerprint: a new alert of it waits until it is closed. */
export const openStatuses: readonly AlertStatus[] = ['active', 'acknowledged'];

/**
 * Each operation: the status it leads to, the statuses it may start from, and
 * the time column it stamps. active → acknowledged → resolved; active or
 * acknowledged → dismissed; resolved and dismissed are final.
 */
export const transitions = {
  acknowledge: { to: 'acknowledged', from: ['active'], stamp: 'acknowledged_at' },
  resolve: { to: 'resolved', from: ['acknowledged'], stamp: 'resolved_at' },
  dismiss: { to: 'dismissed', from: ['active', 'acknowledged'], stamp: 'dismissed_at' },
} as const satisfies Record<string, { to: AlertStatus; from: readonly AlertStatus[]; stamp: string }>;

export type TransitionName = keyof typeof transitions;

export const severityRank = (s: Severity): number => severities.indexOf(s);

/** Dropped as duplicates: automatic alerts of a fingerprint raised within this time of the previous one. */
export const DEDUP_COOLDOWN_MS = 5 * 60_000;

/** Closed alerts are deleted this long after they were resolved or dismissed. */
export const RETENTION_MS = 90 * 24 * 3_600_000;

/** The record created on first use: generous limits, so a fresh install only alerts on real spikes. */
export const thresholdDefaults: Thresholds = {
  global_qps: 100,
  master_rpm: 600,
  master_tpm: 200_000,
  master_rpd: 100_000,
  master_tpd: 20_000_000,
  min_samples: 10,
};

export const webhookDefaults: WebhookConfig = {
  enabled: false,
  url: '',
  threshold: 10,
  window_seconds: 60,
  cooldown_seconds: 300,
  status_code_threshold: 500,
  detect_error_message: true,
  secret: '',
};
