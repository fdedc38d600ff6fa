import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterService, LeaderOnly, type LeaderLease } from 'nestjs-gatekeeper';

@Injectable()
export class LeaderJobs implements OnModuleInit {
  private readonly logger = new Logger(LeaderJobs.name);

  constructor(private readonly cluster: ClusterService) {}

  /** Fires on every node; runs only on the leader of 'leader', and returns at once elsewhere. */
  @Cron(CronExpression.EVERY_30_SECONDS)
  @LeaderOnly()
  async distributeEvents(): Promise<void> {
    const lease = this.cluster.currentLeadership()!;
    for (const batch of await this.pendingBatches()) {
      lease.assertValid(); // throws once this node is no longer leader: check before each side effect
      await this.deliver(batch, lease.epoch); // the epoch fences: a store can reject a stale leader's writes
    }
  }

  onModuleInit(): void {
    // Leader-only background work: started each time this node becomes leader, stopped through the signal.
    // At shutdown the leadership is released only after this returned, so the next leader never overlaps it.
    this.cluster.whileLeader(async (lease: LeaderLease) => {
      this.logger.log(`leading (epoch ${lease.epoch}); participants: ${this.cluster.participants().length}`);
      while (!lease.signal.aborted) {
        await this.drainOutbox(lease);
        await sleep(1_000, undefined, { signal: lease.signal }).catch(() => undefined);
      }
    });
    this.cluster.changes().subscribe((change) => {
      if (change.type === 'leader-changed') this.logger.log(`leader is now ${change.leader?.acquirer ?? 'nobody'}`);
    });
  }

  private async pendingBatches(): Promise<string[][]> {
    return [['message-1', 'message-2']];
  }

  private async deliver(batch: string[], epoch: number): Promise<void> {
    this.logger.log(`delivering ${batch.length} message(s) as leader epoch ${epoch}`);
  }

  private async drainOutbox(lease: LeaderLease): Promise<void> {
    lease.assertValid();
  }
}
