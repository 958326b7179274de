/**
 * http_requests_total and http_request_duration_seconds: one observation per
 * request. prom-client's Counter and Histogram hash and validate the label set
 * on every call (their `labels()` children too: they only bind the labels),
 * ~1.4 µs a request, mostly the histogram. Here a (route, method) and a status
 * resolve their series once; a request then adds to plain numbers. The
 * registry renders both through the collector interface it calls on every
 * metric (`get()`), in prom-client's own layout, so /metrics reads exactly as
 * with prom-client's metrics (test/metrics/requests.test.ts compares them).
 */
import type { Metric, Registry } from 'prom-client';

export const requestBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface StatusSeries {
  labels: { route: string; method: string; status: string };
  value: number;
}

/** One (route, method): its latency histogram and its statuses. */
interface RouteSeries {
  labels: { route: string; method: string };
  /** Observations per bucket (not cumulative), as prom-client keeps them. */
  buckets: number[];
  sum: number;
  count: number;
  statuses: Map<number, StatusSeries>;
}

/** prom-client's value record: `metricName` defaults to the metric's name. */
interface Value {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

export class RequestMetrics {
  private byRoute = new Map<string, Map<string, RouteSeries>>();
  /** Series in the order they appeared: prom-client lists them so. */
  private routeSeries: RouteSeries[] = [];
  private statusSeries: StatusSeries[] = [];

  constructor(registry: Registry) {
    const reset = (): void => {
      this.byRoute = new Map();
      this.routeSeries = [];
      this.statusSeries = [];
    };
    const collector = (name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]) =>
      ({ name, help, type, aggregator: 'sum', reset, get: async () => ({ name, help, type, aggregator: 'sum', values: values() }) }) as unknown as Metric;
    registry.registerMetric(
      collector('http_requests_total', 'HTTP requests by route template, method and status', 'counter', () =>
        this.statusSeries.map((s) => ({ labels: s.labels, value: s.value })),
      ),
    );
    registry.registerMetric(
      collector('http_request_duration_seconds', 'HTTP request latency by route template and method', 'histogram', () =>
        this.routeSeries.flatMap((s) => histogramValues('http_request_duration_seconds', s)),
      ),
    );
  }

  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map()));
    let series = byMethod.get(method);
    if (!series) {
      series = { labels: { route, method }, buckets: requestBuckets.map(() => 0), sum: 0, count: 0, statuses: new Map() };
      byMethod.set(method, series);
      this.routeSeries.push(series);
    }
    let counted = series.statuses.get(status);
    if (!counted) {
      counted = { labels: { route, method, status: String(status) }, value: 0 };
      series.statuses.set(status, counted);
      this.statusSeries.push(counted);
    }
    counted.value++;
    series.sum += seconds;
    series.count++;
    // Like prom-client: the first bucket whose bound holds the value; past the last, only +Inf (the count).
    for (let i = 0; i < requestBuckets.length; i++) {
      if (seconds <= requestBuckets[i]!) {
        series.buckets[i]!++;
        break;
      }
    }
  }
}

/** Cumulative buckets, +Inf, sum and count of one series, labels as prom-client orders them (`le` first). */
function histogramValues(name: string, s: RouteSeries): Value[] {
  const out: Value[] = [];
  let cumulative = 0;
  for (let i = 0; i < requestBuckets.length; i++) {
    cumulative += s.buckets[i]!;
    out.push({ labels: { le: requestBuckets[i]!, ...s.labels }, value: cumulative, metricName: `${name}_bucket` });
  }
  out.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${name}_bucket` });
  out.push({ labels: { ...s.labels }, value: s.sum, metricName: `${name}_sum` });
  out.push({ labels: { ...s.labels }, value: s.count, metricName: `${name}_count` });
  return out;
}
