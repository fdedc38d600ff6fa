import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import Redis from 'ioredis';
import { Client as PgClient } from 'pg';
import { GatekeeperModule, GatekeeperService, ScheduleHandler, TaskService } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { declareTestPrefix, testBackendOptions, type TestBackend } from '../support/test-backends';
import { uniquePrefix } from '../support/test-cluster';

// The client's map proxy, where every Hazelcast map operation starts (its typings export nothing of it).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MapProxy } = require('hazelcast-client/lib/proxy/MapProxy') as { MapProxy: { prototype: Record<string, unknown> } };

const TOKEN = 'hostile-names-token-0123456789';


/** Names no backend may be handed: each refused with 400 before any store call, the problem named. */
const REFUSED: ReadonlyArray<readonly [string, string, RegExp]> = [
  ['NUL', 'bad\u0000name', /must not contain control characters \(U\+0000 at index 3\)/],
  ['a line feed', 'bad\nname', /control characters \(U\+000A at index 3\)/],
  ['an escape (C0)', 'bad\u001b[2Jname', /control characters \(U\+001B at index 3\)/],
  ['DEL', 'bad\u007fname', /control characters \(U\+007F at index 3\)/],
  ['a C1 control (CSI)', 'bad\u009bname', /control characters \(U\+009B at index 3\)/],
  ['1 KB of letters', 'n'.repeat(1024), /must be at most \d+ characters, got 1024/],
];

/** A lone surrogate is no text UTF-8 can carry, and no URL can: it comes in JSON bodies only (`"\ud800"`). */
const LONE_SURROGATE: readonly [string, string, RegExp] = ['a lone surrogate', 'bad\ud800name', /well-formed Unicode text \(a lone surrogate U\+D800 at index 3\)/];

/** Names that look dangerous but are names: every backend stores and reads them back as they are. */
const ODD_BUT_FINE = [
  'Zahlläufe-😀',
  '請求',
  `it's "quoted"`,
  "x'; DROP TABLE records; --",
  "]]..redis.call('FLUSHALL')..[[ --",
  '{braces} and spaces',
];

/** One admin request with a hostile value at `field` (a path parameter or a body's field). */
interface HostileRoute {
  readonly route: string;
  readonly request: (name: string) => { method: string; path: string; body?: unknown };
  readonly field: string;
}

const e = encodeURIComponent;

/** Every admin route a name enters by its path. */
const PATH_ROUTES: HostileRoute[] = [
  { route: 'GET /definitions/{name}', request: (n) => ({ method: 'GET', path: `/definitions/${e(n)}` }), field: 'name' },
  { route: 'PUT /definitions/{name}', request: (n) => ({ method: 'PUT', path: `/definitions/${e(n)}`, body: { duration: '30s' } }), field: 'name' },
  { route: 'PATCH /definitions/{name}', request: (n) => ({ method: 'PATCH', path: `/definitions/${e(n)}`, body: { permits: 2 } }), field: 'name' },
  { route: 'DELETE /definitions/{name}', request: (n) => ({ method: 'DELETE', path: `/definitions/${e(n)}` }), field: 'name' },
  { route: 'POST /definitions/{name}/pause', request: (n) => ({ method: 'POST', path: `/definitions/${e(n)}/pause` }), field: 'name' },
  { route: 'POST /definitions/{name}/resume', request: (n) => ({ method: 'POST', path: `/definitions/${e(n)}/resume` }), field: 'name' },
  { route: 'DELETE /permits/{name}/{token}', request: (n) => ({ method: 'DELETE', path: `/permits/${e(n)}/1` }), field: 'name' },
  { route: 'GET /elections/{name}', request: (n) => ({ method: 'GET', path: `/elections/${e(n)}` }), field: 'election' },
  { route: 'POST /elections/{name}/resign', request: (n) => ({ method: 'POST', path: `/elections/${e(n)}/resign` }), field: 'election' },
  { route: 'GET /allocations/{name}', request: (n) => ({ method: 'GET', path: `/allocations/${e(n)}` }), field: 'allocation' },
  { route: 'POST /allocations/{name}/rebalance', request: (n) => ({ method: 'POST', path: `/allocations/${e(n)}/rebalance` }), field: 'allocation' },
  { route: 'GET /tasks/{id}', request: (n) => ({ method: 'GET', path: `/tasks/${e(n)}` }), field: 'id' },
  { route: 'POST /tasks/{id}/retry', request: (n) => ({ method: 'POST', path: `/tasks/${e(n)}/retry` }), field: 'id' },
  { route: 'POST /tasks/{id}/cancel', request: (n) => ({ method: 'POST', path: `/tasks/${e(n)}/cancel` }), field: 'id' },
  { route: 'GET /tasks/groups/{type}/{name} (type)', request: (n) => ({ method: 'GET', path: `/tasks/groups/${e(n)}/batch` }), field: 'type' },
  { route: 'GET /tasks/groups/{type}/{name} (name)', request: (n) => ({ method: 'GET', path: `/tasks/groups/report/${e(n)}` }), field: 'name' },
  { route: 'GET /tasks/list?type=', request: (n) => ({ method: 'GET', path: `/tasks/list?type=${e(n)}` }), field: 'type' },
  { route: 'GET /tasks/list?group=', request: (n) => ({ method: 'GET', path: `/tasks/list?group=${e(n)}` }), field: 'group' },
  { route: 'GET /jobs/{job}', request: (n) => ({ method: 'GET', path: `/jobs/${e(n)}` }), field: 'job' },
  { route: 'GET /jobs/{job}/history', request: (n) => ({ method: 'GET', path: `/jobs/${e(n)}/history` }), field: 'job' },
  { route: 'POST /jobs/{job}/run', request: (n) => ({ method: 'POST', path: `/jobs/${e(n)}/run` }), field: 'job' },
  { route: 'POST /jobs/{job}/pause', request: (n) => ({ method: 'POST', path: `/jobs/${e(n)}/pause` }), field: 'job' },
  { route: 'POST /jobs/{job}/resume', request: (n) => ({ method: 'POST', path: `/jobs/${e(n)}/resume` }), field: 'job' },
  { route: 'GET /schedules/{id}', request: (n) => ({ method: 'GET', path: `/schedules/${e(n)}` }), field: 'id' },
  { route: 'PUT /schedules/{id}', request: (n) => ({ method: 'PUT', path: `/schedules/${e(n)}`, body: { cron: '0 3 * * *', duration: '1m', handler: 'tenant-report' } }), field: 'id' },
  { route: 'DELETE /schedules/{id}', request: (n) => ({ method: 'DELETE', path: `/schedules/${e(n)}` }), field: 'id' },
  { route: 'POST /schedules/{id}/pause', request: (n) => ({ method: 'POST', path: `/schedules/${e(n)}/pause` }), field: 'id' },
  { route: 'POST /schedules/{id}/resume', request: (n) => ({ method: 'POST', path: `/schedules/${e(n)}/resume` }), field: 'id' },
];

/** Every admin route a name enters by a JSON body (where a lone surrogate can come too). */
const BODY_ROUTES: HostileRoute[] = [
  { route: 'POST /migrate (toGroup)', request: (n) => ({ method: 'POST', path: '/migrate', body: { fromGroup: 'production', toGroup: n, dryRun: true } }), field: 'toGroup' },
  { route: 'POST /migrate (names)', request: (n) => ({ method: 'POST', path: '/migrate', body: { fromGroup: 'production', toGroup: 'dr-site', names: [n] } }), field: 'names' },
  { route: 'POST /tasks/purge (types)', request: (n) => ({ method: 'POST', path: '/tasks/purge', body: { types: [n] } }), field: 'type' },
  {
    route: 'PUT /schedules/{id} (semaphore)',
    request: (n) => ({ method: 'PUT', path: '/schedules/hostile-semaphore', body: { cron: '0 3 * * *', duration: '1m', handler: 'tenant-report', semaphore: n } }),
    field: 'semaphore',
  },
  {
    route: 'PUT /schedules/{id} (handler)',
    request: (n) => ({ method: 'PUT', path: '/schedules/hostile-handler', body: { cron: '0 3 * * *', duration: '1m', handler: n } }),
    field: 'handler',
  },
];

/** Whether `value` holds the text `needle` anywhere (a client call's arguments: text, buffers, lists, objects). */
function carries(value: unknown, needle: string, seen = new Set<unknown>(), depth = 0): boolean {
  if (typeof value === 'string') return value.includes(needle);
  if (Buffer.isBuffer(value)) return value.toString('utf8').includes(needle) || value.toString('latin1').includes(needle);
  if (value === null || typeof value !== 'object' || depth > 6 || seen.has(value)) return false;
  seen.add(value);
  return Object.values(value).some((item) => carries(item, needle, seen, depth + 1));
}

/**
 * Every call the process makes on a backend's client from now on, by its arguments: PostgreSQL queries (with their
 * parameters), Redis commands (scripts' keys and arguments), and Hazelcast map operations.
 */
function recordClientCalls(): { calls: unknown[][]; restore: () => void } {
  const calls: unknown[][] = [];
  const spies: jest.SpyInstance[] = [];
  const record = <T extends object>(prototype: T, method: keyof T & string) => {
    const original = prototype[method] as unknown as (...args: unknown[]) => unknown;
    spies.push(jest.spyOn(prototype, method as never).mockImplementation(function (this: unknown, ...args: unknown[]) {
      calls.push(args);
      return original.apply(this, args);
    } as never));
  };
  record(PgClient.prototype, 'query');
  record(Redis.prototype, 'sendCommand');
  for (const method of Object.getOwnPropertyNames(MapProxy.prototype)) {
    if (method !== 'constructor' && typeof Object.getOwnPropertyDescriptor(MapProxy.prototype, method)?.value === 'function') record(MapProxy.prototype, method as never);
  }
  return { calls, restore: () => spies.forEach((spy) => spy.mockRestore()) };
}

@Injectable()
class HostileNamesWork {
  @ScheduleHandler('tenant-report')
  report(): void {}
}

/**
 * Issue 47: a name with a NUL byte reached PostgreSQL and came back as a 503 (the store "down"). Names are checked by
 * one rule before any store call, on every backend: a control character, a lone surrogate or a name too long is a
 * 400 naming the field and the problem, and no client call carries it; names that only look dangerous (quotes, SQL
 * and Lua fragments, any script, emoji) are names, stored and read back as given.
 */
describe.each<TestBackend>(['hazelcast', 'postgres', 'redis'])('hostile names through the admin API on %s', (backend) => {
  let app: INestApplication;
  let base: string;
  let spied: ReturnType<typeof recordClientCalls>;

  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of many shapes, read by the test
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as any };
  }

  beforeAll(async () => {
    const mapPrefix = uniquePrefix(`hostile-${backend}`);
    await declareTestPrefix(backend, mapPrefix);
    const moduleRef = await Test.createTestingModule({
      imports: [
        GatekeeperModule.forRoot({
          ...testBackendOptions(backend, mapPrefix),
          identity: { acquirer: `hostile-${backend}`, group: 'production' },
          definitions: [{ name: 'billing', duration: '30s' }],
          elections: ['leader'],
          allocations: [{ name: 'queues', lease: '5s' }],
          admin: { token: TOKEN },
        }),
      ],
      providers: [HostileNamesWork],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/gatekeeper`;
    spied = recordClientCalls();
  });
  afterAll(async () => {
    spied.restore();
    await app.close();
  });

  const refusals = [
    ...PATH_ROUTES.flatMap((route) => REFUSED.map((hostile) => [route, ...hostile] as const)),
    ...BODY_ROUTES.flatMap((route) => [...REFUSED, LONE_SURROGATE].map((hostile) => [route, ...hostile] as const)),
  ];

  it(`refuses ${refusals.length} requests with a hostile name: each a 400 naming the field, no client call carrying it, nothing stored changed`, async () => {
    const definitions = (await call('GET', '/definitions')).body;
    const schedules = (await call('GET', '/schedules')).body;
    spied.calls.length = 0;
    const answers: string[] = [];
    for (const [{ route, request, field }, label, name, problem] of refusals) {
      const { method, path, body } = request(name);
      const answer = await call(method, path, body);
      const got = `${route} with ${label}: ${answer.status} ${answer.body?.field} ${String(answer.body?.message).slice(0, 300)}`;
      answers.push(answer.status === 400 && answer.body.field === field && problem.test(answer.body.message) ? `${route} with ${label}: 400 ${field}` : got);
    }
    expect(answers).toEqual(refusals.map(([{ route, field }, label]) => `${route} with ${label}: 400 ${field}`));
    const hostile = [...REFUSED, LONE_SURROGATE].map(([, name]) => name);
    expect(spied.calls.filter((args) => hostile.some((name) => carries(args, name)))).toEqual([]);
    expect((await call('GET', '/definitions')).body).toEqual(definitions);
    expect((await call('GET', '/schedules')).body).toEqual(schedules);
  });

  it.each(ODD_BUT_FINE)('stores and reads back the semaphore %j as given, grants it and removes it', async (name) => {
    const put = await call('PUT', `/definitions/${e(name)}`, { duration: '30s', permits: 2 });
    expect([put.status, put.body]).toEqual([200, expect.objectContaining({ name, permits: 2 })]);
    expect((await call('GET', `/definitions/${e(name)}`)).body).toMatchObject({ name, permits: 2 });
    const granted = await app.get(GatekeeperService).tryAcquire(name);
    expect(granted).toEqual(expect.objectContaining({ granted: true, permit: expect.objectContaining({ semaphore: name }) }));
    const listed = (await call('GET', '/permits')).body.find((s: { name: string }) => s.name === name);
    expect(listed?.permits).toEqual([expect.objectContaining({ acquirer: `hostile-${backend}` })]);
    expect((await call('DELETE', `/permits/${e(name)}/${granted.granted ? granted.permit.fencingToken : 0}`)).status).toBe(204);
    expect((await call('DELETE', `/definitions/${e(name)}`)).status).toBe(204);
    expect((await call('GET', `/definitions/${e(name)}`)).status).toBe(404);
  });

  it.each(ODD_BUT_FINE)('stores and reads back the schedule %j as given, and removes it', async (id) => {
    const put = await call('PUT', `/schedules/${e(id)}`, { cron: '0 3 * * *', duration: '1m', handler: 'tenant-report', paused: true });
    expect([put.status, put.body]).toEqual([200, expect.objectContaining({ outcome: 'created' })]);
    expect((await call('GET', `/schedules/${e(id)}`)).body).toMatchObject({ id, definition: { id, handler: 'tenant-report' } });
    expect((await call('GET', '/schedules')).body.map((s: { id: string }) => s.id)).toContain(id);
    expect((await call('DELETE', `/schedules/${e(id)}`)).body.outcome).toBe('removed');
    expect((await call('GET', `/schedules/${e(id)}`)).status).toBe(404);
  });

  it.each(ODD_BUT_FINE)('stores and reads back the task %j as given, and asks after a job and an election of that name', async (name) => {
    const task = await app.get(TaskService).submit({ type: 'hostile-report', name });
    expect(task.id).toBe(`hostile-report:${name}`);
    expect((await call('GET', `/tasks/${e(task.id)}`)).body).toMatchObject({ id: task.id, type: 'hostile-report' });
    expect((await call('GET', `/tasks/list?type=hostile-report`)).body.map((t: { id: string }) => t.id)).toContain(task.id);
    expect((await call('POST', `/tasks/${e(task.id)}/cancel`)).body).toMatchObject({ id: task.id, state: 'cancelled' });
    // Nobody has such a job or election: the store was asked, and said so.
    expect((await call('GET', `/jobs/${e(name)}/history`)).body).toMatchObject({ statusCode: 404, reason: 'UNKNOWN_JOB' });
    expect((await call('GET', `/elections/${e(name)}`)).status).toBe(404);
    expect((await call('GET', `/allocations/${e(name)}`)).status).toBe(404);
  });
});
