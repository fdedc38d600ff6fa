import { ManualClock } from '../../lib/core/clock';
import type { NodeIdentity, Permit } from '../../lib/permits/permit';
import type { SemaphoreDefinition } from '../../lib/permits/semaphore-definition';
import { RunNowEligibility, type RunNowView } from '../../lib/schedules/run/run-now-requests';
import type { ScheduledJob } from '../../lib/schedules/run/scheduled-job';
import type { RunRequest } from '../../lib/schedules/run-request.store';
import { DEFAULT_JOB_HEALTH } from '../../lib/schedules/job-policy';

/** Run-now eligibility, decided in one place: what the requester refuses at once, and which node tries a request. */
describe('RunNowEligibility', () => {
  const clock = new ManualClock(1_000_000);
  const holder = { group: 'production', acquirer: 'app-1', instance: 'i-1' };
  const job: ScheduledJob = {
    name: 'Jobs.charge', invoke: () => undefined,
    options: { semaphore: 'billing', mode: 'hold', lockAtLeastForMs: 0, keepAlive: false, maxRunTimeMs: undefined, overlap: 'skip', replaceWaitMs: 0, missedRuns: 'skip', catchUpWindowMs: undefined, health: DEFAULT_JOB_HEALTH },
  };
  const permit = (instance: string, extra: Partial<Permit> = {}): Permit => ({
    semaphore: 'billing', group: 'production', acquirer: instance, instance, fencingToken: 3, grantedAt: clock.now(), refreshedAt: clock.now(), expiresAt: clock.now() + 60_000, ...extra,
  });
  function eligibility(state: { definition?: Partial<SemaphoreDefinition>; permits?: Permit[]; graceUntil?: number; live?: NodeIdentity[]; paused?: boolean } = {}) {
    const definition: SemaphoreDefinition = { name: 'billing', permits: 1, durationMs: 60_000, groupPattern: '.*', acquirerPattern: '.*', ...state.definition } as SemaphoreDefinition;
    const view: RunNowView = {
      jobs: { get: (name) => (name === job.name ? { ...job, paused: state.paused } : undefined), all: () => [job] },
      semaphores: { peek: () => ({ entry: { definition, permits: state.permits ?? [], graceUntil: state.graceUntil } }) },
      presence: { confirmed: () => state.live },
      holder, clock, permitClock: clock, clockSkewMs: 1_000,
    };
    return new RunNowEligibility(view);
  }
  const request = (extra: Partial<RunRequest> = {}): RunRequest => ({
    id: 'r-1', job: job.name, requestedAt: clock.now(), requestedBy: 'app-2', state: 'pending', nudge: 0, expiresAt: clock.now() + 30_000, ...extra,
  });

  it('refuses at once, naming why: an unknown job, a paused one, a kept permit, a recovery wait, no admitted node', () => {
    expect(() => eligibility().requested('Jobs.nope')).toThrow(expect.objectContaining({ reason: 'UNKNOWN_JOB' }));
    expect(() => eligibility({ definition: { permits: 0 } }).requested(job.name)).toThrow(expect.objectContaining({ reason: 'PAUSED' }));
    expect(() => eligibility({ paused: true }).requested(job.name)).toThrow(expect.objectContaining({ reason: 'PAUSED' }));
    expect(() => eligibility({ permits: [permit('i-2', { released: true })] }).requested(job.name)).toThrow(expect.objectContaining({ reason: 'LOCKED' }));
    expect(() => eligibility({ graceUntil: clock.now() + 5_000 }).requested(job.name)).toThrow(expect.objectContaining({ reason: 'RECOVERING' }));
    expect(() => eligibility({ definition: { groupPattern: 'dr-site' }, live: [holder] }).requested(job.name)).toThrow(expect.objectContaining({ reason: 'NO_ELIGIBLE_NODE' }));
    expect(eligibility({ permits: [permit('i-2')], live: [holder] }).requested(job.name)).toMatchObject({ name: job.name });
    // This node admitted: runnable here whatever presence's view says (it may not list this node yet).
    expect(eligibility({ live: [] }).requested(job.name)).toMatchObject({ name: job.name });
    // Not admitted here, but another live node is.
    const other = { group: 'dr-site', acquirer: 'app-9', instance: 'i-9' };
    expect(eligibility({ definition: { groupPattern: 'dr-site' }, live: [holder, other] }).requested(job.name)).toMatchObject({ name: job.name });
  });

  it('tries a request only here when the job is known, admitted, not held elsewhere, and the request still pending', () => {
    expect(eligibility().toTry(request())).toMatchObject({ name: job.name });
    expect(eligibility({ permits: [permit('i-1')] }).toTry(request())).toMatchObject({ name: job.name });
    expect(eligibility({ permits: [permit('i-2')] }).toTry(request())).toBeUndefined();
    expect(eligibility({ definition: { acquirerPattern: 'app-2' } }).toTry(request())).toBeUndefined();
    expect(eligibility().toTry(request({ job: 'Jobs.nope' }))).toBeUndefined();
    expect(eligibility().toTry(request({ state: 'started' }))).toBeUndefined();
    expect(eligibility().toTry(request({ expiresAt: clock.now() + 500 }))).toBeUndefined();
  });
});
