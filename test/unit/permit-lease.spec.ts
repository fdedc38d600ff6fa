import { PermitLease, PermitLostError } from '../../lib/engine/permit-lease';
import type { AcquireResult } from '../../lib/engine/acquire-result';
import type { Permit } from '../../lib/gatekeeper/permit';
import { FakeClock } from '../support/fake-clock';

const clock = new FakeClock();
const permit: Permit = {
  semaphore: 'job', acquirer: 'a', group: 'g', fencingToken: 7,
  grantedAt: clock.now(), refreshedAt: clock.now(), expiresAt: clock.now() + 3000,
};

describe('PermitLease', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('vouches for the permit only until expiry less the clock-skew bound', () => {
    const lease = new PermitLease(permit, jest.fn(), clock, { keepAlive: false, clockSkewMs: 500 });
    expect(lease.validUntil).toBe(permit.expiresAt - 500);
    expect(lease.isValid()).toBe(true);
    clock.advance(2_500);
    expect(lease.isValid()).toBe(false);
    expect(() => lease.assertValid()).toThrow(PermitLostError);
    expect(lease.signal.aborted).toBe(true);
    clock.advance(-2_500);
  });

  it('refreshes at a third of the duration and fires the signal when a refresh is denied', async () => {
    const refresh = jest.fn<Promise<AcquireResult>, [Permit]>()
      .mockResolvedValueOnce({ granted: true, outcome: 'refreshed', permit: { ...permit, expiresAt: permit.expiresAt + 1000 } })
      .mockResolvedValueOnce({ granted: false, semaphore: 'job', reason: 'PAUSED', message: 'paused' });
    const lease = new PermitLease(permit, refresh, clock, { clockSkewMs: 0 });
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
    const lease = new PermitLease(permit, refresh, { now: () => start + (Date.now() - t0) }, { clockSkewMs: 0 });
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
    const lease = new PermitLease(permit, refresh, { now: () => start + (Date.now() - t0) }, { clockSkewMs: 500 });
    await jest.advanceTimersByTimeAsync(2_499);
    expect(lease.signal.aborted).toBe(false);
    expect(refresh).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(lease.signal.aborted).toBe(true);
  });

  it('fires at expiry without keep-alive', async () => {
    const start = clock.now();
    const t0 = Date.now();
    const lease = new PermitLease(permit, jest.fn(), { now: () => start + (Date.now() - t0) }, { keepAlive: false });
    await jest.advanceTimersByTimeAsync(3_000);
    expect(lease.signal.aborted).toBe(true);
  });

  it('stops refreshing when ended without a reason, and does not fire', async () => {
    const refresh = jest.fn();
    const lease = new PermitLease(permit, refresh, clock);
    lease.end();
    await jest.advanceTimersByTimeAsync(5000);
    expect(refresh).not.toHaveBeenCalled();
    expect(lease.signal.aborted).toBe(false);
  });
});
