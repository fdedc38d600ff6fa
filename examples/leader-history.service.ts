import { Injectable } from '@nestjs/common';
import { leaderJobName, ScheduleService } from 'nestjs-gatekeeper';

/** What the leader-only `LeaderJobs.distributeEvents` (examples/leader-jobs.service.ts) did lately, for a status page. */
@Injectable()
export class LeaderHistory {
  constructor(private readonly schedules: ScheduleService) {}

  async distributeEventsReport(): Promise<string[]> {
    // The history names it 'leader:leader:LeaderJobs.distributeEvents': the election, then Class.method.
    const { runs, counts, skipped } = await this.schedules.history(leaderJobName('leader', 'LeaderJobs.distributeEvents'), { limit: 5 });
    const lines = runs.map((run) =>
      `${new Date(run.startedAt).toISOString()} on ${run.node} (epoch ${run.token}): ${run.outcome}${run.error ? `: ${run.error}` : ''}`,
    );
    // Calls on the other nodes are counted, not listed.
    lines.push(`completed ${counts.completed ?? 0}, failed ${counts.failed ?? 0}, aborted ${counts.aborted ?? 0}; skipped elsewhere: ${skipped.NOT_LEADER ?? 0}`);
    return lines;
  }
}
