import { PermitRecordStore } from '../../lib/permits/permit-record.store';
import { MemoryBackend } from '../../lib/testing';
import { PermitEngine } from '../../lib/permits/permit.engine';
import { SemaphoreAdmin } from '../../lib/permits/semaphore-admin';
import { systemClock } from '../../lib/core/clock';
import { validateDefinition } from '../../lib/permits/definition.validator';
import { electionSemaphore } from '../../lib/elections/election';
import { LeaderCandidate, candidatePermitsOf } from '../../lib/elections/leader-candidate';
import type { LeaderLease } from '../../lib/elections/leader-lease';
import { eventually } from '../support/eventually';

/**
 * Candidates of one election on memory stores sharing a backend (nodes in one process), through the same
 * engine, leases and view the module uses: one leader, handover on stop, resign, pause, and no resumed epoch.
 */
describe('LeaderCandidate', () => {
  const semaphore = electionSemaphore('leader');
  let backend: MemoryBackend;
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0).reverse()) await close();
  });

  interface Node {
    name: string;
    candidate: LeaderCandidate;
    terms: Array<{ epoch: number; from: number; to?: number; reason?: string }>;
    store: PermitRecordStore;
  }

  async function node(name: string, group = 'g'): Promise<Node> {
    const store = new PermitRecordStore(backend.node());
    await store.connect({ clock: systemClock });
    const engine = new PermitEngine(store, { acquirer: name, group, instance: `${name}/1` }, systemClock, { clockSkewMs: 20 });
    const terms: Node['terms'] = [];
    const candidate = new LeaderCandidate(semaphore, 'leader', candidatePermitsOf(engine, store), {
      clock: systemClock,
      clockSkewMs: 20,
      onElected: (lease: LeaderLease) => terms.push({ epoch: lease.epoch, from: Date.now() }),
      onLost: (lease, reason) => Object.assign(terms.find((t) => t.epoch === lease.epoch)!, { to: Date.now(), reason }),
    });
    cleanup.push(async () => {
      await candidate.stop();
      engine.dispose();
      await store.close();
    });
    return { name, candidate, terms, store };
  }

  async function define(leaseMs: number, groupPattern = '.*'): Promise<SemaphoreAdmin> {
    const store = new PermitRecordStore(backend.node());
    await store.connect({ clock: systemClock });
    cleanup.push(() => store.close());
    const admin = new SemaphoreAdmin(store, systemClock);
    await admin.define(validateDefinition({ name: semaphore, duration: leaseMs, groupPattern }));
    return admin;
  }

  const leaders = (nodes: Node[]) => nodes.filter((n) => n.candidate.lease !== undefined);

  beforeEach(() => {
    backend = new MemoryBackend();
  });

  it('elects exactly one leader, keeps it between renewals, and hands over at once on stop with a larger epoch', async () => {
    await define(600);
    const nodes = [await node('a'), await node('b'), await node('c')];
    nodes.forEach((n) => n.candidate.start());
    const first = await eventually('a leader', () => leaders(nodes).length === 1 && leaders(nodes)[0]);
    // Several lease lengths later, still the same single leader on the same epoch (renewed in the background).
    const epoch = first.candidate.lease!.epoch;
    await eventually('three leases of renewals', () => Date.now() - first.terms[0].from > 1_800);
    expect(leaders(nodes)).toEqual([first]);
    expect(first.candidate.lease!.epoch).toBe(epoch);

    const stoppedAt = Date.now();
    let drained = false;
    await first.candidate.stop(async (lease) => {
      expect(lease.signal.aborted).toBe(true); // work is told before the release
      drained = true;
    });
    expect(drained).toBe(true);
    const next = await eventually('the next leader', () => leaders(nodes).length === 1 && leaders(nodes)[0]);
    expect(next).not.toBe(first);
    expect(next.candidate.lease!.epoch).toBeGreaterThan(epoch);
    // Released, not expired: far less than the 600 ms lease.
    expect(next.terms[0].from - stoppedAt).toBeLessThan(300);
  });

  it('a resigning leader stands back so another takes over; a paused election has no leader and resumes with a new epoch', async () => {
    const admin = await define(900);
    const nodes = [await node('a'), await node('b')];
    nodes.forEach((n) => n.candidate.start());
    const first = await eventually('a leader', () => leaders(nodes)[0]);
    expect(await first.candidate.resign()).toBe(true);
    const second = await eventually('another leader', () => leaders(nodes).find((n) => n !== first));
    expect(second.candidate.lease!.epoch).toBeGreaterThan(first.terms[0].epoch);

    await admin.pause(semaphore, { force: true }); // an election's semaphore: pausing it is no job edit
    await eventually('no leader while paused', () => leaders(nodes).length === 0);
    expect(second.terms.at(-1)!.reason).toMatch(/PAUSED/);
    await admin.resume(semaphore, undefined, { force: true });
    const third = await eventually('a leader after resume', () => leaders(nodes)[0]);
    expect(third.candidate.lease!.epoch).toBeGreaterThan(second.terms[0].epoch);
  });

  it('an operator revoking the leader (resign from anywhere) moves leadership to another node', async () => {
    const admin = await define(900);
    const nodes = [await node('a'), await node('b'), await node('c')];
    nodes.forEach((n) => n.candidate.start());
    const first = await eventually('a leader', () => leaders(nodes)[0]);
    await admin.forceRelease(semaphore, first.candidate.lease!.epoch);
    const next = await eventually('another leader', () => leaders(nodes).find((n) => n !== first));
    expect(first.terms[0].reason).toMatch(/PERMIT_REVOKED/);
    expect(next.candidate.lease!.epoch).toBeGreaterThan(first.terms[0].epoch);
  });

  it('a group-restricted election is led only by that group, and a live edit moves it', async () => {
    const admin = await define(900, 'production');
    const nodes = [await node('p1', 'production'), await node('d1', 'dr-site'), await node('d2', 'dr-site')];
    nodes.forEach((n) => n.candidate.start());
    const first = await eventually('a leader', () => leaders(nodes)[0]);
    expect(first.name).toBe('p1');
    await admin.update(semaphore, { groupPattern: 'dr-site' });
    const moved = await eventually('a dr-site leader', () => leaders(nodes).find((n) => n.name.startsWith('d')));
    expect(leaders(nodes)).toEqual([moved]);
    expect(first.terms[0].reason).toMatch(/GROUP_MISMATCH/);
  });

  it('refuses an election definition with more than one permit, from any editor', async () => {
    const admin = await define(900);
    await expect(admin.update(semaphore, { permits: 2 })).rejects.toThrow(/election:leader.*permits.*0 \(paused\) or 1/);
    await expect(admin.resume(semaphore, 3)).rejects.toThrow(/permits/);
  });
});
