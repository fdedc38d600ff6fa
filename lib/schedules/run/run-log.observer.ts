import type { PermitDenied } from '../../permits/acquire-result';
import type { Permit } from '../../permits/permit';
import { DenyReason } from '../../permits/deny-reason';
import type { SemaphoreDefinition } from '../../permits/semaphore-definition';
import type { UnheldSemaphoreMonitor } from '../../permits/unheld-semaphore.monitor';
import type { RunLog } from './run-log';
import type { RunPipelineObserver } from './run-observers';
import { runMessages as messages } from './run.messages';
import type { ScheduledJob } from './scheduled-job';

/**
 * The log's part of the run seam: a job that starts or stops running here, its skips once per change of reason (at
 * verbose; a tick skipped because other work here shares its permit once per job, at the default level), and the
 * monitor of jobs that run nowhere.
 */
export class RunLogObserver implements RunPipelineObserver {
  /** The reason of each job's last skipped tick (this node's jobs only, so bounded). */
  private readonly lastSkip = new Map<string, string>();
  /**
   * Semaphores the monitor was told a denial of since their last run here: only those can have its state, so a run
   * of any other (every run of a job that runs) is not told to it.
   */
  private readonly deniedSemaphores = new Set<string>();
  /** Jobs whose tick was skipped because other work here shares their permit, said once each. */
  private readonly toldInUse = new Set<string>();

  constructor(
    private readonly logger: RunLog,
    private readonly unheld: UnheldSemaphoreMonitor,
    private readonly definition: (semaphore: string) => SemaphoreDefinition | undefined,
  ) {}

  permitDenied(job: ScheduledJob, denied: PermitDenied, lost: boolean): void {
    if (lost) {
      this.logger.log(messages.lost(job.name, denied));
    } else if (denied.reason === DenyReason.IN_USE && !this.toldInUse.has(job.name)) {
      // Other work of this process (another job, withPermit) shares the permit: the tick ran here on nobody's behalf,
      // and with one permit on no node. A setup to change, so said where it is seen, once.
      this.toldInUse.add(job.name);
      this.logger.warn(messages.inUse(job.name, denied, this.definition(denied.semaphore)?.permits));
    } else if (this.lastSkip.get(job.name) !== denied.reason) {
      // Once per change of reason, at verbose: a node that does not hold the job says so once, not every tick
      // (its history counts every skipped tick). What needs an operator's eye (the cluster unreachable, a
      // recovery wait, a job that runs nowhere) is said once per change elsewhere, louder.
      this.logger.verbose(messages.skipped(job.name, denied));
    }
    this.lastSkip.set(job.name, denied.reason);
    this.deniedSemaphores.add(denied.semaphore);
    this.unheld.denied(job.name, denied);
  }

  ranUnder(job: ScheduledJob, permit: Permit, newlyHeld: boolean): void {
    this.lastSkip.delete(job.name);
    if (this.deniedSemaphores.delete(job.options.semaphore)) this.unheld.ran(job.options.semaphore, permit);
    if (newlyHeld) this.logger.log(messages.granted(job.name, permit));
  }
}
