/**
 * Traffic-spike rules: from the thresholds and the traffic of the last minute
 * and the last day, the alerts to raise. `warning` from the threshold on,
 * `critical` from twice it; a threshold of 0 disables its check; per-master
 * RPM and TPM count only with at least `min_samples` requests in the minute.
 */
import type { NewAlert } from '../../storage/postgres/alerts.js';
import type { MasterTraffic } from '../../storage/clickhouse/traffic.js';
import type { Severity, Thresholds } from './values.js';

export interface Window {
  /** `1m` or `24h`. */
  name: string;
  from: number;
  to: number;
}

export function level(value: number, threshold: number): Severity | null {
  if (threshold <= 0) return null;
  if (value >= 2 * threshold) return 'critical';
  if (value >= threshold) return 'warning';
  return null;
}

const labels: Record<string, string> = {
  global_qps: 'system-wide requests per second',
  master_rpm: 'requests per minute',
  master_tpm: 'tokens per minute',
  master_rpd: 'requests per day',
  master_tpd: 'tokens per day',
};

function spike(metric: keyof Thresholds, value: number, threshold: number, w: Window, extra: Record<string, unknown>, masterId: number | null): NewAlert | null {
  const severity = level(value, threshold);
  if (!severity) return null;
  const who = masterId === null ? '' : `master ${masterId}: `;
  return {
    type: 'traffic_spike',
    severity,
    fingerprint: masterId === null ? `traffic_spike:${metric}` : `traffic_spike:${metric}:${masterId}`,
    message: `${who}${labels[metric]} ${value} reached the threshold ${threshold} over ${w.name}`,
    metadata: {
      metric,
      value,
      threshold,
      critical_threshold: 2 * threshold,
      window: w.name,
      window_start: new Date(w.from).toISOString(),
      window_end: new Date(w.to).toISOString(),
      ...(masterId === null ? {} : { master_id: masterId }),
      ...extra,
    },
    master_id: masterId,
    source: 'detector',
  };
}

export function trafficSpikes(t: Thresholds, minute: { window: Window; traffic: MasterTraffic[] }, day: { window: Window; traffic: MasterTraffic[] }): NewAlert[] {
  const out: Array<NewAlert | null> = [];
  const seconds = (minute.window.to - minute.window.from) / 1000;
  const requests = minute.traffic.reduce((n, m) => n + m.requests, 0);
  out.push(spike('global_qps', Math.round((requests / seconds) * 100) / 100, t.global_qps, minute.window, { requests }, null));
  for (const m of minute.traffic) {
    if (m.master_id === 0 || m.requests < t.min_samples) continue; // 0: records of no master
    const samples = { samples: m.requests, min_samples: t.min_samples };
    out.push(spike('master_rpm', m.requests, t.master_rpm, minute.window, samples, m.master_id));
    out.push(spike('master_tpm', m.tokens, t.master_tpm, minute.window, samples, m.master_id));
  }
  for (const m of day.traffic) {
    if (m.master_id === 0) continue;
    out.push(spike('master_rpd', m.requests, t.master_rpd, day.window, {}, m.master_id));
    out.push(spike('master_tpd', m.tokens, t.master_tpd, day.window, {}, m.master_id));
  }
  return out.filter((a): a is NewAlert => a !== null);
}
