/**
 * Times the stages of start-up and logs each at debug level with its duration and its end since the start, so that
 * an operator (SVC_LOG_LEVEL=debug) sees where a slow start goes. Stages may overlap: those that run in parallel
 * each report their own duration; `total_ms` of the last line is the time to listening.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from './logger.js';

export interface StartupStages {
  /** Runs `fn` as the stage `name` and logs its duration when it ends (also when it fails). */
  stage<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  /** Logs the end of start-up, with every stage's duration. */
  done(): void;
}

export function startupStages(log: Logger, now: () => number = () => performance.now()): StartupStages {
  const started = now();
  const durations: Record<string, number> = {};
  const ms = (t: number): number => Math.round(t * 10) / 10;
  return {
    async stage(name, fn) {
      const t0 = now();
      try {
        return await fn();
      } finally {
        const end = now();
        durations[name] = ms(end - t0);
        log.debug({ stage: name, duration_ms: durations[name], at_ms: ms(end - started) }, 'start-up stage');
      }
    },
    done() {
      // process_ms also counts what ran before the first stage: node itself and loading the service's modules.
      log.debug({ total_ms: ms(now() - started), process_ms: ms(process.uptime() * 1000), stages: durations }, 'start-up done');
    },
  };
}
