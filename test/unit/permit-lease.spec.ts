import { PermitLease } from '../../lib/permits/permit-lease';
import type { AcquireResult } from '../../lib/permits/acquire-result';
import type { Permit } from '../../lib/permits/permit';
import { FakeClock } from '../support/fake-clock';
import { LeaseLostError } from '../../lib/core/errors/lease-lost.error';

/** A watch that never reports anything, and one the test can fire. */
const noWatch = () => () => undefined;

const clock = new FakeClock();
const permit: Permit = {
  semaphore: 'job', acquirer: 'a', group: 'g', instance: 'a/1', fencingToken: 7,
  grantedAt: clock.now(), refreshedAt: clock.now(), expiresAt: clock.now() + 3000,
};

describe('PermitLease', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('vouches for the permit only until expiry less the clock-skew bound', () => {
    const lease = new PermitLease(permit, jest.fn(), noWatch, clock, { keepAlive: false, clockSkewMs: 500 });
    expect(lease.validUntil).toBe(permit.expiresAt - 500);
    expect(lease.isValid()).toBe(true);
    clock.advance(2_500);
    expect(lease.isValid()).toBe(false);
    expect(() => lease.assertValid()).toThrow(LeaseLostError);
    expect(lease.signal.aborted).toBe(true);
    clock.advance(-2_500);
  });

  it('refreshes at a third of the duration and fires the signal when a refresh is denied', async () => {
    const refresh = jest.fn<Promise<AcquireResult>, [Permit]>()
      .mockResolvedValueOnce({ granted: true, outcome: 'refreshed', permit: { ...permit, expiresAt: permit.expiresAt + 1000 } })
      .mockResolvedValueOnce({ granted: false, semaphore: 'job', reason: 'PAUSED', message: 'paused' });
    const lease = new PermitLease(permit, refresh, noWatch, clock, { clockSkewMs: 0 });
    await jest.advanceTimersByTimeAsync(1000);
    expect(refresh).toHaveBeenCalledTimes(1);
    expect(lease.permit.expiresAt).toBe(permit.expiresAt + 1000);
    // The next refresh follows the refreshed permit: a third of its 4 s.
    await jest.advanceTimersByTimeAsync(1300);
    expect(refresh).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(100);
    expect(refresh).toHaveBeenCalledTimes(2);
    expect(lease.signal.aborted).toBe(true);
    expect((lease.signal.reason as Error).message).toContain('PAUSED');
    lease.end();
  });

  it('keeps trying through store outages, then gives up at expiry', async () => {
    const refresh = jest.fn<Promise<AcquireResult>, [Permit]>().mockResolvedValue({
      granted: false, semaphore: 'job', reason: 'STORE_UNAVAILABLE', message: 'down',
    });
    // A clock that follows the fake timers, so expiry arrives as timers advance.
    const start = clock.now();
    const t0 = Date.now();
    const lease = new PermitLease(permit, refresh, noWatch, { now: () => start + (Date.now() - t0) }, { clockSkewMs: 0 });
    await jest.advanceTimersByTimeAsync(2_900);
    expect(lease.signal.aborted).toBe(false);
    expect(refresh.mock.calls.length).toBeGreaterThanOrEqual(2);
    await jest.advanceTimersByTimeAsync(200);
    expect(lease.signal.aborted).toBe(true);
    expect((lease.signal.reason as Error).message).toContain('expired');
  });

  it('fires at expiry even while a refresh hangs', async () => {
    const refresh = jest.fn(() => new Promise<AcquireResult>(() => undefined));
    const start = clock.now();
    const t0 = Date.now();
    const lease = new PermitLease(permit, refresh, noWatch, { now: () => start + (Date.now() - t0) }, { clockSkewMs: 500 });
    await jest.advanceTimersByTimeAsync(2_499);
    expect(lease.signal.aborted).toBe(false);
    expect(refresh).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(lease.signal.aborted).toBe(true);
  });

  it('fires at expiry without keep-alive', async () => {
    const start = clock.now();
    const t0 = Date.now();
    const lease = new PermitLease(permit, jest.fn(), noWatch, { now: () => start + (Date.now() - t0) }, { keepAlive: false });
    await jest.advanceTimersByTimeAsync(3_000);
    expect(lease.signal.aborted).toBe(true);
  });

  it('fires at once when told the permit was lost, before its expiry', () => {
    let tell: (reason: string) => void = () => undefined;
    const unwatch = jest.fn();
    const lease = new PermitLease(permit, jest.fn(), (_p, onLost) => ((tell = onLost), unwatch), clock, { keepAlive: false });
    expect(lease.isValid()).toBe(true);
    tell('PERMIT_REVOKED: force-released');
    expect(lease.isValid()).toBe(false);
    expect(() => lease.assertValid()).toThrow(/PERMIT_REVOKED/);
    lease.end();
    expect(unwatch).toHaveBeenCalled();
  });

  it('stops keep-alive at maxRunTime and fires the signal, though refreshes would still be granted', async () => {
    const start = clock.now();
    const t0 = Date.now();
    const now = () => start + (Date.now() - t0);
    const refresh = jest.fn(async (p: Permit): Promise<AcquireResult> => ({ granted: true, outcome: 'refreshed', permit: { ...p, refreshedAt: now(), expiresAt: now() + 3000 } }));
    const lease = new PermitLease(permit, refresh, noWatch, { now }, { maxRunTimeMs: 4_000 });
    await jest.advanceTimersByTimeAsync(3_990);
    expect(lease.isValid()).toBe(true);
    const refreshes = refresh.mock.calls.length;
    expect(refreshes).toBeGreaterThanOrEqual(3);
    await jest.advanceTimersByTimeAsync(20);
    expect(lease.signal.aborted).toBe(true);
    expect((lease.signal.reason as Error).message).toContain('maxRunTime');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(refresh.mock.calls.length).toBe(refreshes);
  });

  it('waits out permits longer than a timer can (24.8 days) without spinning', async () => {
    const long: Permit = { ...permit, expiresAt: clock.now() + 40 * 24 * 3600 * 1000 };
    const refresh = jest.fn();
    const timers = jest.spyOn(global, 'setTimeout');
    const lease = new PermitLease(long, refresh, noWatch, clock, { keepAlive: false });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(timers.mock.calls.length).toBeLessThanOrEqual(2);
    timers.mockRestore();
    expect(lease.isValid()).toBe(true);
    lease.end();
  });

  it('stops refreshing when ended without a reason, and does not fire', async () => {
    const refresh = jest.fn();
    const lease = new PermitLease(permit, refresh, noWatch, clock);
    lease.end();
    await jest.advanceTimersByTimeAsync(5000);
    expect(refresh).not.toHaveBeenCalled();
    expect(lease.signal.aborted).toBe(false);
  });
});
