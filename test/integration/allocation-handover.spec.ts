import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryBackend } from '../../lib/testing';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { systemClock } from '../../lib/core/clock';
import { validateDefinition } from '../../lib/permits/definition.validator';
import type { Permit } from '../../lib';
import { allocationSemaphore } from '../../lib/allocation/allocation';
import { AllocationParticipant } from '../../lib/allocation/allocation-participant';
import { allocationPermitsOf, type AllocationPermits } from '../../lib/allocation/allocation-permits';
import { compareAndSetLoop } from '../../lib/permits/compare-and-set.loop';
import { Deadline } from '../../lib/core/deadline';
import { DenyReason } from '../../lib/permits/deny-reason';
import { eventually } from '../support/eventually';

/**
 * Allocation's corner cases, each a way a resource could get two owners or none (each test failed on the code before
 * its fix): answers lost after a write landed, operators acting while a node winds down, parts left to lapse, quorum, a hanging onAssigned and an
 * unreadable plan. Memory stores sharing a backend (nodes in one process), through the engine the module uses; every
 * node records when its work got and gave up each resource, and the checks read that record.
 */
describe('allocation moves a resource only after its old owner gave it up or its permit lapsed', () => {
  const semaphore = allocationSemaphore('queues');
  const SKEW = 20;
  let backend: MemoryBackend;
  let admin: SemaphoreAdmin;
  let adminStore: PermitRecordStore;
  let set: string[];
  const cleanup: Array<() => Promise<void>> = [];
  /** resource → spans of ownership by the work, in order. */
  let spans: Map<string, Array<{ node: string; from: number; to?: number }>>;

  beforeEach(async () => {
    backend = new MemoryBackend();
    spans = new Map();
    adminStore = new PermitRecordStore(backend.node());
    await adminStore.connect({ clock: systemClock });
    admin = new SemaphoreAdmin(adminStore, systemClock);
  });
  afterEach(async () => {
    for (const close of cleanup.splice(0).reverse()) await close().catch(() => undefined);
    await adminStore.close();
  });

  interface Node {
    participant: AllocationParticipant;
    owned: Set<string>;
    engine: PermitEngine;
  }

  interface NodeOptions {
    revokeMs?: number | (() => number);
    revokeTimeoutMs?: number;
    assignForever?: boolean;
    wrap?: (permits: AllocationPermits) => AllocationPermits;
    store?: PermitRecordStore;
    quorum?: number;
  }

  async function node(name: string, o: NodeOptions = {}): Promise<Node> {
    const store = o.store ?? new PermitRecordStore(backend.node());
    await store.connect({ clock: systemClock });
    const holder = { acquirer: name, group: 'g', instance: `${name}/1` };
    const engine = new PermitEngine(store, holder, systemClock, { clockSkewMs: SKEW, quorum: o.quorum });
    const owned = new Set<string>();
    const base = allocationPermitsOf(engine, store);
    const participant = new AllocationParticipant('queues', holder, o.wrap ? o.wrap(base) : base, {
      resources: () => set,
      onAssigned: async (ids) => {
        for (const id of ids) {
          owned.add(id);
          spans.set(id, [...(spans.get(id) ?? []), { node: name, from: performance.now() }]);
        }
        if (o.assignForever) await new Promise(() => undefined);
      },
      onRevoked: async (ids) => {
        const revokeMs = typeof o.revokeMs === 'function' ? o.revokeMs() : o.revokeMs;
        if (revokeMs) await sleep(revokeMs);
        for (const id of ids) {
          owned.delete(id);
          const span = [...(spans.get(id) ?? [])].reverse().find((s) => s.node === name && s.to === undefined);
          if (span) span.to = performance.now();
        }
      },
    }, { clock: systemClock, clockSkewMs: SKEW, delayMs: 50, resourcesIntervalMs: 100, revokeTimeoutMs: o.revokeTimeoutMs });
    cleanup.push(async () => {
      await participant.stop();
      engine.dispose();
      await store.close();
    });
    return { participant, owned, engine };
  }

  const define = (leaseMs: number) => admin.define(validateDefinition({ name: semaphore, permits: 100, duration: leaseMs }));
  const permitOf = (name: string): Permit | undefined => adminStore.peek(semaphore)?.entry?.permits.find((p) => p.acquirer === name);

  /** No resource was in two nodes' work at once: each span began after the previous one ended. */
  function overlaps(): string[] {
    return [...spans].flatMap(([id, list]) => list.slice(1).flatMap((s, i) => {
      const before = list[i];
      return before.to === undefined || before.to > s.from ? [`${id}: ${s.node} got it while ${before.node} still had it`] : [];
    }));
  }

  /** Answers a write's outcome as lost (STORE_TIMEOUT) once, after it landed, when `when` says so. */
  function losingAnswers(when: (result: unknown, options?: { local?: boolean }) => boolean): { wrap: NodeOptions['wrap']; arm: () => void } {
    let armed = false;
    return {
      arm: () => (armed = true),
      wrap: (base) => ({
        ...base,
        amend: async (permit, change, options) => {
          let last: unknown;
          const result = await base.amend(permit, (input) => {
            const amendment = change(input);
            last = amendment.result;
            return amendment;
          }, options);
          if (armed && result.granted && when(last, options)) {
            armed = false;
            return { granted: false, semaphore, reason: DenyReason.STORE_TIMEOUT, message: 'the write landed, its answer was lost' };
          }
          return result;
        },
      }),
    };
  }

  it('a release whose answer was lost is retried, and no resource later moves away without its onRevoked', async () => {
    set = ['r0', 'r1'];
    await define(600);
    const lost = losingAnswers((r) => ((r as { released?: string[] })?.released?.length ?? 0) > 0 && !((r as { claimed?: string[] }).claimed?.length));
    const a = await node('a', { wrap: lost.wrap });
    a.participant.start();
    await eventually('a owns 2', () => a.owned.size === 2);
    lost.arm();
    const b = await node('b');
    b.participant.start();
    await eventually('1/1', () => a.owned.size === 1 && b.owned.size === 1);
    set = ['r0', 'r1', 'r2'];
    await a.participant.resourcesChanged();
    const c = await node('c');
    c.participant.start();
    await eventually('1/1/1', () => a.owned.size === 1 && b.owned.size === 1 && c.owned.size === 1);
    await sleep(300);
    expect(overlaps()).toEqual([]);
    // What the work holds is what the lease says it owns.
    expect([...a.owned].sort()).toEqual(a.participant.owned());
  });

  /** When (performance time) a permit with this expiry lapses for every node. */
  const lapseOf = (permit: Permit) => performance.now() - (Date.now() - (permit.expiresAt + SKEW));
  /** When b first got each resource that `name` held before. */
  const takenFrom = (name: string) =>
    [...spans.values()].filter((list) => list.some((x) => x.node === name)).map((list) => list.find((x) => x.node === 'b' && x.from > list.find((y) => y.node === name)!.from)?.from);

  it('a graceful stop keeps renewing while its onRevoked runs longer than the lease: nothing moves before it returned', async () => {
    set = ['r0', 'r1', 'r2', 'r3'];
    await define(600);
    const a = await node('a', { revokeMs: 900 });
    const b = await node('b');
    a.participant.start();
    b.participant.start();
    await eventually('2/2', () => a.owned.size === 2 && b.owned.size === 2);
    await a.participant.stop();
    await eventually('b owns all', () => b.owned.size === 4, { timeoutMs: 5_000 });
    expect(overlaps()).toEqual([]);
  });

  it('an operator force-release during a graceful stop is no licence to withdraw: the resources move when the permit lapses', async () => {
    set = ['r0', 'r1', 'r2', 'r3'];
    await define(600);
    const a = await node('a', { revokeMs: 1_500 });
    const b = await node('b');
    a.participant.start();
    b.participant.start();
    await eventually('2/2', () => a.owned.size === 2 && b.owned.size === 2);
    const stopping = a.participant.stop();
    await sleep(100);
    const permit = permitOf('a')!;
    await admin.forceRelease(semaphore, permit.fencingToken);
    await eventually('b owns all', () => b.owned.size === 4, { timeoutMs: 5_000 });
    await stopping;
    const taken = takenFrom('a').filter((t): t is number => t !== undefined);
    expect(taken).toHaveLength(2);
    expect(Math.min(...taken)).toBeGreaterThanOrEqual(lapseOf(permitOf('a') ?? permit) - 5); // not withdrawn at the force-release
  });

  it('a part left to lapse (onRevoked overran) is never released early: not by an operator, not by rejoining', async () => {
    set = ['r0', 'r1', 'r2', 'r3'];
    await define(900);
    const a = await node('a', { revokeMs: 4_000, revokeTimeoutMs: 200 });
    a.participant.start();
    await eventually('a owns 4', () => a.owned.size === 4);
    const b = await node('b');
    b.participant.start();
    await eventually('a left its part to lapse', () => a.participant.keptTokens().length === 1, { timeoutMs: 5_000 });
    const kept = permitOf('a')!;
    await admin.forceRelease(semaphore, kept.fencingToken);
    await eventually('b took a’s resources', () => takenFrom('a').filter(Boolean).length >= 2, { timeoutMs: 8_000 });
    expect(Math.min(...takenFrom('a').filter((t): t is number => t !== undefined))).toBeGreaterThanOrEqual(lapseOf(kept) - 5);
  });

  it('renewals that land with their answers lost: nobody owns the lost part’s resources again before its permit lapsed at the latest expiry stored', async () => {
    set = ['r0', 'r1', 'r2', 'r3'];
    await define(1_500);
    const lost = losingAnswers((_r, options) => options?.local === true);
    let slow = false;
    const a = await node('a', { revokeMs: () => (slow ? 4_000 : 0), revokeTimeoutMs: 300, wrap: lost.wrap });
    a.participant.start();
    await eventually('a owns 4', () => a.owned.size === 4);
    const b = await node('b');
    b.participant.start();
    await eventually('2/2', () => b.owned.size === 2 && a.owned.size === 2);
    // From now on every renewal of a lands, but a hears a timeout; its part is lost by its own clock, and its slow
    // onRevoked overruns: the part is left to lapse, at the expiry its landed renewals wrote.
    slow = true;
    const rearm = setInterval(() => lost.arm(), 5);
    cleanup.push(async () => clearInterval(rearm));
    const token = await eventually('a left its part to lapse', () => a.participant.keptTokens()[0], { timeoutMs: 8_000 });
    const kept = adminStore.peek(semaphore)!.entry!.permits.find((p) => p.fencingToken === token)!;
    const since = performance.now();
    const itsOwn = Object.keys(kept.resources ?? {});
    expect(itsOwn).toHaveLength(2);
    // Whoever owns them next (b, or a's next part under the same name: the plan keeps the name's slot) starts only
    // once the kept permit lapsed.
    const taken = () => itsOwn.map((id) => spans.get(id)!.find((x) => x.from > since)?.from);
    await eventually('a’s resources owned again', () => taken().every((t) => t !== undefined), { timeoutMs: 8_000 });
    expect(Math.min(...(taken() as number[]))).toBeGreaterThanOrEqual(lapseOf(kept) - 5);
  });

  it('refuses renewals and claims below quorum, as decisions do', async () => {
    set = ['r0'];
    await define(600);
    const lonely = new (class extends PermitRecordStore {
      override memberCount(): number | undefined {
        return 1;
      }
    })(backend);
    const a = await node('a', { store: lonely, quorum: 2 });
    const granted = await a.engine.tryAcquire(semaphore);
    expect(granted).toMatchObject({ granted: false, reason: DenyReason.QUORUM_NOT_MET });
    const forged = { ...permitOf('x') ?? { semaphore, acquirer: 'a', group: 'g', instance: 'a/1', fencingToken: 1, grantedAt: 0, refreshedAt: 0, expiresAt: Date.now() + 600 } };
    expect(await a.engine.amend(forged as Permit, () => ({ result: undefined }), { local: true })).toMatchObject({ granted: false, reason: DenyReason.QUORUM_NOT_MET });
  });

  it('a hanging onAssigned does not keep a node from giving resources up, nor its stop from returning', async () => {
    set = ['r0', 'r1'];
    await define(600);
    const a = await node('a', { assignForever: true, revokeTimeoutMs: 300 });
    a.participant.start();
    await eventually('a got 2', () => a.owned.size === 2);
    const b = await node('b');
    b.participant.start();
    await eventually('1/1', () => a.owned.size === 1 && b.owned.size === 1, { timeoutMs: 5_000 });
    const started = performance.now();
    await a.participant.stop();
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(overlaps()).toEqual([]);
  });

  it('an unreadable plan makes nodes hold what they have until the coordinator writes a new one', async () => {
    set = ['r0', 'r1', 'r2', 'r3'];
    await define(600);
    const a = await node('a');
    const b = await node('b');
    a.participant.start();
    b.participant.start();
    await eventually('2/2', () => a.owned.size === 2 && b.owned.size === 2);
    const before = spans.size && [...spans.values()].map((l) => l.length);
    await compareAndSetLoop(adminStore, semaphore, (read) => ({
      result: true,
      write: { ...read.entry!, revision: read.entry!.revision + 1, annex: { ...read.entry!.annex, plan: { generation: 'x', from: 'a newer version' } } },
    }), { maxAttempts: 8, deadline: new Deadline(2_000, 'plant') });
    await eventually('a new plan', () => {
      const plan = adminStore.peek(semaphore)?.entry?.annex?.plan as { generation?: unknown } | undefined;
      return typeof plan?.generation === 'number';
    });
    await sleep(200);
    expect([...spans.values()].map((l) => l.length)).toEqual(before); // nobody gave anything up meanwhile
    expect(a.owned.size + b.owned.size).toBe(4);
  });
});
