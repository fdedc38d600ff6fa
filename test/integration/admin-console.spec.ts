import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { GatekeeperModule, ScheduleHandler } from '../../lib';
import type { GatekeeperAdminOptions } from '../../lib/nest/options/gatekeeper-admin.options';
import { CapturingLogger } from '../support/capturing-logger';

const TOKEN = 'console-token-0123456789';

@Injectable()
class TenantReports {
  @ScheduleHandler('tenant-report')
  async report(): Promise<void> {}
}

@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-operator'] === 'yes';
  }
}

/**
 * The console's protection over HTTP: off unless asked; with a token, the page holds no data and the session
 * cookie (HttpOnly, SameSite=Strict, for the admin routes only) opens the API, a change needing the console's
 * header too; with a guard of the app's, the page itself is behind it.
 */
describe('the web console’s routes and sign-in', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  async function start(admin: GatekeeperAdminOptions, providers: Array<new (...args: never[]) => unknown> = []) {
    const logger = new CapturingLogger();
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', membership: false, definitions: [{ name: 'billing', duration: '5s' }], admin })],
      providers,
    }).setLogger(logger).compile();
    const app = moduleRef.createNestApplication({ logger });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const call = (method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}) => fetch(`${base}${path}`, {
      method,
      headers: { ...init.headers, ...(init.body !== undefined && { 'content-type': 'application/json' }) },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
      redirect: 'manual',
    });
    return Object.assign(call, { logger });
  }

  it('is off unless asked for, and then says so: at start-up, and at its address, naming the option', async () => {
    const call = await start({ path: 'ops', token: TOKEN });
    const page = await call('GET', '/ops/console');
    expect(page.status).toBe(404);
    expect(((await page.json()) as { message: string }).message).toBe("The web console is off: admin: { console: true } in GatekeeperModule's options serves it here (/ops/console)");
    expect((await call('GET', '/ops/console/console.client.js')).status).toBe(404);
    expect(call.logger.find('log', /^Admin API at /)).toEqual(['Admin API at /ops; the web console is off (admin: { console: true } serves it at /ops/console)']);
    const on = await start({ path: 'ops', token: TOKEN, console: true });
    expect(on.logger.find('log', /^Admin API at /)).toEqual(['Admin API at /ops, web console at /ops/console']);
  });

  it('marks a runtime schedule\'s semaphore and job, so the console shows them once, under Schedules', async () => {
    const call = await start({ path: 'ops', token: TOKEN }, [TenantReports]);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const put = await call('PUT', '/ops/schedules/report-acme', { headers: auth, body: { cron: '0 0 4 * * *', handler: 'tenant-report', duration: '15s' } });
    expect(put.status).toBe(200);
    const read = async <T>(path: string) => (await (await call('GET', path, { headers: auth })).json()) as T;
    let definitions: Array<{ name: string; kind: string; schedules?: string[] }> = [];
    for (let tries = 0; tries < 50 && !definitions.some((d) => d.name === 'schedule:report-acme'); tries++) {
      definitions = await read('/ops/definitions');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(definitions.map(({ name, kind, schedules }) => ({ name, kind, schedules }))).toEqual([
      { name: 'billing', kind: 'job', schedules: undefined },
      { name: 'schedule:report-acme', kind: 'job', schedules: ['report-acme'] },
    ]);
    expect(await read('/ops/definitions/schedule%3Areport-acme')).toMatchObject({ schedules: ['report-acme'] });
    expect(await read('/ops/definitions/billing')).not.toHaveProperty('schedules');
    const jobs = await read<Array<{ job: string; schedule?: boolean }>>('/ops/jobs');
    expect(jobs.map(({ job, schedule }) => ({ job, schedule }))).toEqual([{ job: 'report-acme', schedule: true }]);
  });

  it('says a bad cron expression once', async () => {
    const call = await start({ path: 'ops', token: TOKEN });
    const put = await call('PUT', '/ops/schedules/report-acme', { headers: { authorization: `Bearer ${TOKEN}` }, body: { cron: '0 0 99 * * *', timeZone: 'Europe/Berlin', handler: 'tenant-report', duration: '15s' } });
    expect(put.status).toBe(400);
    expect(await put.json()).toMatchObject({ field: 'cron', message: 'Schedule "report-acme": invalid cron: \'0 0 99 * * *\' in Europe/Berlin: Field value (99) is out of range' });
  });

  it('with a token: a page without data, a sign-in that sets a strict session cookie, and changes only with the console’s header', async () => {
    const call = await start({ path: 'ops', token: TOKEN, console: true });
    const page = await call('GET', '/ops/console');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('<script src="/ops/console/console.client.js" defer></script>');
    expect(html).not.toContain('billing');
    // One script: lib/console's views, bundled for the browser (no other script is asked for, and none of Node).
    expect(html.match(/<script /g)).toHaveLength(1);
    const script = await call('GET', '/ops/console/console.client.js');
    expect([script.status, script.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
    const source = await script.text();
    expect(source).toContain('gatekeeper-base');
    expect(source).not.toMatch(/\brequire\(|node:/);
    expect((await call('GET', '/ops/console/console.jobs.js')).status).toBe(404);
    const unsigned = await call('GET', '/ops/console/session');
    expect([unsigned.status, unsigned.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="gatekeeper"']);
    const bare = await call('GET', '/ops/definitions');
    expect([bare.status, bare.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="gatekeeper"']);

    expect((await call('POST', '/ops/console/session', { body: { token: 'wrong-token-0123456789' } })).status).toBe(401);
    const signedIn = await call('POST', '/ops/console/session', { body: { token: TOKEN } });
    expect(signedIn.status).toBe(204);
    const cookie = signedIn.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^gatekeeper_console=[\w-]+; Path=\/ops; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toContain(TOKEN);
    const session = { cookie: cookie.split(';')[0] };

    expect((await call('GET', '/ops/console/session', { headers: session })).status).toBe(200);
    const definitions = await call('GET', '/ops/definitions', { headers: session });
    expect([definitions.status, ((await definitions.json()) as Array<{ name: string }>).map((d) => d.name)]).toEqual([200, ['billing']]);
    // A change by cookie alone (what a cross-site form could send) is refused; with the console's header it is made.
    expect((await call('POST', '/ops/definitions/billing/pause', { headers: session })).status).toBe(403);
    const paused = await call('POST', '/ops/definitions/billing/pause', { headers: { ...session, 'x-gatekeeper-console': '1' } });
    expect([paused.status, ((await paused.json()) as { permits: number }).permits]).toEqual([200, 0]);

    const signedOut = await call('DELETE', '/ops/console/session', { headers: session });
    expect(signedOut.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await call('GET', '/ops/definitions', { headers: { cookie: 'gatekeeper_console=forged' } })).status).toBe(403);
  });

  it('with a guard of the app’s: the page and its calls go through it, and there is no token sign-in', async () => {
    const call = await start({ path: 'ops', guard: HeaderGuard, console: true });
    expect((await call('GET', '/ops/console')).status).toBe(403);
    expect((await call('GET', '/ops/console', { headers: { 'x-operator': 'yes' } })).status).toBe(200);
    expect(await (await call('GET', '/ops/console/session', { headers: { 'x-operator': 'yes' } })).json()).toEqual({ signedIn: true, signIn: 'guard' });
    expect((await call('POST', '/ops/console/session', { body: { token: TOKEN } })).status).toBe(404);
  });

  it('rejects a console option that is not true or false, naming the field', async () => {
    await expect(start({ token: TOKEN, console: 'yes' as never })).rejects.toThrow('admin.console');
  });
});
