/**
 * A route names its handler by a handle, and start-up checks every handle
 * against the actors that run: the real route table reaches a handler on every
 * actor route, and a route pointing at no handler stops the service with one
 * line, before it listens.
 */
import t from 'tap';
import { startTestService } from '../helpers/harness.js';
import { allRoutes } from '../../src/http/routes/index.js';
import { actorRoute, handleOf, isActorRoute, isRawRoute, takesNdjson } from '../../src/http/route.js';
import { unansweredRoutes } from '../../src/http/route-handles.js';
import { handles } from '../../src/contract/handle.js';
import { masters, tenancyUsage } from '../../src/actors/tenancy/handles.js';
import { logs } from '../../src/actors/logs/handles.js';
import { compileRoutes } from '../../src/http/compile.js';

t.test('every actor route of the table reaches a handler of a running actor', async (t) => {
  const svc = await startTestService();
  t.teardown(() => svc.stop());
  const messages = await svc.service.system.messages();
  const routes = allRoutes(svc.service.build);
  const actorRoutes = routes.filter(isActorRoute);
  t.ok(actorRoutes.length > 60, `${actorRoutes.length} actor routes checked`);
  t.same(unansweredRoutes(routes, messages), []);
  t.ok(messages.get('masters')?.has('create'), 'worker actors are described by a worker thread');
  t.ok(messages.get('logs')?.has('list'), 'main actors by their definitions');
  // A handle the actor does not answer is found, whether the message or the actor is missing.
  const stray = handles('masters', { vanish: {} });
  const ghost = handles('ghosts', { list: {} });
  const spec = { role: 'admin' as const, tags: ['x'], summary: 'x', success: { status: 200, schema: null } };
  t.same(
    unansweredRoutes([actorRoute(stray.vanish, { ...spec, method: 'POST', path: '/a' }), actorRoute(ghost.list, { ...spec, method: 'GET', path: '/b' })], messages),
    ['POST /a -> masters.vanish', 'GET /b -> ghosts.list'],
  );
});

t.test('a route that points at no handler stops start-up with one line', async (t) => {
  const stray = handles('masters', { vanish: { body: { type: 'object' } } });
  const started = startTestService({
    routes: (build) => [
      ...allRoutes(build),
      actorRoute(stray.vanish, { method: 'POST', path: '/admin/vanish', role: 'admin', tags: ['masters'], summary: 'none', success: { status: 200, schema: null } }),
    ],
  });
  const err = await started.then(
    (svc) => svc.stop().then(() => null),
    (e: unknown) => e as Error,
  );
  t.ok(err instanceof Error, 'start-up failed');
  t.equal(err!.message, 'routes point at no handler: POST /admin/vanish -> masters.vanish');
  t.notMatch(err!.message, /\n/, 'one line');
});

t.test('a route takes its schemas from its handle', async (t) => {
  const r = allRoutes({ name: 'n', version: 'v', description: 'd', repository: 'r', commit: 'c' }).find((x) => x.method === 'POST' && x.path === '/admin/masters')!;
  t.ok(isActorRoute(r));
  if (!isActorRoute(r)) return;
  t.equal(handleOf(r), masters.create);
  t.equal(r.body, masters.create.input.body, 'the validator and the document read the schema the handler type is inferred from');
});

t.test('the raw-body routes declare their parser in their handle', async (t) => {
  const routes = allRoutes({ name: 'n', version: 'v', description: 'd', repository: 'r', commit: 'c' });
  const ingest = routes.find((r) => r.method === 'POST' && r.path === '/logs')!;
  t.ok(isRawRoute(ingest) && ingest.ingests === logs.ingest, 'POST /logs hands its bytes to logs.ingest');
  t.equal(logs.ingest.input.parser, 'ndjson');
  t.equal(ingest.body, logs.ingest.input.body, 'the document shows the declaration the records are validated with');
  t.same(routes.filter(takesNdjson).map((r) => `${r.method} ${r.path}`), ['POST /logs'], 'only it takes NDJSON');
  const flush = compileRoutes(routes).find((c) => c.route.path === '/internal/stats/flush')!;
  t.equal(tenancyUsage.flush.input.parser, 'bytes');
  t.ok(flush.bodyToWorker, 'the flush body goes to the worker as bytes');
  t.notOk(flush.validateBody, 'and is not validated on the HTTP thread (the worker validates it: test/tenancy/usage.test.ts)');
  t.same(compileRoutes(routes).filter((c) => c.bodyToWorker).map((c) => c.route.path), ['/internal/stats/flush']);
});
