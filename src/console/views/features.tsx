/** Feature flags: each with an input fitting its type; only changed flags are sent; a 400 shows at its field. */
import { useState } from 'preact/hooks';
import { api } from '../session';
import { Async, Field } from '../ui/components';
import { useApi } from '../ui/hooks';
import { ApiForm } from '../ui/form';

export function Features() {
  const flags = useApi((signal) => api.get('/admin/features', { signal }), []);
  const [saved, setSaved] = useState('');
  return (
    <section>
      <h1>Features</h1>
      <p class="muted">Flags take effect on this node before the answer and reach the data plane through the shared store.</p>
      <Async state={flags}>
        {(f) => (
          <ApiForm
            label="feature flags"
            submitLabel="Save changes"
            onSubmit={async (body) => {
              setSaved('');
              const changed: Record<string, unknown> = {};
              for (const [k, v] of Object.entries(body)) if ((f as Record<string, unknown>)[k] !== v) changed[k] = v;
              if (Object.keys(changed).length === 0) return setSaved('Nothing changed.');
              await api.put('/admin/features', { body: changed });
              setSaved(`Saved: ${Object.keys(changed).join(', ')}.`);
              flags.reload();
            }}
          >
            {(errors) => (
              <>
                {Object.entries(f).map(([name, value]) => (
                  <Field key={`${name}:${String(value)}`} label={name} name={name} error={errors[name]}>
                    {typeof value === 'boolean' ? (
                      <input type="checkbox" name={name} defaultChecked={value} />
                    ) : typeof value === 'number' ? (
                      <input type="text" inputMode="numeric" name={name} defaultValue={String(value)} />
                    ) : (
                      <input type="text" name={name} defaultValue={String(value)} />
                    )}
                  </Field>
                ))}
                {saved && (
                  <p class="saved" role="status">
                    {saved}
                  </p>
                )}
              </>
            )}
          </ApiForm>
        )}
      </Async>
    </section>
  );
}
