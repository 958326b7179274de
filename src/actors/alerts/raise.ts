/**
 * Raising automatic alerts (the detector and the data plane's reports): one
 * open alert per fingerprint, and a fingerprint raised within the 5-minute
 * cooldown of its previous alert is dropped. A drop on an open alert still
 * counts it (occurrences, last_seen_at, latest details, higher severity), so
 * the operator sees that the condition goes on.
 */
import type { CommonQueryMethods } from 'slonik';
import { insertAlert, latestAlert, lockFingerprint, touchAlert, type NewAlert } from '../../storage/postgres/alerts.js';
import { DEDUP_COOLDOWN_MS, openStatuses, severityRank } from './values.js';

export interface RaiseResult {
  accepted: number;
  deduplicated: number;
  /** Ids of the alerts created. */
  ids: number[];
}

export async function raiseAlerts(db: CommonQueryMethods, candidates: NewAlert[], now: number): Promise<RaiseResult> {
  const at = new Date(now).toISOString();
  // Locks are taken in fingerprint order so two concurrent batches cannot deadlock; the sort is stable,
  // so the first of several equal fingerprints in a batch is the one accepted.
  const ordered = [...candidates].sort((a, b) => (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0));
  return db.transaction(async (tx) => {
    const result: RaiseResult = { accepted: 0, deduplicated: 0, ids: [] };
    for (const c of ordered) {
      await lockFingerprint(tx, c.fingerprint);
      const latest = await latestAlert(tx, c.fingerprint);
      const open = latest !== null && openStatuses.includes(latest.status);
      if (latest && (open || Date.parse(latest.createdAt) > now - DEDUP_COOLDOWN_MS)) {
        if (open) {
          const severity = severityRank(c.severity) > severityRank(latest.severity) ? c.severity : latest.severity;
          await touchAlert(tx, latest.id, { severity, message: c.message, metadata: c.metadata }, at);
        }
        result.deduplicated++;
        continue;
      }
      const row = await insertAlert(tx, c, at);
      if (row) {
        result.accepted++;
        result.ids.push(row.id);
      } else result.deduplicated++; // an admin opened one meanwhile (admin creation takes no lock)
    }
    return result;
  });
}
