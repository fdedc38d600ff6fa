import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { OncePerTrigger, TaskHandler, TaskService, type TaskContext } from 'nestjs-gatekeeper';

/** Seed 004's scheduling: every node keeps the same schedule; the task's id decides how often the work runs. */
@Injectable()
export class ScheduledTasks {
  constructor(private readonly tasks: TaskService) {}

  /** Once per trigger, on one node: the task `check-database:2026-11-23T01:00:00.000Z`, whichever node fires first. */
  @Cron('0 1 * * *')
  @OncePerTrigger('check-database', { lease: '5m' })
  async checkDatabase(task: TaskContext): Promise<void> {
    await this.check(task.signal);
  }

  /** At most once in parallel: a fixed id; a tick while it still runs is ignored, one after it finished runs it again. */
  @Cron('*/10 * * * *')
  async syncSystemX(): Promise<void> {
    await this.tasks.submit({ type: 'active-sync', name: 'systemx', rerunFinished: true });
  }

  @TaskHandler('active-sync', { lease: '2m' })
  async sync(_data: unknown, task: TaskContext): Promise<void> {
    await task.renewLease('5m'); // a longer lease for the slow part
  }

  private async check(_signal: AbortSignal): Promise<void> {}
}
