import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { ClusterService, GatekeeperModule, GatekeeperService, InvalidInputError, SemaphoreAdminService } from '../../lib';
import type { ClusterOverview, ElectionStatus } from '../../lib/elections/election-status';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'a-long-enough-admin-token';

type ModuleOptions = Parameters<typeof GatekeeperModule.forRoot>[0];

async function startApp(admin: ModuleOptions['admin'], extra: ModuleOptions = {}) {
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
        ...extra,
      }),
    ],
  }).setLogger(new CapturingLogger()).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

/** Calls the admin API under `base` (with the token unless told otherwise) and parses the JSON answer. */
function adminClient(base: () => string) {
  return async (method: string, path: string, body?: unknown, token: string | null = TOKEN) => {
    const response = await fetch(`${base()}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}

describe('admin HTTP API', () => {
  let app: INestApplication;
  let base: string;
  let gatekeeper: GatekeeperService;
  let semaphores: SemaphoreAdminService;
  const call = adminClient(() => base);

  beforeAll(async () => {
    app = await startApp({ path: 'ops/gatekeeper', token: TOKEN });
    base = `${await app.getUrl()}/ops/gatekeeper`.replace('[::1]', '127.0.0.1');
    gatekeeper = app.get(GatekeeperService);
    semaphores = app.get(SemaphoreAdminService);
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 401 with a Bearer challenge without credentials, and 403 with a wrong token', async () => {
    const bare = await fetch(`${base}/definitions`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer realm="gatekeeper"');
    expect((await bare.json()).message).toContain('Authorization: Bearer <token>');
    // Another scheme is no credentials this API takes: 401 too.
    expect((await fetch(`${base}/definitions`, { headers: { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } })).status).toBe(401);
    const wrong = await fetch(`${base}/definitions`, { headers: { authorization: 'Bearer wrong-token-of-same-size' } });
    expect(wrong.status).toBe(403);
    expect(wrong.headers.get('www-authenticate')).toBeNull();
    expect((await call('DELETE', '/definitions/billing', undefined, null)).status).toBe(401);
    expect((await call('DELETE', '/definitions/billing', undefined, 'wrong-token-of-same-size')).status).toBe(403);
    expect(semaphores.getDefinition('billing')).toBeDefined();
  });

  it('lists and reads definitions', async () => {
    const list = await call('GET', '/definitions');
    expect(list.status).toBe(200);
    expect(list.body.map((d: { name: string }) => d.name)).toEqual(['billing', 'reports']);
    expect(await call('GET', '/definitions/reports')).toMatchObject({ status: 200, body: { name: 'reports', permits: 2, durationMs: 30_000 } });
    expect(await call('GET', '/definitions/ghost')).toMatchObject({ status: 404, body: { semaphore: 'ghost', reason: 'UNKNOWN_SEMAPHORE', message: 'Semaphore "ghost" has no definition' } });
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
    const before = await semaphores.readDefinition('billing');
    const response = await call(method, path, body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, field });
    // Named on the semaphore when one is concerned, else on the request (`Invalid migration.toGroup`): never a made-up one.
    expect(response.body.message).toMatch(new RegExp(`^(Semaphore "billing": invalid |Invalid migration\\.|Invalid )${field}: `));
    expect(response.body.message).not.toContain('<');
    expect(await semaphores.readDefinition('billing')).toEqual(before);
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
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('production');
    const refused = await call('POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site' });
    expect(refused).toMatchObject({ status: 400, body: { field: 'toGroup' } });
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('production');
    const done = await call('POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site', force: true });
    expect(done.body).toMatchObject({ dryRun: false, changes: dry.body.changes, skipped: dry.body.skipped, forced: true });
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('dr-site');
    const wild = await call('POST', '/migrate', { fromGroup: 'production', toGroup: 'dr-site', names: ['reports'], includeWildcards: true, force: true });
    expect(wild.body.changes).toEqual([{ name: 'reports', from: '.*', to: 'dr-site' }]);
    const undone = await call('POST', '/migrate/undo', { dryRun: false });
    expect(undone).toMatchObject({ status: 200, body: { changes: [{ name: 'billing', to: 'production' }, { name: 'reports', to: '.*' }], skipped: [] } });
    expect((await semaphores.readDefinition('reports')).groupPattern).toBe('.*');
    expect((await semaphores.readDefinition('billing')).groupPattern).toBe('production');
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

describe('admin HTTP API: cluster status and elections', () => {
  const mapPrefix = uniquePrefix('admin-elections');
  const electionOptions = (): ModuleOptions => ({ elections: [{ name: 'leader', lease: '2s' }], maxClockSkew: '100ms' });
  let app: INestApplication;
  let peer: TestNode;
  let base: string;
  const call = adminClient(() => base);
  /** Each node's ClusterService, to check the API against what the nodes themselves know. */
  const serviceOf = (instance: string): ClusterService => {
    const found = [app.get(ClusterService), peer.get(ClusterService)].find((c) => c.instanceId === instance);
    if (!found) throw new Error(`no node has instance ${instance}`);
    return found;
  };
  const led = (what: string, check: (e: ElectionStatus) => boolean = () => true) =>
    eventually(what, async () => {
      const { status, body } = await call('GET', '/elections/leader');
      return status === 200 && body.leader && check(body) ? (body as ElectionStatus) : undefined;
    });

  beforeAll(async () => {
    [app, peer] = await Promise.all([
      startApp({ token: TOKEN }, {
        ...electionOptions(),
        hazelcast: { clientConfig: testClientConfig(), mapPrefix },
        membership: { interval: '500ms', httpAddress: 'http://10.0.0.1:3001' },
      }),
      startNode({ ...electionOptions(), mapPrefix, providers: [], identity: { acquirer: 'admin-peer', group: 'dr-site' }, membership: { interval: '500ms' } }),
    ]);
    base = `${await app.getUrl()}/gatekeeper`.replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await Promise.all([app?.close(), peer?.close()]);
  });

  it('shows the live instances with their age and how old that view is, and each election with its leader, epoch and lease left', async () => {
    const status: ClusterOverview = await eventually('both instances and a leader in the status', async () => {
      const { body } = await call('GET', '/cluster');
      return body?.participants?.length === 2 && body.elections[0]?.leader ? body : undefined;
    });
    expect(status.participants.map((p) => [p.acquirer, p.group])).toEqual(expect.arrayContaining([['admin-node', 'production'], ['admin-peer', 'dr-site']]));
    expect(status.participants.find((p) => p.acquirer === 'admin-node')).toMatchObject({
      instance: app.get(ClusterService).instanceId, httpAddress: 'http://10.0.0.1:3001', version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    for (const p of status.participants) expect(p.ageMs).toBe(status.at - p.startedAt);
    expect(status.viewAgeMs).toEqual(expect.any(Number));
    // billing and reports are ordinary semaphores: only election:* ones are elections.
    expect(status.elections).toHaveLength(1);
    const [election] = status.elections;
    expect(election).toMatchObject({
      name: 'leader', semaphore: 'election:leader', lastEpoch: election.epoch,
      definition: { leaseMs: 2000, groupPattern: '.*', acquirerPattern: '.*', paused: false },
    });
    expect(election.leaseLeftMs).toBeGreaterThan(0);
    expect(election.leaseLeftMs).toBeLessThanOrEqual(2000);
    // The leader the API reads from the cluster is the one the leading node knows it is.
    expect(serviceOf(election.leader!.instance).leader()).toMatchObject({ instance: election.leader!.instance, epoch: election.epoch });
    const leads = Object.fromEntries(status.participants.map((p) => [p.instance === election.leader!.instance ? 'leader' : 'other', p.leads]));
    expect(leads).toEqual({ leader: ['leader'], other: [] });
  });

  it('answers one election, 404 naming an election the cluster does not have, and 400 for a name that cannot be one', async () => {
    const leader = await led('a leader');
    expect(leader).toMatchObject({ name: 'leader', leader: { instance: expect.any(String), acquirer: expect.stringMatching(/^admin-(node|peer)$/) } });
    expect(leader.since).toBeLessThanOrEqual(Date.now());
    for (const [method, path] of [['GET', '/elections/ghost'], ['POST', '/elections/ghost/resign']]) {
      const missing = await call(method, path);
      expect(missing).toMatchObject({ status: 404, body: { election: 'ghost', elections: ['leader'] } });
      expect(missing.body.message).toBe('Election "ghost" is not in the cluster (no semaphore "election:ghost"); elections: leader');
    }
    expect(await call('GET', `/elections/${'x'.repeat(300)}`)).toMatchObject({ status: 400, body: { field: 'election' } });
    expect((await call('GET', '/cluster', undefined, null)).status).toBe(401);
    expect((await call('POST', '/elections/leader/resign', undefined, null)).status).toBe(401);
    expect(await led('the same leader', (e) => e.epoch === leader.epoch)).toMatchObject({ leader: leader.leader });
  });

  it('makes the leader resign from any node: the other node takes over with a higher epoch, and back', async () => {
    const first = await led('a leader');
    const resigned = await call('POST', '/elections/leader/resign');
    expect(resigned).toEqual({ status: 200, body: { election: 'leader', resigned: true, epoch: first.epoch, leader: first.leader } });
    const second = await led('the other node to lead', (e) => e.leader!.instance !== first.leader!.instance);
    expect(second.epoch).toBeGreaterThan(first.epoch!);
    expect(serviceOf(first.leader!.instance).isLeader()).toBe(false);
    // This node's API resigned a leader on this node once and on the other node once, whichever led first.
    expect((await call('POST', '/elections/leader/resign')).body).toMatchObject({ resigned: true, epoch: second.epoch, leader: second.leader });
    const third = await led('the first node to lead again', (e) => e.leader!.instance !== second.leader!.instance);
    expect(third.leader).toEqual(first.leader);
    expect(third.epoch).toBeGreaterThan(second.epoch!);
  });

  it('says the kind of each definition and permit, and refuses to pause or renumber an election as a job unless forced', async () => {
    const leader = await led('a leader');
    const kinds = (items: Array<{ name: string; kind: string }>) => Object.fromEntries(items.map((d) => [d.name, d.kind]));
    expect(kinds((await call('GET', '/definitions')).body)).toEqual({ billing: 'job', 'election:leader': 'election', reports: 'job' });
    expect(await call('GET', '/definitions/election:leader')).toMatchObject({ status: 200, body: { name: 'election:leader', kind: 'election', permits: 1 } });
    expect(kinds((await call('GET', '/permits')).body)).toMatchObject({ 'election:leader': 'election' });
    for (const [method, path, body] of [['POST', '/definitions/election:leader/pause'], ['PATCH', '/definitions/election:leader', { permits: 0 }]] as const) {
      const refused = await call(method, path, body);
      expect(refused).toMatchObject({ status: 400, body: { semaphore: 'election:leader', field: 'permits' } });
      expect(refused.body.message).toContain('it backs the leader election "leader", not a job');
      expect(refused.body.message).toContain('?force=true');
    }
    expect(await call('POST', '/definitions/election:leader/pause?force=yes')).toMatchObject({ status: 400, body: { field: 'force' } });
    // Its lease and who may stand are no job's permits: they edit as they always did.
    expect(await call('PATCH', '/definitions/election:leader', { duration: '2s', groupPattern: '.*' })).toMatchObject({ status: 200, body: { permits: 1 } });
    expect((await call('GET', '/elections/leader')).body).toMatchObject({ epoch: leader.epoch, definition: { paused: false } });
  });

  it('says nobody leads a paused election, and that there was nothing to resign', async () => {
    expect(await call('POST', '/definitions/election:leader/pause?force=true')).toMatchObject({ status: 200, body: { permits: 0, pausedFrom: 1 } });
    const paused: ElectionStatus = await eventually('the leader to step down', async () => {
      const { body } = await call('GET', '/elections/leader');
      return body.leader === undefined ? body : undefined;
    });
    expect(paused).toMatchObject({ definition: { paused: true }, lastEpoch: expect.any(Number) });
    expect(paused.epoch).toBeUndefined();
    expect(await call('POST', '/elections/leader/resign')).toEqual({ status: 200, body: { election: 'leader', resigned: false } });
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

  it('refuses to mount an unprotected admin API, during bootstrap (not when the module is imported), naming admin.token', async () => {
    const boot = (admin: object) => {
      const module = GatekeeperModule.forRoot({ backend: 'memory', admin }); // importing never throws
      return Test.createTestingModule({ imports: [module] }).setLogger(new CapturingLogger()).compile().then(() => undefined, (error: unknown) => error);
    };
    const unprotected = await boot({});
    expect(unprotected).toBeInstanceOf(InvalidInputError);
    expect(unprotected).toMatchObject({ field: 'admin.token', kind: undefined });
    const short = (await boot({ token: 'short' })) as Error;
    expect(short.message).toBe(
      'GatekeeperModule options: invalid admin.token: the admin API must be protected: give admin.guard, or admin.token of at least 16 characters (got 5 characters)',
    );
    expect(short.message).not.toContain('Semaphore');
    expect(((await boot({ token: TOKEN, path: ' / ' })) as Error).message).toBe('GatekeeperModule options: invalid admin.path: must be a non-empty route prefix, got " / "');
    expect(((await boot({ token: TOKEN, console: 'yes' })) as Error).message).toContain('invalid admin.console: must be true or false');
    expect(((await boot({ token: TOKEN, tokne: 'x' })) as Error).message).toContain('invalid admin.tokne: is not an option');
  });

  it('is not mounted unless asked for', async () => {
    const app = await startApp(undefined);
    const url = `${await app.getUrl()}/gatekeeper/definitions`.replace('[::1]', '127.0.0.1');
    expect((await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    await app.close();
  });
});

describe('admin and console options from forRootAsync (ConfigService)', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  @Injectable()
  class ConfiguredGuard implements CanActivate {
    constructor(private readonly config: ConfigService) {}
    canActivate(context: ExecutionContext): boolean {
      return context.switchToHttp().getRequest().headers['x-operator'] === this.config.get('OPERATOR');
    }
  }

  /** An app whose every gatekeeper option, admin included, comes from ConfigService; its log and base URL. */
  async function startFromConfig(settings: Record<string, unknown>, admin: (config: ConfigService) => object | undefined) {
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot({ ignoreEnvFile: true, isGlobal: true, load: [() => settings] }),
        GatekeeperModule.forRootAsync({
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({
            identity: { acquirer: config.getOrThrow<string>('ACQUIRER') },
            hazelcast: { clientConfig: testClientConfig(), mapPrefix: uniquePrefix('admin-async') },
            definitions: [{ name: 'billing', duration: '30s' }],
            admin: admin(config),
          }),
        }),
      ],
    }).setLogger(logger).compile();
    const app = moduleRef.createNestApplication({ logger });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return { logger, base: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
  }

  it('mounts the API and the console under the path and token the factory read, with 401 and 403', async () => {
    const { base } = await startFromConfig(
      { ACQUIRER: 'async-admin', ADMIN_PATH: 'ops/async', ADMIN_TOKEN: 'token-from-config-service' },
      (config) => ({ path: config.get('ADMIN_PATH'), token: config.get('ADMIN_TOKEN'), console: true }),
    );
    const definitions = await fetch(`${base}/ops/async/definitions`, { headers: { authorization: 'Bearer token-from-config-service' } });
    expect(definitions.status).toBe(200);
    expect((await definitions.json()).map((d: { name: string }) => d.name)).toContain('billing');
    expect((await fetch(`${base}/ops/async/definitions`)).status).toBe(401);
    expect((await fetch(`${base}/ops/async/definitions`, { headers: { authorization: 'Bearer not-the-configured-token' } })).status).toBe(403);
    const paused = await fetch(`${base}/ops/async/definitions/billing/pause`, { method: 'POST', headers: { authorization: 'Bearer token-from-config-service' } });
    expect(paused.status).toBe(200);
    expect(await paused.json()).toMatchObject({ name: 'billing', permits: 0 });
    // The console, under the configured path, and its session cookie scoped to it.
    const page = await fetch(`${base}/ops/async/console`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script src="/ops/async/console/console.client.js" defer></script>');
    const signIn = await fetch(`${base}/ops/async/console/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'token-from-config-service' }),
    });
    expect(signIn.status).toBe(204);
    expect(signIn.headers.get('set-cookie')).toMatch(/^gatekeeper_console=[^;]+; Path=\/ops\/async; HttpOnly; SameSite=Strict$/);
    // Nothing is left at the placeholder path the routes were declared under.
    expect((await fetch(`${base}/gatekeeper/definitions`, { headers: { authorization: 'Bearer token-from-config-service' } })).status).toBe(404);
  });

  it('mounts nothing when the factory gives no admin, and no console unless asked', async () => {
    const { base, logger } = await startFromConfig({ ACQUIRER: 'async-none' }, () => undefined);
    expect((await fetch(`${base}/gatekeeper/definitions`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    expect((await fetch(`${base}/gatekeeper/console`)).status).toBe(404);
    expect(logger.find('log', /Mapped \{\/gatekeeper/)).toEqual([]);
    const withoutConsole = await startFromConfig({ ACQUIRER: 'async-api', T: TOKEN }, (config) => ({ token: config.get('T') }));
    expect((await fetch(`${withoutConsole.base}/gatekeeper/definitions`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    // Only the console's address, answering 404 with how to turn it on: none of its files, no sign-in.
    expect((await fetch(`${withoutConsole.base}/gatekeeper/console`)).status).toBe(404);
    expect(withoutConsole.logger.find('log', /Mapped \{\/gatekeeper\/console/)).toEqual(['Mapped {/gatekeeper/console, GET} route']);
    expect(withoutConsole.logger.find('log', 'Mapped {/gatekeeper/definitions, GET}')).toHaveLength(1); // the log is read
  });

  it('uses a guard class the factory names, created with what it injects', async () => {
    const { base } = await startFromConfig({ ACQUIRER: 'async-guard', OPERATOR: 'alice' }, () => ({ guard: ConfiguredGuard, path: 'guarded' }));
    expect((await fetch(`${base}/guarded/definitions`, { headers: { 'x-operator': 'bob' } })).status).toBe(403);
    expect((await fetch(`${base}/guarded/definitions`, { headers: { 'x-operator': 'alice' } })).status).toBe(200);
  });

  it('reports a too-short token from the factory during bootstrap, naming admin.token', async () => {
    const failure = await Test.createTestingModule({
      imports: [GatekeeperModule.forRootAsync({ useFactory: () => ({ backend: 'memory' as const, admin: { token: 'short' } }) })],
    }).setLogger(new CapturingLogger()).compile().then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidInputError);
    expect((failure as Error).message).toMatch(/^GatekeeperModule options: invalid admin\.token: /);
  });

  it('still takes admin next to useFactory, the factory\'s own admin winning', async () => {
    const boot = async (factoryAdmin?: object) => {
      const moduleRef = await Test.createTestingModule({
        imports: [GatekeeperModule.forRootAsync({
          admin: { path: 'beside', token: TOKEN },
          useFactory: () => ({ backend: 'memory' as const, membership: false as const, ...(factoryAdmin && { admin: factoryAdmin }) }),
        })],
      }).setLogger(new CapturingLogger()).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      apps.push(app);
      await app.listen(0, '127.0.0.1');
      return (await app.getUrl()).replace('[::1]', '127.0.0.1');
    };
    const beside = await boot();
    expect((await fetch(`${beside}/beside/definitions`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    const factory = await boot({ path: 'from-factory', token: 'another-token-0123456789' });
    expect((await fetch(`${factory}/from-factory/definitions`, { headers: { authorization: 'Bearer another-token-0123456789' } })).status).toBe(200);
    expect((await fetch(`${factory}/beside/definitions`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });
});
