import { ManualClock } from '../../lib/core/clock';
import type { AcquireResult } from '../../lib/permits/acquire-result';
import { DenyReason } from '../../lib/permits/deny-reason';
import type { Permit } from '../../lib/permits/permit';
import { PermitDecisions } from '../../lib/permits/permit-decisions';
import type { PermitEngine } from '../../lib/permits/permit.engine';
import { PermitExecutor } from '../../lib/permits/permit-executor';

/**
 * The executor every tick and withPermit goes through: a run starts only on a permit with a quarter of its
 * duration left (after the skew allowance), one run per semaphore at a time in a process, and the claim is given
 * back whatever happened. The decisions are faked here; the integration and fault tests run it on a real member.
 */
describe('PermitExecutor', () => {
  const clock = new ManualClock(1_000_000);
  const permit = (expiresIn: number): Permit => ({
    semaphore: 'billing', acquirer: 'a', group: 'g', instance: 'i', fencingToken: 7,
    grantedAt: clock.now() - (60_000 - expiresIn), refreshedAt: clock.now() - (60_000 - expiresIn), expiresAt: clock.now() + expiresIn,
  });
  const executor = (granted: Permit, releases: number[] = [], vacantSince?: number) => {
    // The engine's answers are faked (its store behaviour is the contract and fault suites'); the decisions are real.
    const engine = {
      tryAcquire: async (): Promise<AcquireResult> => ({ granted: true, outcome: 'granted', permit: granted, vacantSince }),
      refresh: async (): Promise<AcquireResult> => ({ granted: true, outcome: 'refreshed', permit: granted }),
      release: async (_p: Permit, notBefore: number) => (releases.push(notBefore), 'released' as const),
      newsAgainst: () => undefined,
      watch: () => () => undefined,
    } as unknown as PermitEngine;
    const untraced = { span: <T>(_name: string, _attributes: object, work: (span: { set(): void }) => Promise<T>) => work({ set: () => undefined }) };
    const parts = new PermitDecisions(engine, clock, 1_000, untraced, { note: () => undefined, releaseFailed: () => undefined });
    parts.phase = 'ready';
    return { run: new PermitExecutor(parts), local: parts };
  };

  it('refuses to start on a permit with less than a quarter of its duration left, and gives the claim back', async () => {
    const { run, local } = executor(permit(15_000)); // 15 s of a 60 s permit, minus 1 s skew: under 15 s
    const work = jest.fn();
    const outcome = await run.run('billing', work);
    expect(outcome).toMatchObject({ ran: false, denied: { reason: DenyReason.PERMIT_LOST } });
    expect(work).not.toHaveBeenCalled();
    expect(local.isClaimed('billing')).toBe(false);
  });

  it('runs on a permit with enough left, one run per semaphore at a time, and releases after when asked', async () => {
    const releases: number[] = [];
    const { run, local } = executor(permit(40_000), releases);
    let second: unknown;
    const outcome = await run.run('billing', async (lease) => {
      second = await run.run('billing', () => 'never');
      return lease.permit.fencingToken;
    }, { releaseAfter: { lockAtLeastForMs: 5_000 } });
    expect(outcome).toMatchObject({ ran: true, value: 7 });
    expect(second).toMatchObject({ ran: false, denied: { reason: DenyReason.IN_USE } });
    expect(releases).toEqual([permit(40_000).grantedAt + 5_000]);
    expect(local.isClaimed('billing')).toBe(false);
  });

  it('reports since when nobody held the semaphore with the run of a fresh grant (for missed runs)', async () => {
    const { run } = executor(permit(40_000), [], clock.now() - 90_000);
    expect(await run.run('billing', () => 'ran')).toMatchObject({ ran: true, outcome: 'granted', vacantSince: clock.now() - 90_000 });
  });
});
