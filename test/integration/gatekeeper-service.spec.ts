import { setTimeout as sleep } from 'node:timers/promises';
import {
  DenyReason, InvalidInputError, PermitNotHeldError, WaitTimeoutError, NotFoundError, type Permit,
} from '../../lib';
import { startNode, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { uniquePrefix } from '../support/test-cluster';

describe('GatekeeperService on a real member', () => {
  let a: TestNode;
  let b: TestNode;

  beforeEach(async () => {
    const mapPrefix = uniquePrefix('service');
    const definitions = [
      { name: 'manual', duration: '2s' },
      { name: 'short', duration: 300 },
      // withPermit's keep-alive: long enough that a loaded machine's pause of a few hundred ms misses no refresh.
      { name: 'kept', duration: 1_000 },
    ];
    // A 300 ms permit needs a clock-skew bound well below it (the default 500 ms would leave no valid lease).
    a = await startNode({ identity: { acquirer: 'node-a' }, mapPrefix, definitions, maxClockSkew: 30 });
    b = await startNode({ identity: { acquirer: 'node-b' }, mapPrefix, definitions, maxClockSkew: 30 });
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  it('tryAcquire grants, refreshes, and denies with a reason', async () => {
    const granted = await a.gatekeeper.tryAcquire('manual');
    expect(granted).toMatchObject({ granted: true, outcome: 'granted', permit: { acquirer: 'node-a', group: 'default' } });
    expect(await a.gatekeeper.tryAcquire('manual')).toMatchObject({ granted: true, outcome: 'refreshed' });
    expect(await b.gatekeeper.tryAcquire('manual')).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
    expect(await b.gatekeeper.tryAcquire('missing')).toMatchObject({ granted: false, reason: DenyReason.UNKNOWN_SEMAPHORE });
  });

  it('acquire waits for a permit, or times out naming the last denial', async () => {
    await a.gatekeeper.tryAcquire('short');
    const permit = await b.gatekeeper.acquire('short', { timeout: '3s', pollInterval: 50 });
    expect(permit.acquirer).toBe('node-b');
    const failure = await a.gatekeeper.acquire('short', { timeout: 100 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WaitTimeoutError);
    expect(failure).toMatchObject({ kind: 'permit', id: 'short', lastReason: DenyReason.NO_PERMIT_AVAILABLE });
    expect((failure as WaitTimeoutError).message).toMatch(/"short": no permit within 100 ms \(last denial: NO_PERMIT_AVAILABLE\)/);
  });

  it('refresh keeps the token and says PERMIT_LOST once the permit was taken', async () => {
    const permit = (await a.gatekeeper.acquire('short')) as Permit;
    const refreshed = await a.gatekeeper.refresh(permit);
    expect(refreshed).toMatchObject({ granted: true, permit: { fencingToken: permit.fencingToken } });
    const takeover = await b.gatekeeper.acquire('short', { timeout: '2s', pollInterval: 50 });
    expect(takeover.fencingToken).toBeGreaterThan(permit.fencingToken);
    expect(await a.gatekeeper.refresh(permit)).toMatchObject({ granted: false, reason: DenyReason.PERMIT_LOST });
  });

  it('a refresh denied for an older permit forgets only that one: the newer stays held and is released at shutdown', async () => {
    const first = await a.gatekeeper.tryAcquire('manual');
    if (!first.granted) throw new Error(first.message);
    const older = first.permit;
    await eventually('the older permit to lapse', () => Date.now() > older.expiresAt + 30);
    const again = await a.gatekeeper.tryAcquire('manual');
    expect(again).toMatchObject({ granted: true, outcome: 'granted' });
    const [newer] = a.gatekeeper.heldPermits();
    expect(newer.fencingToken).toBeGreaterThan(older.fencingToken);
    expect(await a.gatekeeper.refresh(older)).toMatchObject({ granted: false, reason: DenyReason.PERMIT_LOST });
    expect(a.gatekeeper.heldPermits().map((p) => p.fencingToken)).toEqual([newer.fencingToken]);
    await a.close();
    // Granted to b before the newer permit could lapse: a gave it back at shutdown.
    const takeover = await b.gatekeeper.tryAcquire('manual');
    expect(takeover).toMatchObject({ granted: true, outcome: 'granted' });
    expect(takeover.granted && takeover.permit.grantedAt).toBeLessThan(newer.expiresAt);
  });

  it('release frees the permit; releasing one not held is an error naming it', async () => {
    const permit = await a.gatekeeper.acquire('manual');
    await expect(b.gatekeeper.release(permit)).rejects.toThrow(PermitNotHeldError);
    await a.gatekeeper.release(permit);
    await expect(a.gatekeeper.release(permit)).rejects.toThrow(`Semaphore "manual": permit with fencing token ${permit.fencingToken} is not held by "node-a"`);
    expect(await b.gatekeeper.tryAcquire('manual')).toMatchObject({ granted: true });
  });

  it('withPermit runs under the permit, exposes it in async context, keeps it alive and releases it', async () => {
    const seen: Array<number | undefined> = [];
    const result = await a.gatekeeper.withPermit('kept', async (lease) => {
      seen.push(a.gatekeeper.currentPermit()?.fencingToken);
      await sleep(2_200); // more than twice the 1 s permit: only keep-alive keeps it
      seen.push(a.gatekeeper.currentPermit()?.fencingToken);
      expect(lease.isValid()).toBe(true);
      expect(() => lease.assertValid()).not.toThrow();
      // The other node's first answer that came within its call's deadline: a loaded machine can time one out (a
      // fail-closed denial that says nothing of who holds it).
      const answer = await eventually('an answer from the other node in time', async () => {
        const other = await b.gatekeeper.tryAcquire('kept');
        return other.granted || other.reason !== DenyReason.STORE_TIMEOUT ? other : undefined;
      }, { timeoutMs: 2_000 });
      expect(answer).toMatchObject({ granted: false, reason: DenyReason.NO_PERMIT_AVAILABLE });
      return 'done';
    });
    expect(result).toMatchObject({ ran: true, value: 'done' });
    expect(result.ran && seen).toEqual([result.ran && result.permit.fencingToken, result.ran && result.permit.fencingToken]);
    expect(a.gatekeeper.currentPermit()).toBeUndefined();
    // Released: the other node takes it at once.
    expect(await b.gatekeeper.tryAcquire('kept')).toMatchObject({ granted: true });
    // Not run while the other node holds it: denied as held, or (a loaded machine) as a call that did not answer in
    // time, which fails closed too.
    const denied = await a.gatekeeper.withPermit('kept', () => 'never');
    expect(denied.ran).toBe(false);
    expect([DenyReason.NO_PERMIT_AVAILABLE, DenyReason.STORE_TIMEOUT]).toContain(!denied.ran && denied.denied.reason);
  });

  it('fires the lease signal when a live edit takes the permit away mid-run', async () => {
    const outcome = await a.gatekeeper.withPermit('short', async (lease) => {
      // Listen first: the signal may fire before the edit's own call returns.
      const fired = new Promise((resolve) => lease.signal.addEventListener('abort', resolve, { once: true }));
      await b.semaphores.updateDefinition('short', { permits: 0 });
      await fired;
      return { valid: lease.isValid(), reason: String((lease.signal.reason as Error).message) };
    });
    expect(outcome).toMatchObject({ ran: true, value: { valid: false, reason: expect.stringContaining('PAUSED') } });
  });

  it('edits definitions cluster-wide with validation, and a bad edit changes nothing', async () => {
    const created = await a.semaphores.putDefinition({ name: 'nightly', duration: '1h', groupPattern: 'prod.*' });
    expect(created).toMatchObject({ name: 'nightly', durationMs: 3_600_000 });
    const updated = await b.semaphores.updateDefinition('nightly', { permits: 2 });
    expect(updated).toEqual({ ...created, permits: 2 });
    const before = b.semaphores.getDefinition('nightly');
    await expect(b.semaphores.updateDefinition('nightly', { acquirerPattern: '[' })).rejects.toThrow(InvalidInputError);
    await expect(b.semaphores.updateDefinition('nightly', { permits: -1 })).rejects.toThrow('"nightly": invalid permits');
    await expect(b.semaphores.putDefinition({ name: 'nightly', duration: 'soon' })).rejects.toThrow('"nightly": invalid duration');
    await expect(b.semaphores.updateDefinition('ghost', { permits: 1 })).rejects.toThrow(NotFoundError);
    expect(b.semaphores.getDefinition('nightly')).toEqual(before);
    expect(a.semaphores.listDefinitions().map((d) => d.name)).toContain('nightly');
    expect(await a.semaphores.removeDefinition('nightly')).toBe(true);
    // The cache converges through the entry listener; events of earlier edits may still be arriving.
    await eventually('both caches to drop it', () => [a, b].every((n) => n.semaphores.getDefinition('nightly') === undefined));
  });

  it('reports every permit with holder, group, expiry and fencing token', async () => {
    const permit = await a.gatekeeper.acquire('manual');
    const status = await b.semaphores.permits();
    const manual = status.find((s) => s.name === 'manual');
    expect(manual).toMatchObject({ definition: { name: 'manual' }, lastToken: permit.fencingToken });
    expect(manual?.permits).toEqual([permit]);
    expect(status.find((s) => s.name === 'short')).toMatchObject({ permits: [], lastToken: undefined });
  });
});
