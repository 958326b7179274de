/**
 * Money as every view shows it: an amount in the service's currency unit (exact figure on hover), the
 * warning that some records had no price (counted as 0, with the way to the models view where prices are
 * set), and a budget with its spend and period (docs/spend.md).
 */
import { href } from '../router';
import { session } from '../session';
import { Field, Link, Tile, Time } from '../ui/components';
import { money, moneyExact, num, pct } from '../ui/format';

export const Money = ({ n }: { n: number | null | undefined }) => (
  <span class="num money" title={n === null || n === undefined ? undefined : `${moneyExact(n)} (currency unit)`}>
    {money(n)}
  </span>
);

/** "N records without a price: counted as 0", shown only when there are some; the admin gets the link to set prices. */
export function Unpriced({ n }: { n: number | null | undefined }) {
  if (!n) return null;
  const admin = session.get().identity?.type === 'admin';
  return (
    <span class="unpriced" data-testid="unpriced">
      {num(n)} {n === 1 ? 'record' : 'records'} without a price: counted as 0
      {admin && (
        <>
          {' '}
          · <Link to={href('/models')}>set prices</Link>
        </>
      )}
    </span>
  );
}

export interface BudgetFields {
  budget?: number | null;
  budget_period?: string;
  budget_period_start?: string | null;
  budget_used?: number;
}

/** "used / budget per period" with the share spent, or "none". */
export function Budget({ b }: { b: BudgetFields }) {
  if (b.budget === null || b.budget === undefined) return <span class="muted">none</span>;
  const share = b.budget > 0 ? (b.budget_used ?? 0) / b.budget : (b.budget_used ?? 0) > 0 ? 1 : 0;
  return (
    <span class={`budget ${share >= 1 ? 'bad' : share >= 0.8 ? 'warn' : ''}`} data-testid="budget">
      <Money n={b.budget_used ?? 0} /> / <Money n={b.budget} /> <span class="muted">{periodLabel(b.budget_period)}</span>{' '}
      <span class="muted">({pct(share, 0)})</span>
    </span>
  );
}

const periodLabel = (p: string | undefined) => (!p || p === 'never' ? 'in all' : p === 'daily' ? 'per day' : p === 'weekly' ? 'per week' : 'per month');

/** A master's budget as two tiles: the limit with its period (and since when it counts), and the period's spend. */
export function BudgetTiles({ b }: { b: BudgetFields }) {
  const none = b.budget === null || b.budget === undefined;
  const share = none ? 0 : b.budget! > 0 ? (b.budget_used ?? 0) / b.budget! : (b.budget_used ?? 0) > 0 ? 1 : 0;
  return (
    <div class="tiles" data-testid="master-budget">
      <Tile
        label="Budget"
        value={none ? 'none' : <Money n={b.budget} />}
        sub={
          none ? undefined : (
            <>
              {periodLabel(b.budget_period)}
              {b.budget_period_start && (
                <>
                  {' '}
                  since <Time t={b.budget_period_start} />
                </>
              )}
            </>
          )
        }
      />
      <Tile
        label="Spent this period"
        value={<Money n={b.budget_used ?? 0} />}
        sub={none ? 'no budget to spend against' : <span class={share >= 1 ? 'bad' : share >= 0.8 ? 'warn' : ''}>{pct(share, 0)} of the budget</span>}
      />
    </div>
  );
}

const periods = ['never', 'daily', 'weekly', 'monthly'];

/** The budget's inputs in a master's or key's form: empty amount is no budget; a period change starts at its boundary. */
export function BudgetInputs({ errors, current }: { errors: Record<string, string>; current?: BudgetFields }) {
  return (
    <>
      <Field label="Budget (currency unit; empty: none)" name="budget" error={errors.budget} hint="requests are refused once the period's spend reaches it">
        <input name="budget" inputMode="decimal" data-type="number" data-empty="null" defaultValue={current?.budget === null || current?.budget === undefined ? '' : moneyExact(current.budget)} />
      </Field>
      <Field label="Budget period" name="budget_period" error={errors.budget_period}>
        <select name="budget_period" defaultValue={current?.budget_period ?? 'never'}>
          {periods.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </Field>
    </>
  );
}
