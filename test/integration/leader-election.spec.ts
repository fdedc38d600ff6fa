import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Interval, SchedulerRegistry } from '@nestjs/schedule';
import type { Subscription } from 'rxjs';
import { ClusterService, InvalidInputError, LeaderOnly, WaitTimeoutError, NotFoundError, type ClusterChange, type LeaderLease } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';

/** What the leader-only parts of one node did. */
interface Trace {
  ticks: number[];
  tickLeases: number[];
  work: Array<{ epoch: number; started: number; stopped?: number; stopReason?: string }>;
}

const traces = new Map<string, Trace>();

/** A provider with a scheduled leader-only method and leader-only background work, as users write them. */
@Injectable()
class LeaderJobs implements OnModuleInit {
  constructor(private readonly cluster: ClusterService) {}

  private get trace(): Trace {
    const me = this.cluster.instanceId;
    if (!traces.has(me)) traces.set(me, { ticks: [], tickLeases: [], work: [] });
    return traces.get(me)!;
  }

  @Interval(50)
  @LeaderOnly()
  async distribute(): Promise<void> {
    const lease = this.cluster.currentLeadership()!;
    lease.assertValid();
    this.trace.ticks.push(Date.now());
    this.trace.tickLeases.push(lease.epoch);
  }

  onModuleInit(): void {
    this.cluster.whileLeader(async (lease: LeaderLease) => {
      const entry: Trace['work'][number] = { epoch: lease.epoch, started: Date.now() };
      this.trace.work.push(entry);
      await new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve(), { once: true }));
      // Stopping takes a moment: shutdown must wait for it before it releases leadership.
      await new Promise((resolve) => setTimeout(resolve, 100));
      entry.stopped = Date.now();
      entry.stopReason = (lease.signal.reason as Error).message;
    });
  }
}

describe('leader election through the module (ClusterService, @LeaderOnly, whileLeader)', () => {
  let permits: MemoryBackend;
  let presence: MemoryBackend;
  const nodes: TestNode[] = [];
  const subscriptions: Subscription[] = [];
  beforeEach(() => {
    permits = new MemoryBackend();
    presence = new MemoryBackend();
    traces.clear();
  });
  afterEach(async () => {
    subscriptions.splice(0).forEach((s) => s.unsubscribe());
    await Promise.all(nodes.splice(0).map((n) => n.close()));
  });

  async function node(acquirer: string, extra: Parameters<typeof startNode>[0] = {}): Promise<TestNode> {
    const started = await startNode({
      backend: 'memory',
      backends: { permits, presence },
      identity: { acquirer, group: 'production' },
      membership: { interval: '300ms' },
      elections: [{ name: 'leader', lease: '900ms' }],
      maxClockSkew: '50ms',
      providers: [LeaderJobs],
      schedule: true,
      ...extra,
    });
    nodes.push(started);
    return started;
  }
  const cluster = (n: TestNode) => n.get(ClusterService);
  const leaders = (list: TestNode[]) => list.filter((n) => cluster(n).isLeader());

  it('elects one leader that every node reports with the same participants; only it runs @LeaderOnly ticks and whileLeader work', async () => {
    const list = [await node('a'), await node('b'), await node('c')];
    const leader = await eventually('one leader', () => leaders(list).length === 1 && leaders(list)[0]);
    await eventually('the same status on every node', () =>
      list.every((n) => {
        const status = cluster(n).status();
        return status.leader?.instance === leader.gatekeeper.instanceId && status.participants.length === 3;
      }));
    const status = cluster(list[1]).status();
    expect(status.epoch).toBe(cluster(leader).leadership()!.epoch);
    expect(status.leaderParticipant?.acquirer).toBe(leader.gatekeeper.identity.acquirer);
    expect(status.current?.instance).toBe(list[1].gatekeeper.instanceId);
    expect(status.isLeader).toBe(list[1] === leader);

    const mine = () => traces.get(leader.gatekeeper.instanceId);
    await eventually('leader ticks', () => (mine()?.ticks.length ?? 0) >= 5);
    for (const other of list.filter((n) => n !== leader)) expect(traces.get(other.gatekeeper.instanceId)?.ticks ?? []).toEqual([]);
    expect(new Set(mine()!.tickLeases)).toEqual(new Set([status.epoch]));
    expect(mine()!.work).toEqual([expect.objectContaining({ epoch: status.epoch })]);
    // The scheduling decorator's metadata survived: the interval is registered.
    expect(leader.get(SchedulerRegistry).getIntervals()).toHaveLength(1);
    // A direct call elsewhere returns at once.
    await expect(list.find((n) => n !== leader)!.get(LeaderJobs).distribute()).resolves.toBeUndefined();
    // Skipped ticks are verbose lines (Nest's default logger prints debug too), whichever node's logger got them.
    const skips = list.flatMap((n) => n.logger.entries.filter((e) => e.message.includes('skipped, not the leader')));
    expect(skips.length).toBeGreaterThan(0);
    expect(skips.filter((e) => e.level !== 'verbose')).toEqual([]);
  });

  it('hands over on graceful shutdown: work stopped before the release, a new leader with a larger epoch, all reported as changes', async () => {
    const list = [await node('a'), await node('b'), await node('c')];
    const leader = await eventually('one leader', () => leaders(list)[0]);
    const oldEpoch = cluster(leader).leadership()!.epoch;
    const rest = list.filter((n) => n !== leader);
    const seen: ClusterChange[] = [];
    subscriptions.push(cluster(rest[0]).changes().subscribe((change) => seen.push(change)));

    const closedAt = Date.now();
    await leader.close();
    const next = await eventually('a new leader', () => leaders(rest).length === 1 && leaders(rest)[0]);
    const newEpoch = cluster(next).leadership()!.epoch;
    expect(newEpoch).toBeGreaterThan(oldEpoch);
    const work = traces.get(leader.gatekeeper.instanceId)!.work[0];
    expect(work.stopReason).toMatch(/shutting down/);
    // Elected after the old leader's work stopped, and long before its 900 ms lease could have lapsed: released.
    const elected = traces.get(next.gatekeeper.instanceId)!.work[0];
    expect(elected.started).toBeGreaterThanOrEqual(work.stopped!);
    expect(elected.started - closedAt).toBeLessThan(900);
    await eventually('changes on the watching node', () =>
      seen.some((c) => c.type === 'leader-changed' && c.leader?.epoch === newEpoch) &&
      seen.some((c) => c.type === 'participant-left' && c.participant.instance === leader.gatekeeper.instanceId));
    if (next === rest[0]) expect(seen).toContainEqual({ type: 'leader-elected', election: 'leader', epoch: newEpoch });
  });

  it('resign moves leadership elsewhere; waitForLeader resolves with it, and times out while the election is paused', async () => {
    const list = [await node('a'), await node('b')];
    const first = await eventually('one leader', () => leaders(list)[0]);
    expect(await cluster(first).resign()).toBe(true);
    const other = list.find((n) => n !== first)!;
    const leader = await cluster(first).waitForLeader({ timeout: '5s' });
    expect(leader.instance).toBe(other.gatekeeper.instanceId);
    await first.semaphores.pause('election:leader', { force: true });
    await eventually('no leader while paused', () => leaders(list).length === 0 && cluster(first).leader() === undefined);
    await expect(cluster(first).waitForLeader({ timeout: '300ms' })).rejects.toBeInstanceOf(WaitTimeoutError);
    await expect(cluster(first).waitForLeader({ timeout: '300ms' })).rejects.toMatchObject({ kind: 'leader', id: 'leader', timeoutMs: 300 });
    await first.semaphores.resume('election:leader', undefined, { force: true });
    await expect(cluster(other).waitForLeader({ timeout: '5s' })).resolves.toEqual(expect.objectContaining({ election: 'leader' }));
  });

  it('names what is wrong: an election this node does not stand in, and bad election options', async () => {
    const solo = await node('solo');
    expect(() => cluster(solo).isLeader('reports')).toThrow(NotFoundError);
    expect(() => cluster(solo).status('reports')).toThrow(/Election "reports".*elections/);
    const bad = await startNode({ backend: 'memory', elections: [{ name: 'leader', lease: 'soon' }], providers: [] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(bad).toBeInstanceOf(InvalidInputError);
    expect((bad as Error).message).toContain('invalid elections[0].lease');
  });
});
