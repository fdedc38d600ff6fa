import { Injectable } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { Test } from '@nestjs/testing';
import { ClusterService, GatekeeperModule, LeaderOnly, ScheduleService, NotFoundError } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { cli, CLI_BIN } from '../support/cli-process';
import { eventually } from '../support/eventually';
import { testCluster, uniquePrefix } from '../support/test-cluster';

const JOB = 'leader:reports:ReportSender.send';
const LEASE_MS = 2_000;
const TOKEN = 'leader-history-admin-token-0123456789';

/** A leader-only method the test calls directly on each node (as a tick would). */
@Injectable()
class ReportSender {
  constructor(private readonly cluster: ClusterService) {}

  /** Fails with `failWith`; with `untilLost`, runs until its leadership ends and stops at the signal. */
  @LeaderOnly('reports')
  async send(how: { failWith?: string; untilLost?: () => void } = {}): Promise<string> {
    const lease = this.cluster.currentLeadership()!;
    if (how.failWith) throw new Error(how.failWith);
    if (how.untilLost) {
      how.untilLost();
      await new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve(), { once: true }));
      lease.assertValid();
    }
    return `sent under epoch ${lease.epoch}`;
  }
}

/**
 * The run history of a `@LeaderOnly` method on a real member, across a handover: each run with its node, instance
 * and the leadership's epoch, the failure's message, the run cut short by the leader's shutdown, and the calls the
 * follower skipped (counted, not listed); read through `ScheduleService.history` and the CLI's `jobs history`.
 */
describe('run history of @LeaderOnly methods (real member, two nodes, a handover)', () => {
  let nodes: TestNode[] = [];
  let mapPrefix: string;

  beforeEach(() => {
    mapPrefix = uniquePrefix('leader-history');
  });
  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    nodes = [];
  });

  async function node(acquirer: string): Promise<TestNode> {
    const started = await startNode({
      identity: { acquirer, group: 'production' }, mapPrefix, providers: [ReportSender], schedule: true,
      elections: [{ name: 'reports', lease: `${LEASE_MS}ms` }],
      schedules: { history: { flushInterval: '200ms' } },
    });
    nodes.push(started);
    return started;
  }

  it('shows both leaders\' runs with their epochs, the failure, the aborted run and the follower\'s skipped calls', async () => {
    const a = await node('node-a');
    const b = await node('node-b');
    const leader = await eventually('a leader of "reports"', () => [a, b].find((n) => n.get(ClusterService).isLeader('reports')), { timeoutMs: 5 * LEASE_MS });
    const follower = leader === a ? b : a;
    const [leaderName, followerName] = leader === a ? ['node-a', 'node-b'] : ['node-b', 'node-a'];
    const firstEpoch = leader.get(ClusterService).leadership('reports')!.epoch;

    // Before any run, the follower already knows the job (its @LeaderOnly method), with nothing in it.
    expect(await follower.get(ScheduleService).history(JOB)).toMatchObject({ job: JOB, runs: [], counts: {} });

    const sender = leader.get(ReportSender);
    await expect(sender.send()).resolves.toBe(`sent under epoch ${firstEpoch}`);
    await expect(sender.send({ failWith: 'the mail relay refused the report' })).rejects.toThrow('the mail relay refused the report');
    await expect(sender.send()).resolves.toBe(`sent under epoch ${firstEpoch}`);
    for (let i = 0; i < 3; i++) await expect(follower.get(ReportSender).send()).resolves.toBeUndefined();

    // A run still going when the leader's app stops: its signal fires at the drain, it stops, shutdown goes on.
    let cutShort!: Promise<unknown>;
    await new Promise<void>((began) => {
      cutShort = sender.send({ untilLost: began });
    });
    await leader.close();
    await expect(cutShort).resolves.toBeUndefined();

    const taker = follower.get(ClusterService);
    await eventually('the follower leads "reports"', () => taker.isLeader('reports'), { timeoutMs: 5 * LEASE_MS });
    const secondEpoch = taker.leadership('reports')!.epoch;
    expect(secondEpoch).toBeGreaterThan(firstEpoch);
    await expect(follower.get(ReportSender).send()).resolves.toBe(`sent under epoch ${secondEpoch}`);

    const history = await follower.get(ScheduleService).history(JOB);
    const runs = history.runs.map((r) => [r.trigger, r.node, r.token, r.outcome, r.error]);
    // Newest first; the old leader's runs may share a millisecond, so their order among themselves is not asserted.
    expect(runs[0]).toEqual(['call', followerName, secondEpoch, 'completed', undefined]);
    expect(runs.slice(1)).toHaveLength(4);
    expect(runs.slice(1)).toEqual(expect.arrayContaining([
      ['call', leaderName, firstEpoch, 'aborted', expect.stringContaining('Leadership of "reports"')],
      ['call', leaderName, firstEpoch, 'completed', undefined],
      ['call', leaderName, firstEpoch, 'failed', 'the mail relay refused the report'],
      ['call', leaderName, firstEpoch, 'completed', undefined],
    ]));
    const instances = new Set(history.runs.map((r) => r.instance));
    expect(instances).toEqual(new Set([leader.get(ClusterService).instanceId, taker.instanceId]));
    expect(history.runs.every((r) => r.durationMs !== undefined && r.startedAt > 0)).toBe(true);
    expect(history).toMatchObject({ counts: { completed: 3, failed: 1, aborted: 1 }, lastFailure: { outcome: 'aborted', node: leaderName } });
    expect(history.skipped).toEqual({ NOT_LEADER: 3 });

    // describe: the election's semaphore, held by the new leader under its epoch; no schedule.
    expect(await follower.get(ScheduleService).describe(JOB)).toMatchObject({
      job: JOB, semaphore: 'election:reports', mode: 'hold', holders: [{ node: followerName, token: secondEpoch }], nextRuns: [],
      lastRun: { node: followerName, token: secondEpoch, outcome: 'completed' }, skipped: { NOT_LEADER: 3 },
    });
  });

  it('reads the history from the cluster alone with `jobs history` (the leader\'s runs written in the background)', async () => {
    if (!existsSync(CLI_BIN)) throw new Error(`${CLI_BIN} is missing: run npm run build first (npm test does)`);
    const a = await node('node-a');
    const b = await node('node-b');
    const leader = await eventually('a leader of "reports"', () => [a, b].find((n) => n.get(ClusterService).isLeader('reports')), { timeoutMs: 5 * LEASE_MS });
    const epoch = leader.get(ClusterService).leadership('reports')!.epoch;
    await leader.get(ReportSender).send();
    await expect(leader.get(ReportSender).send({ failWith: 'no recipients' })).rejects.toThrow('no recipients');

    const { clusterName, addresses } = testCluster();
    const env = { GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName, GATEKEEPER_MAP_PREFIX: mapPrefix };
    const written = await eventually('both runs written to the cluster', async () => {
      const { code, stdout } = await cli(['--json', 'jobs', 'history', JOB], env);
      const history = code === 0 ? JSON.parse(stdout) : undefined;
      return history?.runs.length === 2 ? history : undefined;
    }, { timeoutMs: 15_000, intervalMs: 300 });
    // Both runs may start within one millisecond: each is kept, in either order.
    expect(written.runs.map((r: { token: number; outcome: string; error?: string }) => [r.token, r.outcome, r.error])).toEqual(expect.arrayContaining([
      [epoch, 'failed', 'no recipients'],
      [epoch, 'completed', undefined],
    ]));
  });

  it('serves the history and the description through the admin API, the colons of the name in the path', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        identity: { acquirer: 'admin-node', group: 'production' }, backend: 'memory', membership: false,
        admin: { path: 'ops', token: TOKEN }, elections: [{ name: 'reports', lease: '2s' }],
      })],
      providers: [ReportSender],
    }).setLogger(new CapturingLogger()).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const cluster = app.get(ClusterService);
      await eventually('this node leads "reports"', () => cluster.isLeader('reports'), { timeoutMs: 5 * LEASE_MS });
      await expect(app.get(ReportSender).send({ failWith: 'relay down' })).rejects.toThrow('relay down');
      const base = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ops/jobs/`;
      const get = async (path: string) => {
        const response = await fetch(base + path, { headers: { authorization: `Bearer ${TOKEN}` } });
        return { status: response.status, body: await response.json() };
      };
      const epoch = cluster.leadership('reports')!.epoch;
      for (const name of [JOB, encodeURIComponent(JOB)]) {
        expect(await get(`${name}/history`)).toMatchObject({
          status: 200, body: { job: JOB, runs: [{ trigger: 'call', node: 'admin-node', token: epoch, outcome: 'failed', error: 'relay down' }] },
        });
      }
      expect(await get(JOB)).toMatchObject({ status: 200, body: { semaphore: 'election:reports', holders: [{ node: 'admin-node', token: epoch }] } });
    } finally {
      await app.close();
    }
  });

  it('refuses a name that is neither a leader-only method here nor in the history', async () => {
    const a = await node('node-a');
    await expect(a.get(ScheduleService).history('leader:reports:ReportSender.nope')).rejects.toThrow(NotFoundError);
  });
});
