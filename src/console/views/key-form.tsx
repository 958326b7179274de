/** The child-key form shared by the admin (a master's page) and the tenant (own keys). */
import { Field } from '../ui/components';
import { ApiForm } from '../ui/form';
import { BudgetInputs, type BudgetFields } from './money';

export interface KeyDefaults extends BudgetFields {
  name?: string;
  quota_limit?: number;
  quota_reset_type?: string;
  model_limits?: string;
  allow_ips?: string;
  expires_at?: string | null;
  status?: string;
}

export function KeyForm({ onSubmit, cancel, label, defaults, edit }: {
  onSubmit: (body: any) => Promise<unknown>;
  cancel: () => void;
  label: string;
  defaults?: KeyDefaults;
  edit?: boolean;
}) {
  const d = defaults ?? {};
  return (
    <ApiForm
      label={label}
      submitLabel={edit ? 'Save' : 'Issue'}
      cancel={cancel}
      onSubmit={(body) => {
        if (body.expires_at) body.expires_at = new Date(String(body.expires_at)).toISOString();
        if (body.model_limits) body.model_limits_enabled = true;
        return onSubmit(body);
      }}
    >
      {(e) => (
        <>
          <Field label="Name" name="name" error={e.name}>
            <input name="name" defaultValue={d.name ?? ''} />
          </Field>
          <Field label="Quota (total tokens, -1 unlimited)" name="quota_limit" error={e.quota_limit}>
            <input name="quota_limit" type="number" min={-1} defaultValue={d.quota_limit?.toString() ?? ''} />
          </Field>
          <Field label="Quota resets" name="quota_reset_type" error={e.quota_reset_type}>
            <select name="quota_reset_type" defaultValue={d.quota_reset_type ?? ''}>
              <option value="">(default)</option>
              <option value="never">never</option>
              <option value="daily">daily</option>
              <option value="weekly">weekly</option>
              <option value="monthly">monthly</option>
            </select>
          </Field>
          <BudgetInputs errors={e} current={edit ? d : undefined} />
          <Field label="Models allowed (comma-separated, empty: all)" name="model_limits" error={e.model_limits}>
            <input name="model_limits" defaultValue={d.model_limits ?? ''} />
          </Field>
          <Field label="Allowed IPs / CIDRs" name="allow_ips" error={e.allow_ips} hint="client addresses can be spoofed behind untrusted proxies">
            <input name="allow_ips" defaultValue={d.allow_ips ?? ''} />
          </Field>
          <Field label="Expires (local time)" name="expires_at" error={e.expires_at}>
            <input name="expires_at" type="datetime-local" />
          </Field>
          {edit && (
            <Field label="Status" name="status" error={e.status}>
              <select name="status" defaultValue={d.status ?? 'active'}>
                <option value="active">active</option>
                <option value="suspended">suspended</option>
              </select>
            </Field>
          )}
        </>
      )}
    </ApiForm>
  );
}
