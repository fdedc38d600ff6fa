import { Injectable, Logger } from '@nestjs/common';
import {
  GroupFinishedHandler, InvalidTaskError, InvalidTaskHandler, RetryLaterError, TaskHandler, TaskService,
  type GroupJoinData, type TaskContext, type TaskRecord,
} from 'nestjs-gatekeeper';

interface RecordSet {
  system: string;
  batch: number;
}

/** Seed 004's recon example: one parent task splits a reconciliation into 100 record sets, run across the cluster. */
@Injectable()
export class ReconTasks {
  private readonly logger = new Logger(ReconTasks.name);

  constructor(private readonly tasks: TaskService) {}

  /** Starts a reconciliation of `system`; submitting it again while it runs (or within a day after) does nothing. */
  start(system: string): Promise<TaskRecord> {
    return this.tasks.submit({ type: 'recon-parent', name: system, priority: 5, data: { system } });
  }

  @TaskHandler('recon-parent', { lease: '1m' })
  async split(data: { system: string }, task: TaskContext): Promise<string> {
    for (let batch = 1; batch <= 100; batch++) {
      // Sub-tasks form the group "<system>" of type recon-record-set; the last one carries the total.
      await task.submit({
        type: 'recon-record-set',
        group: { name: data.system, number: batch, ...(batch === 100 && { total: 100 }) },
        data: { system: data.system, batch } satisfies RecordSet,
      });
    }
    return 'split into 100 record sets';
  }

  @TaskHandler('recon-record-set', { lease: '5m', maxAttempts: 5, backoff: { base: '2s', factor: 2, max: '1m' } })
  async reconcile(data: RecordSet, task: TaskContext): Promise<{ matched: number }> {
    if (data.batch < 1) throw new InvalidTaskError(`batch ${data.batch} does not exist`); // never retried
    let matched = 0;
    for (let page = 0; page < 10; page++) {
      if (await this.sourceIsBusy()) throw new RetryLaterError('the source system is busy', 30_000);
      matched += await this.reconcilePage(data, page, task.signal);
      await task.renewLease(); // throws LeaseLostError if another node took the task over: stop here
    }
    return { matched };
  }

  /** Once per group, when all 100 record sets ended: their results and errors by batch number. */
  @GroupFinishedHandler('recon-record-set')
  recordSetsDone(join: GroupJoinData): number {
    const matched = Object.values(join.results).reduce((sum: number, r) => sum + (r as { matched: number }).matched, 0);
    this.logger.log(`${join.group}: ${matched} matched, ${Object.keys(join.errors).length} batches failed`);
    return matched;
  }

  /** Then once for the parent: the joins of its sub-groups, by sub-group. */
  @GroupFinishedHandler('recon-parent')
  reconciliationDone(join: GroupJoinData): void {
    this.logger.log(`reconciliation ${join.group} finished: ${JSON.stringify(join.results)}`);
  }

  @InvalidTaskHandler()
  invalid(task: TaskRecord, error: string): void {
    this.logger.warn(`dropped ${task.id}: ${error}`);
  }

  private async sourceIsBusy(): Promise<boolean> {
    return false;
  }

  private async reconcilePage(_set: RecordSet, _page: number, _signal: AbortSignal): Promise<number> {
    return 10;
  }
}
