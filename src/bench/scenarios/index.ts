/** Every scenario by name, in the order `npm run bench` runs them. */
import type { ScenarioResult } from '../harness/results.js';
import type { ScenarioOptions } from './options.js';
import { ingestSingle } from './ingest-single.js';
import { ingestFloor } from './ingest-floor.js';
import { ingestBatch } from './ingest-batch.js';
import { statsFlush } from './stats-flush.js';
import { dashboards } from './dashboards.js';
import { whoami } from './whoami.js';
import { consoleScenario } from './console.js';
import { logsList } from './logs-list.js';
import { ingestHistory } from './ingest-history.js';
import { retentionScale } from './retention-scale.js';

export const scenarios: Record<string, (opts: ScenarioOptions) => Promise<ScenarioResult>> = {
  'ingest-single': ingestSingle,
  'ingest-floor': ingestFloor,
  'ingest-batch': ingestBatch,
  'stats-flush': statsFlush,
  whoami,
  dashboards,
  console: consoleScenario,
  'logs-list': logsList,
  'ingest-history': ingestHistory,
  'retention-scale': retentionScale,
};
