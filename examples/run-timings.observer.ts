import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ScheduleService } from 'nestjs-gatekeeper';

/** Logs every run of this node's jobs with how long it took, and every skipped tick with why. */
@Injectable()
export class RunTimings implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(RunTimings.name);
  private stop?: () => void;

  constructor(private readonly schedules: ScheduleService) {}

  onModuleInit(): void {
    // Added before bootstrap, so start-up's catch-ups are heard too.
    this.stop = this.schedules.observeRuns({
      started: (run) => this.logger.debug(`${run.job} started (${run.trigger}, token ${run.token})`),
      ended: (run, end) => this.logger.log(`${run.job} ${end.outcome} in ${end.durationMs} ms`),
      skipped: (skip) => this.logger.debug(`${skip.job} skipped: ${skip.reason}`),
    });
  }

  onModuleDestroy(): void {
    this.stop?.();
  }
}
