import { Injectable, Logger } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatekeeperService, GroupFinishedHandler, OncePerTrigger, TaskHandler, type GroupJoinData, type TaskContext } from 'nestjs-gatekeeper';

const RECORD_SETS = 12;

/**
 * A small recon batch (seed 004's example) every 20 s: one instance runs the trigger's task, which splits the batch
 * into 12 record sets; all three instances reconcile them; the batch's join runs once, then the run's own.
 */
@Injectable()
export class ReconTasks {
  private readonly logger = new Logger('Tasks');

  constructor(private readonly gatekeeper: GatekeeperService) {}

  private get me(): string {
    return this.gatekeeper.identity.acquirer;
  }

  /** Once per trigger: the task `recon-run:<scheduled instant>`, on whichever instance claims it. */
  @Cron('*/20 * * * * *')
  @OncePerTrigger('recon-run', { lease: '10s' })
  async startRecon(task: TaskContext): Promise<void> {
    const batch = `batch-${task.task.name!.slice(11, 19).replace(/:/g, '')}`; // e.g. batch-061520
    for (let set = 1; set <= RECORD_SETS; set++) {
      await task.submit({ type: 'recon-record-set', group: { name: batch, number: set, ...(set === RECORD_SETS && { total: RECORD_SETS }) }, data: { batch, set } });
    }
    this.logger.log(`recon ${batch}: split into ${RECORD_SETS} record sets on ${this.me}`);
  }

  @TaskHandler('recon-record-set', { lease: '5s', maxAttempts: 3 })
  async reconcile(data: { batch: string; set: number }, task: TaskContext): Promise<number> {
    await sleep(300 + Math.floor(Math.random() * 400), undefined, { signal: task.signal });
    await task.renewLease(); // throws if another instance took the record set over: then stop here
    const matched = 90 + (data.set % 10);
    this.logger.log(`recon ${data.batch}: record set ${data.set}/${RECORD_SETS} on ${this.me} (epoch ${task.epoch}, ${matched} matched)`);
    return matched;
  }

  @GroupFinishedHandler('recon-record-set')
  batchDone(join: GroupJoinData): number {
    const matched = Object.values(join.results).reduce((sum: number, n) => sum + (n as number), 0);
    this.logger.log(`recon ${join.group}: joined on ${this.me}: ${Object.keys(join.results).length}/${join.total} record sets, ${matched} matched, ${Object.keys(join.errors).length} failed`);
    return matched;
  }

  @GroupFinishedHandler('recon-run')
  runDone(join: GroupJoinData): void {
    this.logger.log(`recon run ${join.group} finished on ${this.me}: ${JSON.stringify(join.results)}`);
  }
}
