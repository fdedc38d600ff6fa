import { Injectable } from '@nestjs/common';
import { GatekeeperService, WaitTimeoutError, SemaphoreAdminService } from 'nestjs-gatekeeper';

@Injectable()
export class ReindexService {
  constructor(
    private readonly gatekeeper: GatekeeperService,
    private readonly semaphores: SemaphoreAdminService,
  ) {}

  /** Runs only if no other node is reindexing; the permit is kept alive while it runs and released after. */
  async reindexOnce(): Promise<string> {
    const result = await this.gatekeeper.withPermit('reindex', async (lease) => {
      for (const shard of ['a', 'b', 'c']) {
        lease.assertValid(); // throws LeaseLostError if the permit was lost meanwhile
        await this.reindexShard(shard, lease.permit.fencingToken);
      }
      return 'reindexed';
    });
    return result.ran ? result.value : `skipped: ${result.denied.reason}`;
  }

  /** Waits up to 10 s for a permit, then holds it until released. */
  async migrate(): Promise<void> {
    try {
      const permit = await this.gatekeeper.acquire('migration', { timeout: '10s' });
      try {
        await this.runMigration(permit.fencingToken);
      } finally {
        await this.gatekeeper.release(permit);
      }
    } catch (error) {
      if (error instanceof WaitTimeoutError) return; // another node is migrating
      throw error;
    }
  }

  /** Moves a job to the DR site, live: the holder gives it up at its next refresh. */
  async failOverBilling(): Promise<void> {
    await this.semaphores.updateDefinition('billing', { groupPattern: 'dr-site' });
  }

  private async reindexShard(_shard: string, _fencingToken: number): Promise<void> {}
  private async runMigration(_fencingToken: number): Promise<void> {}
}
