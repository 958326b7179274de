/**
 * The actor system: one address space for main-thread actors (mailboxes on
 * the event loop) and worker actors (a piscina pool). ask/tell look the same
 * whatever the placement; typed errors come back as AppError; a crashed worker
 * is replaced by piscina and its in-flight asks fail with `unavailable`.
 */
import { BroadcastChannel } from 'node:worker_threads';
import { randomUUID } from 'node:crypto';
import { Piscina } from 'piscina';
import { AppError, toAppError, type ErrorData } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { ActorDefinition, BaseContext, Envelope, Outcome } from './actor.js';
import { Mailbox } from './mailbox.js';
import type { Clock } from './clock.js';
import type { Config } from '../../config/settings.js';
import type { DatabasePool } from 'slonik';

/** What a worker thread needs to build its own context. */
export interface WorkerBootData {
  systemId: string;
  config: Config;
  databaseUrl: string;
  clock: SharedArrayBuffer;
  /** URL of the worker module (`WorkerModule`): the actors to host and how to open the thread's Postgres pool. */
  registry: string;
}

/**
 * What a worker thread imports from `WorkerBootData.registry`. The runtime
 * knows no store: the module that names the actors also says how a thread
 * connects to Postgres (src/actors/registry.ts).
 */
export interface WorkerModule {
  /** Actor names to loaders. */
  default: Record<string, () => Promise<{ default: ActorDefinition<any> }>>;
  /** Opens this thread's own Postgres pool. */
  connectDatabase(url: string): Promise<DatabasePool>;
}

export interface SystemOptions {
  log: Logger;
  clock: Clock;
  config: Config;
  databaseUrl: string;
  /** Names of the actors hosted on workers (keys of the registry module). */
  workerActors: string[];
  registry: string;
  threads: number;
}

interface MainActor {
  def: ActorDefinition<any>;
  ctx: BaseContext;
  mailbox: Mailbox;
}

type CrossAsk = { kind: 'ask'; from: number; id: number; actor: string; type: string; payload: unknown };
type CrossReply = { kind: 'reply'; to: number; id: number; outcome: Outcome };

export class ActorSystem {
  readonly id = randomUUID();
  private readonly main = new Map<string, MainActor>();
  private readonly workerNames: Set<string>;
  private readonly pool: Piscina;
  private readonly channel: BroadcastChannel;
  private stopping = false;
  workerFailures = 0;

  constructor(private readonly opts: SystemOptions) {
    this.workerNames = new Set(opts.workerActors);
    const workerData: WorkerBootData = {
      systemId: this.id,
      config: opts.config,
      databaseUrl: opts.databaseUrl,
      clock: opts.clock.shared,
      registry: opts.registry,
    };
    this.pool = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      minThreads: opts.threads,
      maxThreads: opts.threads,
      idleTimeout: 2 ** 31 - 1,
      concurrentTasksPerWorker: 16,
      workerData,
    });
    this.pool.on('error', (err: unknown) => {
      this.workerFailures++;
      opts.log.error({ err }, 'worker thread failed; piscina replaces it');
    });
    // Workers ask main-thread actors over a channel private to this system.
    this.channel = new BroadcastChannel(`actors:${this.id}`);
    this.channel.onmessage = (event) => void this.answerWorker((event as MessageEvent).data as CrossAsk | CrossReply);
  }

  /** Registers a main-thread actor with the context its handlers receive. */
  register<Ctx extends BaseContext>(def: ActorDefinition<Ctx>, ctx: Ctx): void {
    if (def.placement !== 'main') throw new Error(`actor ${def.name} is not placed on the main thread`);
    if (this.main.has(def.name) || this.workerNames.has(def.name)) throw new Error(`two actors are named ${def.name}`);
    this.main.set(def.name, { def, ctx, mailbox: new Mailbox(def.concurrency ?? 1) });
  }

  /** The ask/tell pair bound to this system, for contexts. */
  get messaging(): Pick<BaseContext, 'ask' | 'tell'> {
    return { ask: (a, t, p) => this.ask(a, t, p), tell: (a, t, p) => this.tell(a, t, p) };
  }

  /** Starts the main actors in order of registration; `timed` wraps each start (start-up stages). */
  async start(timed: (name: string, start: () => Promise<void>) => Promise<void> = (_, start) => start()): Promise<void> {
    for (const { def, ctx } of this.main.values()) if (def.start) await timed(def.name, async () => def.start!(ctx));
  }

  ask<R = unknown>(actor: string, type: string, payload?: unknown): Promise<R> {
    const local = this.main.get(actor);
    if (local) {
      const handler = local.def.handlers[type];
      if (!handler) return Promise.reject(new Error(`actor ${actor} has no handler ${type}`));
      return local.mailbox.post(() => handler(payload, local.ctx)) as Promise<R>;
    }
    if (this.workerNames.has(actor)) return this.askWorker<R>({ actor, type, payload });
    return Promise.reject(new Error(`unknown actor ${actor}`));
  }

  tell(actor: string, type: string, payload?: unknown): void {
    this.ask(actor, type, payload).catch((err: unknown) => {
      this.opts.log.error({ err, actor, type }, 'told message failed');
    });
  }

  /**
   * The message types every actor handles, by actor name: main actors from
   * their definitions, worker actors as a worker thread loaded them.
   */
  async messages(): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    for (const [name, a] of this.main) out.set(name, new Set(Object.keys(a.def.handlers)));
    if (this.workerNames.size === 0) return out;
    const hosted = (await this.pool.run(null, { name: 'messages' })) as Record<string, string[]>;
    for (const name of this.workerNames) out.set(name, new Set(hosted[name] ?? []));
    return out;
  }

  /** Mailbox depth per main actor and queued tasks of the worker pool: for /metrics. */
  depths(): Record<string, number> {
    const out: Record<string, number> = { workers: this.pool.queueSize };
    for (const [name, a] of this.main) out[name] = a.mailbox.depth;
    return out;
  }

  /**
   * Graceful stop: worker tasks finish first (they may still ask main actors),
   * then main actors stop in reverse order of registration and their
   * mailboxes drain.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await this.pool.close();
    for (const { def, ctx, mailbox } of [...this.main.values()].reverse()) {
      await mailbox.drain();
      await def.stop?.(ctx);
      await mailbox.drain();
    }
    this.channel.close();
  }

  private async askWorker<R>(envelope: Envelope): Promise<R> {
    let outcome: Outcome;
    try {
      outcome = (await this.pool.run(envelope)) as Outcome;
    } catch (err) {
      // The worker died under this task (or the pool is closed): fail cleanly.
      this.opts.log.error({ err, actor: envelope.actor, type: envelope.type }, 'worker task failed');
      throw new AppError('unavailable', `actor ${envelope.actor} is restarting; retry the request`, {}, { 'Retry-After': '1' });
    }
    if (outcome.ok) return outcome.value as R;
    throw AppError.fromData(outcome.error);
  }

  private async answerWorker(msg: CrossAsk | CrossReply): Promise<void> {
    if (msg.kind !== 'ask') return;
    let outcome: Outcome;
    try {
      outcome = { ok: true, value: await this.ask(msg.actor, msg.type, msg.payload) };
    } catch (err) {
      const error: ErrorData = toAppError(err).toData();
      if (!(err instanceof AppError)) this.opts.log.error({ err, actor: msg.actor, type: msg.type }, 'actor failed');
      outcome = { ok: false, error };
    }
    const reply: CrossReply = { kind: 'reply', to: msg.from, id: msg.id, outcome };
    this.channel.postMessage(reply);
  }
}
