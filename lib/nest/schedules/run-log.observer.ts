import type { Logger } from '@nestjs/common';
import type { PermitDenied } from '../../permits/acquire-result';
import type { Permit } from '../../permits/permit';
import type { RunPipelineObserver } from '../../schedules/run/run-observers';
import type { ScheduledJob } from '../../schedules/run/scheduled-job';
import { messages } from '../gatekeeper.messages';
import type { UnheldSemaphoreMonitor } from '../permits/unheld-semaphore.monitor';

/**
 * The log's part of the run seam: a job that starts or stops running here, its skips once per change of reason, and
 * the monitor of jobs that run nowhere.
 */
export class RunLogObserver implements RunPipelineObserver {
  /** The reason of each job's last skipped tick (this node's jobs only, so bounded). */
  private readonly lastSkip = new Map<string, string>();

  constructor(private readonly logger: Logger, private readonly unheld: UnheldSemaphoreMonitor) {}

  permitDenied(job: ScheduledJob, denied: PermitDenied, lost: boolean): void {
    if (lost) {
      this.logger.log(messages.lost(job.name, denied));
    } else if (this.lastSkip.get(job.name) !== denied.reason) {
      // Once per change of reason, at verbose: a node that does not hold the job says so once, not every tick
      // (its history counts every skipped tick). What needs an operator's eye (the cluster unreachable, a
      // recovery wait, a job that runs nowhere) is said once per change elsewhere, louder.
      this.logger.verbose(messages.skipped(job.name, denied));
    }
    this.lastSkip.set(job.name, denied.reason);
    this.unheld.denied(job.name, denied);
  }

  ranUnder(job: ScheduledJob, permit: Permit, newlyHeld: boolean): void {
    this.lastSkip.delete(job.name);
    this.unheld.ran(job.options.semaphore, permit);
    if (newlyHeld) this.logger.log(messages.granted(job.name, permit));
  }
}
