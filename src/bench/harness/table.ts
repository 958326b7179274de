/** Prints rows as an aligned text table. */
export function printTable(title: string, rows: Array<[string, string | number]>): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `  ${k.padEnd(width)}  ${typeof v === 'number' ? fmt(v) : v}`);
  const rule = '-'.repeat(Math.max(title.length, ...lines.map((l) => l.length)));
  process.stdout.write(`\n${title}\n${rule}\n${lines.join('\n')}\n${rule}\n`);
}

/** Integers with thousands separators, fractions to three significant decimals. */
export function fmt(n: number): string {
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  return n.toFixed(Math.abs(n) >= 10 ? 1 : 3);
}

export const pct = (ratio: number): string => `${(ratio * 100).toFixed(1)}%`;
export const mb = (bytes: number | null): string => (bytes === null ? 'n/a' : `${(bytes / 1e6).toFixed(0)} MB`);
