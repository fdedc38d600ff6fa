import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { GatekeeperModule, GatekeeperService, SemaphoreAdminService } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'fastify-admin-token-0123456789';

/**
 * The admin API and the console on Nest's Fastify platform (the rest of the admin tests run on Express): reads,
 * 401 and 403, writes, a 400 naming the field, query strings, and the console's sign-in cookie, on a real member.
 */
describe('admin API and console on Fastify', () => {
  let app: NestFastifyApplication;
  let base: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        identity: { acquirer: 'fastify-node', group: 'production' },
        hazelcast: { clientConfig: testClientConfig(), mapPrefix: uniquePrefix('fastify') },
        definitions: [{ name: 'billing', duration: '30s', groupPattern: 'production' }],
        admin: { path: 'ops', token: TOKEN, console: true },
      })],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ops`;
  });
  afterAll(async () => {
    await app.close();
  });

  /** A request under the admin path; JSON in and out. */
  async function call(method: string, path: string, init: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {}) {
    const token = init.token === undefined ? TOKEN : init.token;
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token !== null && { authorization: `Bearer ${token}` }),
        ...(init.body !== undefined && { 'content-type': 'application/json' }),
        ...init.headers,
      },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    return { status: response.status, headers: response.headers, body: text && type.includes('json') ? JSON.parse(text) : text };
  }

  it('runs on the Fastify adapter', () => {
    expect(app.getHttpAdapter().getType()).toBe('fastify');
  });

  it('answers 401 with the Bearer challenge without credentials, 403 with a wrong token, 200 with the token', async () => {
    const bare = await call('GET', '/definitions', { token: null });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Bearer realm="gatekeeper"');
    expect((await call('GET', '/definitions', { token: 'wrong-token-of-the-same-size-12' })).status).toBe(403);
    const listed = await call('GET', '/definitions');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([expect.objectContaining({ name: 'billing', permits: 1, kind: 'job' })]);
    expect((await call('DELETE', '/definitions/billing', { token: null })).status).toBe(401);
  });

  it('writes: creates, edits, pauses and removes a definition; a 400 names the field and stores nothing', async () => {
    expect(await call('PUT', '/definitions/nightly', { body: { duration: '1h', permits: 2 } })).toMatchObject({ status: 200, body: { name: 'nightly', permits: 2, durationMs: 3_600_000 } });
    expect(await call('PATCH', '/definitions/nightly', { body: { groupPattern: 'production' } })).toMatchObject({ status: 200, body: { groupPattern: 'production' } });
    expect(await call('POST', '/definitions/nightly/pause')).toMatchObject({ status: 200, body: { permits: 0, pausedFrom: 2 } });
    expect(await call('PATCH', '/definitions/nightly', { body: { permits: -1 } })).toMatchObject({ status: 400, body: { field: 'permits', semaphore: 'nightly' } });
    expect(await call('POST', '/migrate', { body: { fromGroup: 'production', toGroup: 'dr-site', dryrun: true } })).toMatchObject({ status: 400, body: { field: 'dryrun' } });
    expect((await app.get(SemaphoreAdminService).readDefinition('nightly')).permits).toBe(0);
    expect((await call('DELETE', '/definitions/nightly')).status).toBe(204);
    expect((await call('GET', '/definitions/nightly')).status).toBe(404);
  });

  it('reads permits, the cluster, tasks with a query string, and a 404 naming an election', async () => {
    await app.get(GatekeeperService).tryAcquire('billing');
    const permits = await call('GET', '/permits');
    expect(permits.body).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'billing', permits: [expect.objectContaining({ acquirer: 'fastify-node' })] })]));
    expect((await call('GET', '/cluster')).body).toMatchObject({ participants: [expect.objectContaining({ acquirer: 'fastify-node' })] });
    // With no membership.httpAddress, the node advertises where Fastify's server listens.
    const advertised = `http://127.0.0.1:${new URL(base).port}`;
    await eventually('the address it listens on, advertised', async () => (await call('GET', '/cluster')).body.participants[0]?.httpAddress === advertised);
    expect(await call('GET', '/tasks/list?state=failed,pending&limit=5')).toMatchObject({ status: 200, body: [] });
    expect(await call('GET', '/tasks/list?limit=ten')).toMatchObject({ status: 400, body: { field: 'limit' } });
    expect(await call('GET', '/elections/ghost')).toMatchObject({ status: 404, body: { election: 'ghost' } });
  });

  it('serves the console, signs in with a session cookie, and takes a change only with the console\'s header', async () => {
    const page = await call('GET', '/console', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.body).toContain('<script src="/ops/console/console.client.js" defer></script>');
    expect((await call('GET', '/console/console.client.js', { token: null })).headers.get('content-type')).toContain('javascript');
    const unsigned = await call('GET', '/console/session', { token: null });
    expect([unsigned.status, unsigned.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="gatekeeper"']);
    const wrong = await call('POST', '/console/session', { token: null, body: { token: 'wrong' } });
    expect([wrong.status, wrong.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="gatekeeper"']);
    const signIn = await call('POST', '/console/session', { token: null, body: { token: TOKEN } });
    expect(signIn.status).toBe(204);
    const cookie = signIn.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^gatekeeper_console=[^;]+; Path=\/ops; HttpOnly; SameSite=Strict$/);
    const session = { cookie: cookie.split(';')[0] };
    expect(await call('GET', '/console/session', { token: null, headers: session })).toMatchObject({ status: 200, body: { signIn: 'token' } });
    expect((await call('GET', '/definitions', { token: null, headers: session })).status).toBe(200);
    expect((await call('POST', '/definitions/billing/pause', { token: null, headers: session })).status).toBe(403);
    expect(await call('POST', '/definitions/billing/pause', { token: null, headers: { ...session, 'x-gatekeeper-console': '1' } })).toMatchObject({ status: 200, body: { permits: 0 } });
    expect((await call('POST', '/definitions/billing/resume', { token: null, headers: { ...session, 'x-gatekeeper-console': '1' } })).status).toBe(200);
    const signOut = await call('DELETE', '/console/session', { token: null });
    expect(signOut.status).toBe(204);
    expect(signOut.headers.get('set-cookie')).toContain('Max-Age=0');
  });
});
