import type { Clock } from '../../core/clock';
import { admittedBy } from '../../permits/permit.rules';
import type { Holder, NodeIdentity, Permit } from '../../permits/permit';
import type { SemaphoreDefinition } from '../../permits/semaphore-definition';
import { RunNowRefusedError } from '../errors/run-now-refused.error';
import type { RunRequest } from '../run-request';
import type { ScheduledJob } from './scheduled-job';

/** What this node's view says about a job's semaphore and the cluster, as run-now eligibility reads it (no round trip). */
export interface RunNowView {
  /** The jobs of this node by name, and all of them (to name them in a refusal). */
  job(name: string): ScheduledJob | undefined;
  jobNames(): string[];
  definition(semaphore: string): SemaphoreDefinition | undefined;
  /** The live permits of a semaphore on any node. */
  livePermits(semaphore: string): Permit[];
  /** Until when a semaphore waits out a recovery (its rebuilt entry's), if it does. */
  graceUntil(semaphore: string): number | undefined;
  /** The live app instances if presence knows them (confirmed recently), else `undefined`. */
  liveInstances(): readonly NodeIdentity[] | undefined;
  /** This node. */
  readonly holder: Holder;
  /** The module's clock (requests' times) and the permits' clock (recovery waits), and the skew allowed between nodes. */
  readonly clock: Clock;
  readonly permitClock: Clock;
  readonly clockSkewMs: number;
}

/**
 * Who may run a "run now", decided in one place: the requester refuses at once what no node could start (an unknown
 * job, a paused one, a permit kept by `lockAtLeastFor`, a recovery wait, no admitted live node), naming until when;
 * a node that hears the request tries it only when it has the job, its definition admits it, and no other node holds
 * the job's permit (the holder runs it). The claim itself is then decided under the permit, by compare-and-set.
 */
export class RunNowEligibility {
  constructor(private readonly view: RunNowView) {}

  /** The job a run now of `name` asks for, or the refusal to throw at the requester. */
  requested(name: string): ScheduledJob {
    const { view } = this;
    const registered = view.job(name);
    if (!registered) throw new RunNowRefusedError(name, 'UNKNOWN_JOB', `no job of that name on this node (${view.jobNames().join(', ') || 'it has none'})`);
    const { semaphore } = registered.options;
    const definition = view.definition(semaphore);
    if (definition?.permits === 0) throw new RunNowRefusedError(name, 'PAUSED', `its semaphore "${semaphore}" is paused (permits: 0); resume it first`);
    if (registered.paused) throw new RunNowRefusedError(name, 'PAUSED', 'the runtime schedule is paused; resume it first');
    // Said at once, naming until when, rather than a request that waits out its timeout for a permit nobody can get.
    const held = view.livePermits(semaphore);
    if (definition && definition.permits > 0 && held.length >= definition.permits && held.every((p) => p.released)) {
      const until = Math.min(...held.map((p) => p.expiresAt));
      throw new RunNowRefusedError(name, 'LOCKED', `its last run released the permit of "${semaphore}" but keeps it until ${new Date(until).toISOString()} (lockAtLeastFor): no run starts before then; ask again after it`);
    }
    const graceUntil = view.graceUntil(semaphore);
    if (graceUntil !== undefined && graceUntil + view.clockSkewMs > view.permitClock.now()) {
      throw new RunNowRefusedError(name, 'RECOVERING', `the cluster lost the data of "${semaphore}" and grants it again only after ${new Date(graceUntil + view.clockSkewMs).toISOString()} (the recovery wait that keeps two holders apart): no run starts before then`);
    }
    const live = view.liveInstances();
    if (definition && live && admittedBy(definition, live).length === 0) {
      throw new RunNowRefusedError(name, 'NO_ELIGIBLE_NODE', `no live node matches "${semaphore}" (group ${definition.groupPattern}, acquirer ${definition.acquirerPattern}); live: ${live.map((p) => `${p.acquirer} (${p.group})`).join(', ') || 'none'}`);
    }
    return registered;
  }

  /** The job this node should try `request` for (pending, not about to expire, admitted, not held elsewhere), if any. */
  toTry(request: RunRequest): ScheduledJob | undefined {
    const { view } = this;
    if (request.state !== 'pending') return undefined;
    if (view.clock.now() >= request.expiresAt - view.clockSkewMs) return undefined;
    const job = view.job(request.job);
    if (!job) return undefined;
    const { semaphore } = job.options;
    const definition = view.definition(semaphore);
    if (definition && admittedBy(definition, [view.holder]).length === 0) return undefined;
    const holders = view.livePermits(semaphore);
    if (holders.length > 0 && !holders.some((p) => p.instance === view.holder.instance)) return undefined;
    return job;
  }
}
