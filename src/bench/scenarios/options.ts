/** What `npm run bench` passes every scenario. */
export interface ScenarioOptions {
  /** Seconds per measured run (default 10). */
  seconds?: number;
  /** Paired rounds of service and ceiling (default 3). */
  rounds?: number;
  /** Extra node flags for the service process, e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** Extra environment for the service process, e.g. SVC_DATA_DIR of a store with history (ingest-history). */
  serviceEnv?: Record<string, string>;
}
