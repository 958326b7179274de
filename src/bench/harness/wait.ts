/** Polls until a condition holds or time runs out; resolves with the last value read. */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T, previous: T | undefined) => boolean,
  opts: { everyMs?: number; timeoutMs?: number } = {},
): Promise<{ value: T; met: boolean; at: number }> {
  const every = opts.everyMs ?? 100;
  const deadline = performance.now() + (opts.timeoutMs ?? 120_000);
  let previous: T | undefined;
  for (;;) {
    const value = await read();
    const at = performance.now();
    if (done(value, previous)) return { value, met: true, at };
    if (at >= deadline) return { value, met: false, at };
    previous = value;
    await new Promise((r) => setTimeout(r, every));
  }
}
