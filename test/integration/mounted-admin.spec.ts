import type { INestApplication } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { ClusterService, GatekeeperModule } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';

const TOKEN = 'mounted-admin-token-0123456789';

/**
 * The admin API mounted the Nest way: the app's `RouterModule` puts the module's routes under its own path, the
 * app's global prefix above that, and the node advertises the address its admin API really sits under, so the CLI's
 * default `--admin-path` finds it, and the console calls the API where it is (with `forRoot` and with a
 * `forRootAsync` factory alike).
 */
describe('admin API under RouterModule and a global prefix', () => {
  const apps: INestApplication[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  async function start(gatekeeper: ReturnType<typeof GatekeeperModule.forRoot>, prefix?: string): Promise<{ app: INestApplication; port: number }> {
    const moduleRef = await Test.createTestingModule({
      imports: [gatekeeper, RouterModule.register([{ path: 'ops', module: GatekeeperModule }])],
    }).setLogger(new CapturingLogger()).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    if (prefix !== undefined) app.setGlobalPrefix(prefix);
    await app.listen(0, '127.0.0.1');
    return { app, port: Number(new URL(await app.getUrl()).port) };
  }

  /** What the node advertises, once it has (presence writes it after `listen`). */
  const advertised = (app: INestApplication) =>
    eventually('the node to advertise its HTTP address', () => app.get(ClusterService).current()?.httpAddress);

  const get = (url: string) => fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });

  it('advertises <listen address>/<global prefix>/<RouterModule path>, where the admin API answers', async () => {
    const { app, port } = await start(
      GatekeeperModule.forRoot({ backend: 'memory', membership: { interval: '200ms' }, admin: { token: TOKEN, console: true } }),
      'api',
    );
    const address = await advertised(app);
    expect(address).toBe(`http://127.0.0.1:${port}/api/ops`);
    expect((await get(`${address}/gatekeeper/definitions`)).status).toBe(200);
    // The console's page, its two files (styles, script) and its session cookie use the path the routes really have.
    const page = await get(`${address}/gatekeeper/console`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<meta name="gatekeeper-base" content="/api/ops/gatekeeper">');
    const files = html.match(/(?<=(?:src|href)=")\/[^"]+(?=")/g) ?? [];
    expect(files).toHaveLength(2);
    for (const file of files) {
      expect([file, (await get(`http://127.0.0.1:${port}${file}`)).status]).toEqual([file, 200]);
    }
    const signIn = await fetch(`${address}/gatekeeper/console/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: TOKEN }),
    });
    expect(signIn.status).toBe(204);
    expect(signIn.headers.get('set-cookie')).toContain('; Path=/api/ops/gatekeeper;');
    // Nothing is left at the unmounted path.
    expect((await get(`http://127.0.0.1:${port}/api/gatekeeper/definitions`)).status).toBe(404);
  });

  it('mounts the routes of a forRootAsync factory\'s admin.path the same way, without a global prefix', async () => {
    const { app, port } = await start(
      GatekeeperModule.forRootAsync({
        useFactory: () => ({ backend: 'memory' as const, membership: { interval: '200ms' }, admin: { path: 'admin', token: TOKEN } }),
      }),
    );
    const address = await advertised(app);
    expect(address).toBe(`http://127.0.0.1:${port}/ops`);
    expect((await get(`${address}/admin/definitions`)).status).toBe(200);
  });
});
