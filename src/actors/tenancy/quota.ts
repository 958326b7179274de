/** Quota periods: UTC boundaries of decisions.md's quota_reset_type values. */
export const resetTypes = ['never', 'daily', 'weekly', 'monthly'] as const;
export type ResetType = (typeof resetTypes)[number];

/** Start (ISO) of the period containing `nowMs`; null for `never`. Weeks start on Monday. */
export function periodStart(type: string, nowMs: number): string | null {
  const d = new Date(nowMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.getUTCDate();
  switch (type) {
    case 'daily':
      return new Date(Date.UTC(y, m, day)).toISOString();
    case 'weekly':
      return new Date(Date.UTC(y, m, day - ((d.getUTCDay() + 6) % 7))).toISOString();
    case 'monthly':
      return new Date(Date.UTC(y, m, 1)).toISOString();
    default:
      return null;
  }
}
