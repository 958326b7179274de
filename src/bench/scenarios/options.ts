/** What `npm run bench` passes every scenario. */
export interface ScenarioOptions {
  /** Seconds per measured run (default 10). */
  seconds?: number;
  /** Paired rounds of service and ceiling (default 3). */
  rounds?: number;
  /** Extra node flags for the service process, e.g. --cpu-prof. */
  nodeArgs?: string[];
}
