import t from 'tap';
import { Counter, Histogram, Registry } from 'prom-client';
import { RequestMetrics, requestBuckets } from '../../src/metrics/requests.js';

/** The same two metrics as prom-client builds them: the reference layout of /metrics. */
function reference(): { registry: Registry; observe: (route: string, method: string, status: number, seconds: number) => void } {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by route template, method and status', labelNames: ['route', 'method', 'status'], registers });
  const duration = new Histogram({ name: 'http_request_duration_seconds', help: 'HTTP request latency by route template and method', labelNames: ['route', 'method'], buckets: requestBuckets, registers });
  return {
    registry,
    observe: (route, method, status, seconds) => {
      requests.inc({ route, method, status: String(status) });
      duration.observe({ route, method }, seconds);
    },
  };
}

t.test('renders exactly what prom-client renders for the same requests', async (t) => {
  const ref = reference();
  const registry = new Registry();
  const ours = new RequestMetrics(registry);
  t.equal(await registry.metrics(), await ref.registry.metrics(), 'no requests yet');

  // Series appear interleaved across routes and methods; durations on, between and past the bucket bounds.
  const durations = [0, 0.0005, 0.0004, 0.0011, 0.003, 0.1, 0.10000001, 1, 4.99, 5, 7.5, 120, 1e-9, 0.025];
  const requests: Array<[string, string, number]> = [
    ['/logs', 'POST', 202], ['/admin/masters/{id}', 'GET', 200], ['/logs', 'POST', 400], ['/admin/masters/{id}', 'PUT', 200],
    ['(unknown)', 'GET', 404], ['/logs', 'POST', 202], ['/admin/masters/{id}', 'GET', 404], ['(aborted)', 'POST', 499],
    ['/a "quoted"\\path', 'DELETE', 204],
  ];
  let n = 0;
  for (let round = 0; round < 7; round++) {
    for (const [route, method, status] of requests) {
      const seconds = durations[n++ % durations.length]!;
      ref.observe(route, method, status, seconds);
      ours.observe(route, method, status, seconds);
    }
  }
  const expected = await ref.registry.metrics();
  t.equal(await registry.metrics(), expected);
  t.match(expected, 'http_requests_total{route="/logs",method="POST",status="202"} 14', 'the comparison covers real series');
  t.match(expected, 'http_request_duration_seconds_bucket{le="+Inf",route="/logs",method="POST"} 21');

  registry.resetMetrics();
  ref.registry.resetMetrics();
  ours.observe('/logs', 'POST', 202, 0.002);
  ref.observe('/logs', 'POST', 202, 0.002);
  t.equal(await registry.metrics(), await ref.registry.metrics(), 'after a reset');
});
