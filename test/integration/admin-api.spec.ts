import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GatekeeperModule, GatekeeperService, InvalidDefinitionError } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'a-long-enough-admin-token';

async function startApp(admin: Parameters<typeof GatekeeperModule.forRoot>[0]['admin']) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      GatekeeperModule.forRoot({
        identity: { acquirer: 'admin-node', group: 'production' },
        hazelcast: { clientConfig: testClientConfig(), mapPrefix: uniquePrefix('admin') },
        definitions: [
          { name: 'billing', duration: '30s', groupPattern: 'production' },
          { name: 'reports', duration: '30s', permits: 2 },
        ],
        admin,
      }),
    ],
  }).setLogger(new CapturingLogger()).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

describe('admin HTTP API', () => {
  let app: INestApplication;
  let base: string;
  let gatekeeper: GatekeeperService;
  const call = async (method: string, path: string, body?: unknown, token: string | null = TOKEN) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    app = await startApp({ path: 'ops/gatekeeper', token: TOKEN });
    base = `${await app.getUrl()}/ops/gatekeeper`.replace('[::1]', '127.0.0.1');
    gatekeeper = app.get(GatekeeperService);
  });
  afterAll(async () => {
    await app.close();
  });

  it('refuses requests without the token or with a wrong one', async () => {
    expect((await call('GET', '/definitions', undefined, null)).status).toBe(403);
    expect((await call('GET', '/definitions', undefined, 'wrong-token-of-same-size')).status).toBe(403);
    expect((await call('DELETE', '/definitions/billing', undefined, null)).status).toBe(403);
    expect(gatekeeper.getDefinition('billing')).toBeDefined();
  });

  it('lists and reads definitions', async () => {
    const list = await call('GET', '/definitions');
    expect(list.status).toBe(200);
    expect(list.body.map((d: { name: string }) => d.name)).toEqual(['billing', 'reports']);
    expect(await call('GET', '/definitions/reports')).toMatchObject({ status: 200, body: { name: 'reports', permits: 2, durationMs: 30_000 } });
    expect(await call('GET', '/definitions/ghost')).toMatchObject({ status: 404 });
  });

  it('creates, updates and deletes a definition', async () => {
    expect(await call('PUT', '/definitions/nightly', { duration: '1h', groupPattern: 'dr-site' })).toMatchObject({
      status: 200, body: { name: 'nightly', permits: 1, durationMs: 3_600_000, groupPattern: 'dr-site' },
    });
    expect(await call('PATCH', '/definitions/nightly', { permits: 3 })).toMatchObject({ status: 200, body: { permits: 3, groupPattern: 'dr-site' } });
    expect(await call('DELETE', '/definitions/nightly')).toMatchObject({ status: 204 });
    expect(await call('DELETE', '/definitions/nightly')).toMatchObject({ status: 404 });
    expect(await call('PATCH', '/definitions/nightly', { permits: 1 })).toMatchObject({ status: 404 });
  });

  it.each([
    ['an invalid regex', 'PATCH', '/definitions/billing', { groupPattern: '(' }, 'groupPattern'],
    ['negative permits', 'PATCH', '/definitions/billing', { permits: -1 }, 'permits'],
    ['a bad duration', 'PUT', '/definitions/billing', { duration: 'soon' }, 'duration'],
    ['an unknown field', 'PATCH', '/definitions/billing', { permit: 2 }, 'permit'],
    ['a renaming body', 'PUT', '/definitions/billing', { name: 'other', duration: '1m' }, 'name'],
    ['a non-object body', 'PATCH', '/definitions/billing', [1, 2], 'body'],
    ['a bad resume count', 'POST', '/definitions/billing/resume', { permits: 0 }, 'permits'],
    ['an empty migration target', 'POST', '/migrate', { fromGroup: 'production', toGroup: '' }, 'toGroup'],
    ['a mistyped dry-run flag', 'POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site', dryrun: true }, 'dryrun'],
    ['an invalid migration name pattern', 'POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site', namePattern: '(' }, 'namePattern'],
    ['an unknown undo field', 'POST', '/migrate/undo', { all: true }, 'all'],
    ['a non-numeric token', 'DELETE', '/permits/billing/abc', undefined, 'fencingToken'],
  ])('answers 400 naming the field for %s, and changes nothing', async (_, method, path, body, field) => {
    const before = await gatekeeper.readDefinition('billing');
    const response = await call(method, path, body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, field });
    expect(response.body.message).toContain(`invalid ${field}`);
    expect(await gatekeeper.readDefinition('billing')).toEqual(before);
  });

  it('pauses and resumes with the permits the semaphore had', async () => {
    expect(await call('POST', '/definitions/reports/pause')).toMatchObject({ status: 200, body: { permits: 0, pausedFrom: 2 } });
    expect(await gatekeeper.tryAcquire('reports')).toMatchObject({ granted: false, reason: 'PAUSED' });
    const resumed = await call('POST', '/definitions/reports/resume');
    expect(resumed).toMatchObject({ status: 200, body: { permits: 2 } });
    expect(resumed.body.pausedFrom).toBeUndefined();
    expect(await call('POST', '/definitions/ghost/pause')).toMatchObject({ status: 404 });
  });

  it('migrates the semaphores restricted to a group (a wildcard only when asked), with a dry run first, and undoes it', async () => {
    const dry = await call('POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site', dryRun: true });
    expect(dry).toMatchObject({ status: 200, body: { dryRun: true, changes: [{ name: 'billing', from: 'production', to: 'dr-site' }] } });
    // reports admits every group ('.*'): not moved unless asked.
    expect(dry.body.skipped).toEqual([expect.objectContaining({ name: 'reports', groupPattern: '.*', code: 'WILDCARD' })]);
    // Presence knows the only live instance (this node, in production): dr-site has none, so a real run needs force.
    expect(dry.body.warnings).toEqual([expect.stringContaining('no live node is known in group "dr-site"')]);
    expect(dry.body.warnings[0]).toContain('a real run is refused without force');
    expect((await gatekeeper.readDefinition('billing')).groupPattern).toBe('production');
    const refused = await call('POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site' });
    expect(refused).toMatchObject({ status: 400, body: { field: 'toGroup' } });
    expect((await gatekeeper.readDefinition('billing')).groupPattern).toBe('production');
    const done = await call('POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site', force: true });
    expect(done.body).toMatchObject({ dryRun: false, changes: dry.body.changes, skipped: dry.body.skipped, forced: true });
    expect((await gatekeeper.readDefinition('billing')).groupPattern).toBe('dr-site');
    const wild = await call('POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site', names: ['reports'], includeWildcards: true, force: true });
    expect(wild.body.changes).toEqual([{ name: 'reports', from: '.*', to: 'dr-site' }]);
    const undone = await call('POST', '/migrate/undo', { dryRun: false });
    expect(undone).toMatchObject({ status: 200, body: { changes: [{ name: 'billing', to: 'production' }, { name: 'reports', to: '.*' }], skipped: [] } });
    expect((await gatekeeper.readDefinition('reports')).groupPattern).toBe('.*');
    expect((await gatekeeper.readDefinition('billing')).groupPattern).toBe('production');
  });

  it('lists permits with holder, group, expiry and token, and force-releases one', async () => {
    const granted = await gatekeeper.tryAcquire('billing');
    if (!granted.granted) throw new Error(granted.message);
    const list = await call('GET', '/permits');
    const billing = list.body.find((s: { name: string }) => s.name === 'billing');
    expect(billing.permits).toEqual([granted.permit]);
    expect(await call('DELETE', `/permits/billing/${granted.permit.fencingToken}`)).toMatchObject({ status: 204 });
    // The holder (this node) is told and lets go; then there is nothing left to release.
    await eventually('the holder to let go', async () => (await call('DELETE', `/permits/billing/${granted.permit.fencingToken}`)).status === 404);
    expect(await gatekeeper.refresh(granted.permit)).toMatchObject({ granted: false, reason: 'PERMIT_LOST' });
  });
});

describe('admin HTTP API options', () => {
  @Injectable()
  class HeaderGuard implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      return context.switchToHttp().getRequest().headers['x-operator'] === 'yes';
    }
  }

  it('uses a guard the user supplies, under the default path', async () => {
    const app = await startApp({ guard: HeaderGuard });
    const url = `${await app.getUrl()}/gatekeeper/definitions`.replace('[::1]', '127.0.0.1');
    expect((await fetch(url)).status).toBe(403);
    expect((await fetch(url, { headers: { 'x-operator': 'yes' } })).status).toBe(200);
    await app.close();
  });

  it('refuses to mount an unprotected admin API', () => {
    expect(() => GatekeeperModule.forRoot({ store: 'memory', admin: {} })).toThrow(InvalidDefinitionError);
    expect(() => GatekeeperModule.forRoot({ store: 'memory', admin: { token: 'short' } })).toThrow(/invalid admin.token/);
  });

  it('is not mounted unless asked for', async () => {
    const app = await startApp(undefined);
    const url = `${await app.getUrl()}/gatekeeper/definitions`.replace('[::1]', '127.0.0.1');
    expect((await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    await app.close();
  });
});
