/**
 * Entry point of a piscina worker thread. It loads the worker actors from the
 * worker module, builds one context per thread (its own Postgres pool, opened
 * by that module, the shared
 * clock, ask/tell) and runs one message per task. Handlers' errors become data
 * so that their type survives the trip back.
 */
import { BroadcastChannel, threadId, workerData } from 'node:worker_threads';
import { AppError, toAppError } from '../../errors.js';
import { createLogger } from '../../logger.js';
import type { ActorDefinition, BaseContext, Envelope, Outcome } from './actor.js';
import { Clock } from './clock.js';
import type { WorkerBootData, WorkerModule } from './system.js';

const boot = workerData as WorkerBootData;
const log = createLogger(boot.config.logLevel).child({ thread: threadId });
const clock = new Clock(boot.clock);

type CrossReply = { kind: 'reply'; to: number; id: number; outcome: Outcome };

const channel = new BroadcastChannel(`actors:${boot.systemId}`);
const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
let nextId = 1;
channel.onmessage = (event) => {
  const msg = (event as MessageEvent).data as CrossReply;
  if (msg.kind !== 'reply' || msg.to !== threadId) return;
  const waiter = pending.get(msg.id);
  if (!waiter) return;
  pending.delete(msg.id);
  if (msg.outcome.ok) waiter.resolve(msg.outcome.value);
  else waiter.reject(AppError.fromData(msg.outcome.error));
};
// Let the thread exit when idle: the channel must not hold it open.
(channel as unknown as { unref?: () => void }).unref?.();

const actors = new Map<string, ActorDefinition<any>>();
let contextPromise: Promise<BaseContext> | undefined;

// Loaded as soon as the thread starts, not on its first task: the threads start while the main thread still opens
// and migrates the stores, so the first asks (the start-up snapshot) find the actors loaded. Awaited by the first
// task, which sees a loading failure as its error.
const loading = (async () => {
  const hosted = (await import(boot.registry)) as WorkerModule;
  const loaded = await Promise.all(Object.entries(hosted.default).map(async ([name, load]) => [name, (await load()).default] as const));
  for (const [name, def] of loaded) actors.set(name, def);
  return hosted;
})();
loading.catch(() => undefined);

async function context(): Promise<BaseContext> {
  contextPromise ??= (async () => {
    const hosted = await loading;
    const db = await hosted.connectDatabase(boot.databaseUrl);
    const ctx: BaseContext = {
      config: boot.config,
      log,
      db,
      now: () => clock.now(),
      ask: <R>(actor: string, type: string, payload?: unknown) => {
        const local = actors.get(actor);
        if (local) return runLocal(local, type, payload, ctx) as Promise<R>;
        return new Promise<R>((resolve, reject) => {
          const id = nextId++;
          pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
          channel.postMessage({ kind: 'ask', from: threadId, id, actor, type, payload });
        });
      },
      tell: (actor, type, payload) => {
        ctx.ask(actor, type, payload).catch((err: unknown) => log.error({ err, actor, type }, 'told message failed'));
      },
    };
    return ctx;
  })();
  return contextPromise;
}

async function runLocal(def: ActorDefinition<any>, type: string, payload: unknown, ctx: BaseContext): Promise<unknown> {
  const handler = def.handlers[type];
  if (!handler) throw new Error(`actor ${def.name} has no handler ${type}`);
  return handler(payload, ctx);
}

export default async function run(envelope: Envelope): Promise<Outcome> {
  try {
    const ctx = await context();
    const def = actors.get(envelope.actor);
    if (!def) throw new Error(`actor ${envelope.actor} is not hosted on workers`);
    return { ok: true, value: await runLocal(def, envelope.type, envelope.payload, ctx) };
  } catch (err) {
    if (!(err instanceof AppError)) log.error({ err, actor: envelope.actor, type: envelope.type }, 'actor failed');
    return { ok: false, error: toAppError(err).toData() };
  }
}

/** The message types each worker actor handles, for the start-up check of the route table (no database needed). */
export async function messages(): Promise<Record<string, string[]>> {
  await loading;
  return Object.fromEntries([...actors].map(([name, def]) => [name, Object.keys(def.handlers)]));
}
