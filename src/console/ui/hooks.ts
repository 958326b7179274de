/** Loading data for a view: loading, error and data states, optional refresh, aborted when the view goes. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
}

export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[], refreshMs = 0): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    loadRef.current(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, loading: false }),
      (err) => {
        if (ctl.signal.aborted || (err as Error).name === 'AbortError') return;
        setState({ error: err instanceof ApiError ? err : new ApiError(0, 'client', String(err), {}, ''), loading: false });
      },
    );
    return () => ctl.abort();
  }, [...deps, tick]);
  useEffect(() => {
    if (!refreshMs) return;
    const id = setInterval(() => document.visibilityState === 'visible' && reload(), refreshMs);
    return () => clearInterval(id);
  }, [refreshMs]);
  return { ...state, reload } as Loaded<T>;
}

/** Runs an action (a write), keeping its error for the form or the dialog that started it. */
export function useAction<A extends unknown[], T>(run: (...args: A) => Promise<T>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const go = async (...args: A): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await run(...args);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, 'client', String(err), {}, ''));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { go, busy, error, clear: () => setError(undefined) };
}
