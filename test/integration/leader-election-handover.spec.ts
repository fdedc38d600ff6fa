import { PermitRecordStore, SEMAPHORE_MAP } from '../../lib/permits/permit-record.store';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterService, type LeaderLease } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { systemClock } from '../../lib/core/clock';
import { validateDefinition } from '../../lib/permits/definition.validator';
import type { Clock } from '../../lib/core/clock';
import { electionSemaphore } from '../../lib/elections/election';
import { LeaderCandidate, candidatePermitsOf } from '../../lib/elections/leader-candidate';
import { decodeEntry } from '../../lib/permits/semaphore-entry.codec';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';

/**
 * Leader election's corner cases, each a way two leaders could happen, or none ever: each test states what the
 * leader-election guide (docs/leader-election.md) or the doc comments promise and fails while the promise is broken. Memory
 * stores only: the races are in the candidate and the module, not in the store.
 */

const semaphore = electionSemaphore('leader');

/** What each node's leader work did, by instance id. */
interface Term {
  epoch: number;
  started: number;
  stopped?: number;
}
const terms = new Map<string, Term[]>();
/** How each test wants the leader work to behave. */
const behaviour: { stopAfterSignalMs: number; ignoreSignalMs?: number; nested?: boolean } = { stopAfterSignalMs: 0 };
const nestedLaunches: number[] = [];

@Injectable()
class TermRecordingWork implements OnModuleInit {
  constructor(private readonly cluster: ClusterService) {}

  onModuleInit(): void {
    let registeredNested = false;
    this.cluster.whileLeader(async (lease: LeaderLease) => {
      const me = this.cluster.instanceId;
      const term: Term = { epoch: lease.epoch, started: Date.now() };
      terms.set(me, [...(terms.get(me) ?? []), term]);
      if (behaviour.nested && !registeredNested) {
        // Leader work that starts more leader work (synchronously, before its first await).
        registeredNested = true;
        this.cluster.whileLeader((inner) => {
          nestedLaunches.push(inner.epoch);
        });
      }
      if (behaviour.ignoreSignalMs !== undefined) {
        await sleep(behaviour.ignoreSignalMs); // work that does not stop on the signal in time
      } else {
        await new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve(), { once: true }));
        await sleep(behaviour.stopAfterSignalMs); // stopping takes a moment
      }
      term.stopped = Date.now();
    });
  }
}

describe('leadership is never handed over while its work may still act, and a lost epoch is never resumed', () => {
  describe('through the module', () => {
    let permits: MemoryBackend;
    let presence: MemoryBackend;
    const nodes: TestNode[] = [];
    beforeEach(() => {
      permits = new MemoryBackend();
      presence = new MemoryBackend();
      terms.clear();
      nestedLaunches.length = 0;
      behaviour.stopAfterSignalMs = 0;
      behaviour.ignoreSignalMs = undefined;
      behaviour.nested = false;
    });
    afterEach(async () => {
      await Promise.all(nodes.splice(0).map((n) => n.close()));
    });

    async function node(acquirer: string, extra: Parameters<typeof startNode>[0] = {}): Promise<TestNode> {
      const started = await startNode({
        backend: 'memory',
      backends: { permits, presence },
        identity: { acquirer, group: 'production' },
        membership: { interval: '300ms' },
        elections: [{ name: 'leader', lease: '1500ms' }],
        maxClockSkew: '50ms',
        providers: [TermRecordingWork],
        ...extra,
      });
      nodes.push(started);
      return started;
    }
    const cluster = (n: TestNode) => n.get(ClusterService);
    const leaders = (list: TestNode[]) => list.filter((n) => cluster(n).isLeader());
    const storedPermits = () => decodeEntry(semaphore, permits.records.map(SEMAPHORE_MAP).get(semaphore)!).permits;

    it('leader work still running after shutdownTimeout keeps the lease until it lapses (as the guide says), so no other node leads before', async () => {
      behaviour.ignoreSignalMs = 2_500;
      const list = [await node('a', { shutdownTimeout: '200ms' }), await node('b', { shutdownTimeout: '200ms' })];
      const leader = await eventually('one leader', () => leaders(list).length === 1 && leaders(list)[0]);
      const other = list.find((n) => n !== leader)!;
      const epoch = cluster(leader).leadership()!.epoch;

      // Follow the old leader's permit in the store while it shuts down (it is renewed during the drain).
      let lapsesAt = 0;
      const sample = setInterval(() => {
        for (const p of storedPermits()) if (p.fencingToken === epoch) lapsesAt = Math.max(lapsesAt, p.expiresAt + 50);
      }, 5);
      await leader.close(); // drain gives up after 200 ms: the candidate leaves the permit to expire...
      clearInterval(sample);
      const old = terms.get(leader.gatekeeper.instanceId)![0];
      expect(old.stopped).toBeUndefined(); // ...because the old leader's work is still running
      const stillStored = storedPermits().some((p) => p.fencingToken === epoch);
      const shutdownLog = list.flatMap((n) => n.logger.entries.map((e) => e.message)).filter((m) => /still running|at shutdown/.test(m));

      const next = await eventually('the next leader', () => terms.get(other.gatekeeper.instanceId)?.[0]);
      await eventually('the old work finished', () => old.stopped !== undefined, { timeoutMs: 5_000 });
      // Guards: shutdown releasing every held permit not in use by a running job, the election's included, right after
      // the drain timed out (the leader's lease is not a job's).
      expect({ stillStored, electedBeforeLapse: next.started < lapsesAt, byMs: lapsesAt - next.started, shutdownLog }).toEqual(
        expect.objectContaining({ stillStored: true, electedBeforeLapse: false }),
      );
    }, 15_000);

    it('resign() hands over only after the resigning node\'s leader work stopped (as shutdown does)', async () => {
      behaviour.stopAfterSignalMs = 300;
      const list = [await node('a'), await node('b')];
      const leader = await eventually('one leader', () => leaders(list).length === 1 && leaders(list)[0]);
      const other = list.find((n) => n !== leader)!;

      expect(await cluster(leader).resign()).toBe(true);
      const next = await eventually('the next leader\'s work', () => terms.get(other.gatekeeper.instanceId)?.[0]);
      const old = await eventually('the old work stopped', () => terms.get(leader.gatekeeper.instanceId)![0].stopped !== undefined && terms.get(leader.gatekeeper.instanceId)![0]);
      // Guards: a resign that releases at once after the signal, so the other node's leader work starts while the old
      // one is still winding down.
      expect(next.started).toBeGreaterThanOrEqual(old.stopped!);
    });

    it('leader work registered (whileLeader) from inside leader work runs once per term, not twice', async () => {
      behaviour.nested = true;
      const solo = await node('solo');
      const epoch = await eventually('leader', () => cluster(solo).leadership()?.epoch);
      await eventually('nested work launched', () => nestedLaunches.length > 0);
      await cluster(solo).resign(); // ends the term: every launch of it has happened by now
      // Guards: elected() iterating the live set of work while the outer work adds to it, while whileLeader() also
      // launches the new work on the current lease: the nested work launched twice for the same epoch.
      expect(nestedLaunches.filter((e) => e === epoch)).toHaveLength(1);
    });
  });

  describe('LeaderCandidate', () => {
    let backend: MemoryBackend;
    const cleanup: Array<() => Promise<void>> = [];
    beforeEach(() => {
      backend = new MemoryBackend();
    });
    afterEach(async () => {
      for (const close of cleanup.splice(0).reverse()) await close();
    });

    async function candidate(name: string, clock: Clock, skewMs: number, releaseDelayMs = 0): Promise<LeaderCandidate> {
      const store = new PermitRecordStore(backend.node());
      await store.connect({ clock });
      const engine = new PermitEngine(store, { acquirer: name, group: 'g', instance: `${name}/1` }, clock, { clockSkewMs: skewMs });
      const permits = candidatePermitsOf(engine, store);
      // A release that takes a round trip (as on Hazelcast), so races with it can be seen.
      const slow = { ...permits, release: async (p: Parameters<typeof permits.release>[0]) => {
        await sleep(releaseDelayMs);
        await permits.release(p);
      } };
      const c = new LeaderCandidate(semaphore, 'leader', releaseDelayMs ? slow : permits, { clock, clockSkewMs: skewMs });
      cleanup.push(async () => {
        await c.stop();
        engine.dispose();
        await store.close();
      });
      return c;
    }

    async function define(leaseMs: number): Promise<SemaphoreAdmin> {
      const store = new PermitRecordStore(backend.node());
      await store.connect({ clock: systemClock });
      cleanup.push(() => store.close());
      const admin = new SemaphoreAdmin(store, systemClock);
      await admin.define(validateDefinition({ name: semaphore, duration: leaseMs }));
      return admin;
    }
    const stored = () => decodeEntry(semaphore, backend.records.map(SEMAPHORE_MAP).get(semaphore)!);

    it('assertValid() throws once leadership ended or its time is up, before any timer fires', async () => {
      await define(900);
      let offset = 0;
      const clock: Clock = { now: () => Date.now() + offset };
      const a = await candidate('a', clock, 20);
      a.start();
      const lease = await eventually('leader', () => a.lease);
      expect(() => lease.assertValid()).not.toThrow();
      offset = 2_000; // frozen (SIGSTOP) past the lease: no timer has run yet
      expect(lease.isValid()).toBe(false);
      expect(() => lease.assertValid()).toThrow(/Leadership of "leader" \(epoch \d+\) is lost: expired/);
      offset = 0;
      const next = await eventually('leader again, on a new epoch', () => a.lease);
      expect(next.epoch).toBeGreaterThan(lease.epoch);
      await a.resign();
      expect(() => next.assertValid()).toThrow(/is lost: resigned/);
    });

    it('a leadership lost while its permit could not be released is never resumed on the old epoch', async () => {
      await define(900);
      let offset = 0;
      const clock: Clock = { now: () => Date.now() + offset };
      const store = new PermitRecordStore(backend.node());
      await store.connect({ clock });
      const engine = new PermitEngine(store, { acquirer: 'a', group: 'g', instance: 'a/1' }, clock, { clockSkewMs: 20 });
      // Releases that never land (a cut-off link): the old permit stays in the store, still this instance's.
      const permits = { ...candidatePermitsOf(engine, store), release: async () => undefined };
      const a = new LeaderCandidate(semaphore, 'leader', permits, { clock, clockSkewMs: 20 });
      cleanup.push(async () => {
        await a.stop();
        engine.dispose();
        await store.close();
      });
      a.start();
      const first = await eventually('leader', () => a.lease);
      offset = 880; // the lease's renew deadline passed (a stall): lost by its own clock...
      expect(() => first.assertValid()).toThrow(/is lost/);
      offset = 0; // ...while its permit, never released, still holds in the store
      expect(stored().permits.map((p) => p.fencingToken)).toEqual([first.epoch]);
      // Guards: the next attempt refreshing the old permit and leading on its epoch again (two terms, one epoch).
      const next = await eventually('leading again', () => a.lease, { timeoutMs: 5_000 });
      expect(next.epoch).toBeGreaterThan(first.epoch);
    });

    it('stop() racing a resign() returns only once the resign let the permit go (shutdown must not run ahead of it)', async () => {
      await define(900);
      const a = await candidate('a', systemClock, 20, 100);
      a.start();
      const lease = await eventually('leader', () => a.lease);
      const resigned = a.resign(); // e.g. a request handler resigns while SIGTERM arrives
      let stopDrainCalled = false;
      await a.stop(async () => {
        stopDrainCalled = true;
      });
      const heldAfterStop = stored().permits.some((p) => p.fencingToken === lease.epoch);
      await resigned;
      // Guards: stop() finding nothing to step down (resign() cleared it) and returning while the permit is still
      // held, its release in flight.
      expect({ stopDrainCalled, heldAfterStop }).toEqual({ stopDrainCalled: false, heldAfterStop: false });
    });

    it('after resign, a wall-clock step back does not keep the candidate standing back (and burning epochs) for the step', async () => {
      await define(300);
      let offset = 0;
      const clock: Clock = { now: () => Date.now() + offset };
      const solo = await candidate('solo', clock, 20);
      solo.start();
      await eventually('leader', () => solo.lease);
      expect(await solo.resign()).toBe(true);
      offset = -3_600_000; // NTP steps the clock back an hour
      // Guards: a stand-back kept on the wall clock, which lasts the whole hour (granted, released, again).
      const next = await eventually('leading again after one retry interval', () => solo.lease, { timeoutMs: 3_000 });
      expect(next.isValid()).toBe(true);
    });

    it('a lease the skew bound leaves too little of (lease 120 ms, skew 100 ms) is let go and reported, not sat on', async () => {
      await define(120);
      const reports: string[] = [];
      const store = new PermitRecordStore(backend.node());
      await store.connect({ clock: systemClock });
      const engine = new PermitEngine(store, { acquirer: 'a', group: 'g', instance: 'a/1' }, systemClock, { clockSkewMs: 100 });
      const a = new LeaderCandidate(semaphore, 'leader', candidatePermitsOf(engine, store), {
        clock: systemClock, clockSkewMs: 100, onUnusableLease: (message) => reports.push(message),
      });
      cleanup.push(async () => {
        await a.stop();
        engine.dispose();
        await store.close();
      });
      a.start();
      // Guards: a grant it will not lead on kept and refreshed at every retry, so the slot stays occupied for good.
      await eventually('the unusable grant reported and let go', () => reports.length > 0 && stored().permits.length === 0);
      expect(a.lease).toBeUndefined();
      expect(reports).toEqual([expect.stringContaining('too little to lead on')]);
    });
  });
});
