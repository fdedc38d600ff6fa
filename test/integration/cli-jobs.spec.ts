import { Injectable, type INestApplication, type Type } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { existsSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClusterSingleton, GatekeeperModule, SemaphoreAdminService } from '../../lib';
import { HazelcastConnection } from '../../lib/backends/hazelcast/hazelcast-connection';
import { HazelcastBackend } from '../../lib/backends/hazelcast/hazelcast-backend';
import { PresenceRecordStore } from '../../lib/presence/presence-record.store';
import { HistoryRecordStore } from '../../lib/schedules/history-record.store';
import { emptyHistory } from '../../lib/schedules/job-history';
import { announcement } from '../../lib/presence/presence.rules';
import { CapturingLogger } from '../support/capturing-logger';
import { cli, CLI_BIN } from '../support/cli-process';
import { eventually } from '../support/eventually';
import { freePort, REFUSING_ADDRESS } from '../support/free-port';
import { testClientConfig, testCluster, uniquePrefix } from '../support/test-cluster';

const TOKEN = 'cli-jobs-admin-token-0123456789';

/** Jobs ticked by the test (their cron schedules never fire within it). */
@Injectable()
class BillingJobs {
  runs = 0;
  failNext = false;

  @Cron('0 15 4 * * *', { timeZone: 'America/New_York' })
  @ClusterSingleton('cli-billing', '2m')
  async charge(): Promise<void> {
    this.runs++;
    if (this.failNext) {
      this.failNext = false;
      throw new Error('card declined');
    }
  }
}

/** A job only the second node has. */
@Injectable()
class ReportJobs {
  @Cron('0 0 6 * * *')
  @ClusterSingleton('cli-reports', '2m')
  async nightly(): Promise<void> {}
}

/** A job only the node behind the proxy has. */
@Injectable()
class AuditJobs {
  @Cron('0 0 7 * * *')
  @ClusterSingleton('cli-audit', '2m')
  async sweep(): Promise<void> {}
}

/** How a test app is set up: where it listens, what it advertises, where its admin token comes from. */
interface AppSetup {
  /** `membership.httpAddress`, given the port the app listens on; none: the app advertises where it listens. */
  readonly httpAddress?: (port: number) => string;
  /** The host `app.listen` binds; none: every interface. */
  readonly host?: string;
  /** `false`: `app.init()` only, no HTTP server listening. */
  readonly listen?: boolean;
  /** `admin: {}`, its token from GATEKEEPER_ADMIN_TOKEN, rather than `admin: { token }`. */
  readonly tokenFromEnv?: boolean;
}

/**
 * The CLI's jobs commands (built binary) against a real member and two live apps: `list` and `history` read the
 * cluster; `describe`, `run`, `pause` and `resume` ask the apps' admin API, found through presence (a dead address is
 * passed over).
 */
describe('nestjs-gatekeeper jobs (built binary, real member, live apps)', () => {
  const { clusterName, addresses } = testCluster();
  const mapPrefix = uniquePrefix('cli-jobs');
  const env = { GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName, GATEKEEPER_MAP_PREFIX: mapPrefix, GATEKEEPER_ADMIN_TOKEN: TOKEN };
  const run = (args: string[], extra: Record<string, string | undefined> = {}) => cli(args, { ...env, ...extra });
  const json = async (...args: string[]) => {
    const result = await run(['--json', ...args]);
    expect([result.code, result.stderr]).toEqual([0, '']);
    return JSON.parse(result.stdout);
  };
  /** The two nodes with BillingJobs (cli-a, cli-b). */
  let apps: INestApplication[] = [];
  /** The others: cli-c behind a proxy, cli-quiet that never listens. */
  let others: INestApplication[] = [];
  const ports = new Map<string, number>();
  let ghost: PresenceRecordStore;
  let proxy: Server;
  /** What reached the proxy in front of cli-c. */
  const proxied: string[] = [];

  async function startApp(acquirer: string, providers: Type[], setup: AppSetup = {}): Promise<INestApplication> {
    const port = await freePort();
    const previous = process.env.GATEKEEPER_ADMIN_TOKEN;
    if (setup.tokenFromEnv) process.env.GATEKEEPER_ADMIN_TOKEN = TOKEN;
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [GatekeeperModule.forRoot({
          identity: { acquirer, group: 'production' },
          hazelcast: { clientConfig: testClientConfig(), mapPrefix },
          admin: setup.tokenFromEnv ? {} : { token: TOKEN },
          membership: { interval: '500ms', ...(setup.httpAddress && { httpAddress: setup.httpAddress(port) }) },
          schedules: { history: { flushInterval: '200ms' } },
        })],
        providers,
      }).setLogger(new CapturingLogger()).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      if (setup.listen === false) await app.init();
      else if (setup.host === undefined) await app.listen(port);
      else await app.listen(port, setup.host);
      ports.set(acquirer, port);
      return app;
    } finally {
      if (previous === undefined) delete process.env.GATEKEEPER_ADMIN_TOKEN;
      else process.env.GATEKEEPER_ADMIN_TOKEN = previous;
    }
  }

  /** A reverse proxy at <its address>/edge in front of 127.0.0.1:`port` (what an explicit httpAddress is for). */
  async function startProxy(port: () => number): Promise<number> {
    proxy = createServer((req, res) => {
      proxied.push(`${req.method} ${req.url}`);
      if (!req.url?.startsWith('/edge/')) return void res.writeHead(404).end();
      const upstream = request({ host: '127.0.0.1', port: port(), method: req.method, path: req.url.slice('/edge'.length), headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    return (proxy.address() as AddressInfo).port;
  }

  beforeAll(async () => {
    if (!existsSync(CLI_BIN)) throw new Error(`${CLI_BIN} is missing: run npm run build first (npm test does)`);
    // The oldest live node, as presence shows it, with nothing listening at its address: the CLI must pass it over.
    ghost = new PresenceRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }));
    await ghost.connect();
    const dead = REFUSING_ADDRESS;
    await ghost.announce(announcement({ instance: 'ghost/1', acquirer: 'ghost', group: 'production', startedAt: Date.now() - 60_000, version: '0.1.0', httpAddress: dead }, Date.now(), 120_000));
    // cli-a sets no address and takes its admin token from GATEKEEPER_ADMIN_TOKEN, as the quickstart does; cli-b sets no
    // address and listens on every interface (app.listen(port)); cli-c says it is behind a proxy (membership.httpAddress);
    // cli-quiet never listens.
    apps.push(await startApp('cli-a', [BillingJobs], { host: '127.0.0.1', tokenFromEnv: true }));
    apps.push(await startApp('cli-b', [BillingJobs, ReportJobs]));
    const proxyPort = await startProxy(() => ports.get('cli-c')!);
    others.push(await startApp('cli-c', [AuditJobs], { host: '127.0.0.1', httpAddress: () => `http://127.0.0.1:${proxyPort}/edge` }));
    others.push(await startApp('cli-quiet', [], { listen: false }));
    const [a, b] = apps.map((app) => app.get(BillingJobs));
    await a.charge(); // cli-a holds the job now
    a.failNext = true;
    await a.charge().catch(() => undefined);
    await a.charge();
    await b.charge(); // skipped: cli-a holds it
    await eventually('the three runs written to the cluster', async () => {
      const { code, stdout } = await run(['--json', 'jobs', 'history', 'BillingJobs.charge']);
      return code === 0 && JSON.parse(stdout).runs.filter((r: { outcome: string }) => r.outcome !== 'running').length === 3;
    }, { timeoutMs: 15_000, intervalMs: 300 });
  });
  afterAll(async () => {
    await Promise.all([...apps, ...others].map((app) => app.close()));
    apps = [];
    others = [];
    proxy?.closeAllConnections();
    await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
    await ghost?.withdraw('ghost/1').catch(() => undefined);
    await ghost?.close();
  });

  it('shows a job\'s history from the cluster alone: runs newest first, the failure, skipped ticks; --limit', async () => {
    const history = await json('jobs', 'history', 'BillingJobs.charge');
    expect(history.runs.map((r: { outcome: string; node: string; trigger: string }) => [r.trigger, r.node, r.outcome])).toEqual([
      ['schedule', 'cli-a', 'completed'], ['schedule', 'cli-a', 'failed'], ['schedule', 'cli-a', 'completed'],
    ]);
    expect(history).toMatchObject({ job: 'BillingJobs.charge', counts: { completed: 2, failed: 1 }, lastFailure: { error: 'card declined' }, missed: { count: 0 } });
    await eventually('cli-b\'s skipped tick written', async () => (await json('jobs', 'history', 'BillingJobs.charge')).skipped.NO_PERMIT_AVAILABLE === 1, { timeoutMs: 10_000, intervalMs: 300 });
    expect((await json('jobs', 'history', 'BillingJobs.charge', '--limit', '1')).runs).toEqual([history.runs[0]]);

    const table = await run(['jobs', 'history', 'BillingJobs.charge']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^BillingJobs\.charge: 3 run\(s\), newest first\nTRIGGER\s+INSTANT\s+NODE\s+TOKEN\s+STARTED\s+TOOK\s+OUTCOME\s+ERROR\n/);
    // The instant a direct call runs for is the schedule's latest (04:15 in New York), whole minutes in UTC too.
    expect(table.stdout).toMatch(/schedule\s+\S+:15:00\.000Z\s+cli-a\s+\d+\s+\S+Z\s+\S+\s+failed\s+card declined\n/);
    expect(table.stdout).toContain('runs since the history began: 2 completed, 1 failed');
    expect(table.stdout).toContain('skipped ticks (live nodes): NO_PERMIT_AVAILABLE 1');
    // Its one failure was followed by a success: whether or not a write saw it failing in between, it is not now.
    expect(table.stdout).toContain('health: not failing');
  });

  it("shows a job's slot ledger from the cluster alone: the instants that ran, newest first, with their node and outcome", async () => {
    const ledger = await json('jobs', 'slots', 'BillingJobs.charge');
    expect(ledger.job).toBe('BillingJobs.charge');
    expect(ledger.slots.map((s: { verdict: string; node: string; outcome: string }) => [s.verdict, s.node, s.outcome])).toEqual([
      ['ran', 'cli-a', 'completed'], ['ran', 'cli-a', 'failed'], ['ran', 'cli-a', 'completed'],
    ]);
    expect((await json('jobs', 'slots', 'BillingJobs.charge', '--limit', '1')).slots).toEqual([ledger.slots[0]]);
    const table = await run(['jobs', 'slots', 'BillingJobs.charge']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^BillingJobs\.charge: 3 row\(s\) of its slot ledger, newest first\nINSTANT\s+VERDICT\s+NODE\s+STARTED\s+TOOK\s+OUTCOME\s+ERROR\n/);
    expect(table.stdout).toMatch(/\S+:15:00\.000Z\s+ran\s+cli-a\s+\S+Z\s+\S+\s+failed\s+card declined\n/);
    const missing = await run(['--json', 'jobs', 'slots', 'Nobody.knows']);
    expect(missing.code).toBe(1);
  });

  it('lists the jobs the cluster knows, with their last run', async () => {
    const listed = await json('jobs', 'list');
    expect(listed).toEqual([expect.objectContaining({ job: 'BillingJobs.charge', counts: { completed: 2, failed: 1 }, lastRun: expect.objectContaining({ node: 'cli-a', outcome: 'completed' }) })]);
    const table = (await run(['jobs'])).stdout;
    expect(table).toMatch(/JOB\s+LAST RUN\s+TRIGGER\s+NODE\s+TOKEN\s+OUTCOME\s+RUNS\s+FAILED\s+MISSED\s+SKIPPED\nBillingJobs\.charge\s+\S+ ago\s+schedule\s+cli-a\s+\d+\s+completed\s+3\s+1\s+0\s+[01]\n/);
  });

  it('says what it cannot find: a job without history (exit 1), a bad --limit before connecting (exit 2)', async () => {
    const missing = await run(['--json', 'jobs', 'history', 'Nobody.knows']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toEqual({ error: expect.objectContaining({ code: 'REJECTED', job: 'Nobody.knows', message: expect.stringContaining('jobs with a history: BillingJobs.charge') }) });
    const bad = await run(['--json', '--members', '127.0.0.1:1', 'jobs', 'history', 'BillingJobs.charge', '--limit', '0']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stderr)).toEqual({ error: expect.objectContaining({ code: 'USAGE', field: 'limit', option: '--limit' }) });
  });

  it('describes a job by asking a live node that has it (passing over one that cannot be reached, and one without the job)', async () => {
    await apps[0].get(BillingJobs).charge(); // a tick: cli-a refreshes its permit (2 min: longer than the CLI calls that follow take on a loaded machine), so it holds the job now
    const described = await json('jobs', 'describe', 'BillingJobs.charge');
    expect(described).toMatchObject({
      job: 'BillingJobs.charge', semaphore: 'cli-billing', cron: '0 15 4 * * *', timeZone: 'America/New_York', paused: false,
      holders: [{ node: 'cli-a' }], counts: { completed: 3, failed: 1 }, lastFailure: { error: 'card declined' },
    });
    expect(described.nextRuns).toHaveLength(10);
    const text = await run(['jobs', 'describe', 'BillingJobs.charge']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('schedule: 0 15 4 * * * (zone America/New_York)');
    expect(text.stdout).toMatch(/held by: cli-a \(group production\), token \d+, (\d+m)?[\d.]+s left/);
    expect(text.stdout).toContain('(answered by cli-a at http://127.0.0.1:');
    // Only cli-b has this job: cli-a answers 404 and the question moves on.
    const other = await run(['jobs', 'describe', 'ReportJobs.nightly']);
    expect([other.code, other.stderr]).toEqual([0, '']);
    expect(other.stdout).toContain('(answered by cli-b at');
    expect((await json('jobs', 'describe', 'BillingJobs.charge', '--node', 'cli-b')).holders).toEqual([expect.objectContaining({ node: 'cli-a' })]);
    const nowhere = await run(['--json', 'jobs', 'describe', 'Nobody.knows']);
    expect(nowhere.code).toBe(1);
    expect(JSON.parse(nowhere.stderr)).toEqual({ error: expect.objectContaining({ code: 'REJECTED', job: 'Nobody.knows', reason: 'UNKNOWN_JOB', status: 404, message: expect.stringContaining('asked cli-a, cli-b, cli-c; not reached: ghost') }) });
  });

  it('answers a job\'s health from a live node: exit 0 when up, 5 when down, 2 for a bad --within', async () => {
    await apps[0].get(BillingJobs).charge();
    const up = await run(['jobs', 'health', 'BillingJobs.charge', '--within', '1h']);
    expect([up.code, up.stderr]).toEqual([0, '']);
    expect(up.stdout).toMatch(/^BillingJobs\.charge: up \(last completed \d{4}-\d\d-\d\dT[\d:.]+Z; answered by cli-a\)\n$/);
    const down = await run(['--json', 'jobs', 'health', 'BillingJobs.charge', '--within', '1ms']);
    expect(down.code).toBe(5);
    expect(JSON.parse(down.stderr)).toEqual({ error: expect.objectContaining({ code: 'JOB_DOWN', job: 'BillingJobs.charge', message: expect.stringMatching(/^BillingJobs\.charge last completed \d+ s ago .*more than 0\.001 s/) }) });
    const bad = await run(['--json', 'jobs', 'health', 'BillingJobs.charge', '--within', 'soon']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stderr)).toEqual({ error: expect.objectContaining({ code: 'USAGE', field: 'within', option: '--within' }) });
    expect((await run(['jobs', 'health', 'BillingJobs.charge'])).code).toBe(2);
  });

  it('reaches nodes that set no membership.httpAddress: each advertises where its app listens; an explicit one wins', async () => {
    const status = await json('status');
    const advertised = Object.fromEntries(status.participants.map((p: { acquirer: string; httpAddress?: string }) => [p.acquirer, p.httpAddress ?? null]));
    expect(advertised).toEqual({
      ghost: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      'cli-a': `http://127.0.0.1:${ports.get('cli-a')}`,
      // Bound to every interface: a reachable address of this machine, never 0.0.0.0 or ::.
      'cli-b': expect.stringMatching(new RegExp(`^http://(?!0\\.0\\.0\\.0|\\[::\\])[^/]+:${ports.get('cli-b')}$`)),
      'cli-c': expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/edge$/),
      'cli-quiet': null,
    });
    // cli-a took its admin token from GATEKEEPER_ADMIN_TOKEN, the variable the CLI sends; cli-b is reached at the address it advertised.
    for (const node of ['cli-a', 'cli-b']) {
      const text = await run(['jobs', 'describe', 'BillingJobs.charge', '--node', node]);
      expect([text.code, text.stderr]).toEqual([0, '']);
      expect(text.stdout).toContain(`(answered by ${node} at ${advertised[node]}/gatekeeper/jobs/BillingJobs.charge;`);
    }
    // cli-c is asked where its explicit address says (the proxy, path prefix kept), not where it listens.
    const audit = await run(['jobs', 'describe', 'AuditJobs.sweep']);
    expect([audit.code, audit.stderr]).toEqual([0, '']);
    expect(audit.stdout).toContain(`(answered by cli-c at ${advertised['cli-c']}/gatekeeper/jobs/AuditJobs.sweep;`);
    expect(proxied).toContain('GET /edge/gatekeeper/jobs/AuditJobs.sweep');
  });

  it('names what to set when the node asked says no address (its app never listened)', async () => {
    const quiet = await run(['--json', 'jobs', 'describe', 'BillingJobs.charge', '--node', 'cli-quiet']);
    expect(quiet.code).toBe(3);
    const { message } = JSON.parse(quiet.stderr).error;
    expect(message).toContain('no live node says where its HTTP server is (live: cli-quiet, none with an address)');
    expect(message).toContain('app.listen()');
    expect(message).toContain('set membership.httpAddress in its module options: http(s)://host:port[/prefix], e.g. http://10.0.0.5:3000');
  });

  it('needs the admin token for what asks an app: none is a usage error, a wrong one is refused', async () => {
    const none = await run(['--json', 'jobs', 'describe', 'BillingJobs.charge'], { GATEKEEPER_ADMIN_TOKEN: undefined });
    expect(none.code).toBe(2);
    expect(JSON.parse(none.stderr)).toEqual({ error: expect.objectContaining({ code: 'USAGE', option: '--admin-token' }) });
    const wrong = await run(['--json', 'jobs', 'run', 'BillingJobs.charge'], { GATEKEEPER_ADMIN_TOKEN: 'wrong-token-of-some-length' });
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stderr)).toEqual({ error: expect.objectContaining({ status: 403, node: 'cli-a', message: expect.stringContaining('GATEKEEPER_ADMIN_TOKEN') }) });
  });

  it('runs a job now on its holder, marked manual; refuses a paused or unknown one with the reason code', async () => {
    const [a, b] = apps.map((app) => app.get(BillingJobs));
    await a.charge(); // a tick: cli-a refreshes its permit (2 min: longer than the CLI calls that follow take on a loaded machine), so it holds the job when the request comes
    const before = a.runs;
    const started = await json('jobs', 'run', 'BillingJobs.charge', '--node', 'cli-b');
    expect(started).toMatchObject({ job: 'BillingJobs.charge', node: 'cli-a', token: expect.any(Number), requestId: expect.any(String) });
    await eventually('the manual run', () => a.runs === before + 1);
    expect(b.runs).toBe(0);
    await eventually('the manual run in the history', async () => (await json('jobs', 'history', 'BillingJobs.charge', '--limit', '1')).runs[0]?.request === started.requestId, { timeoutMs: 10_000, intervalMs: 300 });

    const unknown = await run(['--json', 'jobs', 'run', 'BillingJobs.nope']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error).toMatchObject({ reason: 'UNKNOWN_JOB', job: 'BillingJobs.nope' });
    const semaphores = apps[0].get(SemaphoreAdminService);
    await semaphores.pause('cli-billing');
    try {
      await eventually('both nodes to see the pause', () => apps.every((app) => app.get(SemaphoreAdminService).getDefinition('cli-billing')?.permits === 0));
      const paused = await run(['jobs', 'run', 'BillingJobs.charge']);
      expect(paused.code).toBe(1);
      expect(paused.stderr).toMatch(/^error: cli-a answered 409: Run now of "BillingJobs.charge" refused \(PAUSED\)/);
      const pausedJson = JSON.parse((await run(['--json', 'jobs', 'run', 'BillingJobs.charge'])).stderr);
      expect(pausedJson.error).toMatchObject({ code: 'REJECTED', exitCode: 1, status: 409, reason: 'PAUSED', node: 'cli-a' });
    } finally {
      await semaphores.resume('cli-billing');
    }
    expect(a.runs).toBe(before + 1);
    const text = await run(['jobs', 'run', 'BillingJobs.charge', '--timeout', '10s']);
    expect([text.code, text.stderr]).toEqual([0, '']);
    expect(text.stdout).toMatch(/^started BillingJobs\.charge on cli-[ab] \(instance \S+\) under token \d+ at \S+Z \(request \S+, asked via cli-a\)\n/);
    expect((await run(['jobs', 'run', 'BillingJobs.charge', '--timeout', '1h'])).code).toBe(2);
  });

  it('pauses and resumes a job by its name through a live node: its semaphore, with the permits it had', async () => {
    const semaphores = apps[0].get(SemaphoreAdminService);
    const paused = await json('jobs', 'pause', 'BillingJobs.charge');
    expect(paused).toEqual({ job: 'BillingJobs.charge', paused: true, by: 'semaphore', semaphore: 'cli-billing', permits: 0, alsoAffected: [] });
    expect(await semaphores.readDefinition('cli-billing')).toMatchObject({ permits: 0, pausedFrom: 1 });
    await eventually('cli-b to see the pause', async () => (await json('jobs', 'describe', 'BillingJobs.charge', '--node', 'cli-b')).paused === true);
    const refused = await run(['--json', 'jobs', 'run', 'BillingJobs.charge']);
    expect(JSON.parse(refused.stderr).error).toMatchObject({ reason: 'PAUSED' });

    const resumed = await run(['jobs', 'resume', 'BillingJobs.charge']);
    expect([resumed.code, resumed.stderr]).toEqual([0, '']);
    expect(resumed.stdout).toBe('resumed BillingJobs.charge: its semaphore cli-billing has 1 permit(s) (asked via cli-a)\n');
    expect((await semaphores.readDefinition('cli-billing')).permits).toBe(1);

    // Only cli-b has this job: cli-a answers 404 and the question moves on.
    const other = await run(['jobs', 'pause', 'ReportJobs.nightly']);
    expect([other.code, other.stderr, other.stdout]).toEqual([0, '', 'paused ReportJobs.nightly: its semaphore cli-reports paused (permits 0) (asked via cli-b)\n']);
    expect((await json('jobs', 'resume', 'ReportJobs.nightly', '--node', 'cli-b')).permits).toBe(1);
  });

  it('refuses a pause of an unknown job (exit 1, naming it), and without the token before connecting (exit 2)', async () => {
    const unknown = await run(['--json', 'jobs', 'pause', 'BillingJobs.nope']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error).toMatchObject({ code: 'REJECTED', reason: 'UNKNOWN_JOB', job: 'BillingJobs.nope', status: 404 });
    const none = await run(['--json', 'jobs', 'resume', 'BillingJobs.charge'], { GATEKEEPER_ADMIN_TOKEN: undefined });
    expect(none.code).toBe(2);
    expect(JSON.parse(none.stderr)).toEqual({ error: expect.objectContaining({ code: 'USAGE', option: '--admin-token' }) });
    expect((await apps[0].get(SemaphoreAdminService).readDefinition('cli-billing')).permits).toBe(1);
    const help = await run(['jobs', 'pause', '--help']);
    expect(help.stdout).toContain('--force');
    expect(help.stdout).toContain('every job sharing that semaphore stops too');
    expect((await run(['jobs', '--help'])).stdout).toMatch(/pause \[options\] <job>[\s\S]*resume \[options\] <job>/);
  });

  it('with --wait, prints how the run ended and exits 4 unless it completed', async () => {
    const [a, b] = apps.map((app) => app.get(BillingJobs));
    const completed = await run(['jobs', 'run', 'BillingJobs.charge', '--wait', '30s']);
    expect([completed.code, completed.stderr]).toEqual([0, '']);
    expect(completed.stdout).toMatch(/\nit completed in \d+ ms\n/);
    a.failNext = true;
    b.failNext = true;
    const failed = await run(['--json', 'jobs', 'run', 'BillingJobs.charge', '--wait']);
    expect(failed.code).toBe(4);
    expect(JSON.parse(failed.stderr).error).toMatchObject({
      code: 'RUN_NOT_COMPLETED', exitCode: 4, job: 'BillingJobs.charge', outcome: 'failed', token: expect.any(Number),
      message: expect.stringMatching(/^BillingJobs\.charge started on cli-[ab] under token \d+ and ended failed: card declined$/),
    });
    a.failNext = false;
    b.failNext = false;
  });

  // Last: it withdraws the ghost and stops cli-quiet, the two nodes that cannot be asked.
  it('forgets the history of a job whose code is gone, once every live node said it has none; refuses while one has it', async () => {
    const history = new HistoryRecordStore(new HazelcastBackend({ connection: new HazelcastConnection({ clientConfig: testClientConfig() }), mapPrefix }));
    await history.connect();
    try {
      for (const job of ['Gone.forced', 'Gone.asked']) {
        await history.write(job, undefined, { ...emptyHistory(job), revision: 1, counts: { completed: 1 }, updatedAt: Date.now(), createdAt: Date.now() });
      }
      const alive = await run(['jobs', 'forget', 'BillingJobs.charge']);
      expect([alive.code, alive.stderr]).toEqual([1, 'error: "BillingJobs.charge" is not gone: cli-a, cli-b have it; nothing removed (forget a job once no node runs its code)\n']);
      const unsure = await run(['jobs', 'forget', 'Gone.asked']);
      expect(unsure.code).toBe(1);
      expect(unsure.stderr).toMatch(/^error: could not ask every live node whether it has "Gone\.asked": cli-quiet \(no HTTP address\); ghost \(http:\/\/127\.0\.0\.1:\d+\/gatekeeper\/jobs\/Gone\.asked: ECONNREFUSED\); nothing removed \(--force forgets it without asking\)\n$/);
      expect((await json('jobs', 'forget', 'Gone.forced', '--force'))).toEqual({ forgotten: 'Gone.forced' });

      await ghost.withdraw('ghost/1');
      await others.pop()!.close(); // cli-quiet
      const forgotten = await run(['jobs', 'forget', 'Gone.asked']);
      expect([forgotten.code, forgotten.stdout]).toEqual([0, 'Forgot job "Gone.asked": its run history is removed, and it leaves jobs list (a node that runs it again starts a new history).\n']);
      expect((await json('jobs', 'list')).map((j: { job: string }) => j.job)).toEqual(['BillingJobs.charge']);
      expect((await run(['jobs', 'history', 'Gone.asked'])).code).toBe(1);
      expect(await history.read('BillingJobs.charge')).toBeDefined();
    } finally {
      await history.close();
    }
  });
});
