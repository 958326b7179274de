/**
 * The values an alert carries through the API, the domain and its table: the
 * route schemas (src/actors/alerts/handles.ts) enumerate them, the alert
 * queries check stored rows against them (src/storage/postgres/alerts.ts), and
 * the domain gives them their rules (src/actors/alerts/values.ts).
 */
export const severities = ['info', 'warning', 'critical'] as const;
export const statuses = ['active', 'acknowledged', 'resolved', 'dismissed'] as const;
export const alertTypes = ['traffic_spike', 'error_rate', 'upstream_failure', 'quota_exhausted', 'budget', 'custom'] as const;

export type Severity = (typeof severities)[number];
export type AlertStatus = (typeof statuses)[number];
export type AlertType = (typeof alertTypes)[number];
