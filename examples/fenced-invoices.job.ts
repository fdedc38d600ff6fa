import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { ClusterSingleton, GatekeeperService } from 'nestjs-gatekeeper';
import { fence, typeormExecutor } from 'nestjs-gatekeeper/fencing';

@Injectable()
export class InvoiceJobs {
  constructor(
    private readonly gatekeeper: GatekeeperService,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * Charges due invoices once across the cluster. If this node freezes past its permit and another node takes over,
   * its late transaction is refused by the fence (StaleFencingTokenError) and rolls back: nothing is charged twice.
   */
  @Cron('0 * * * * *')
  @ClusterSingleton('invoice-charges', '30s')
  async chargeDueInvoices(): Promise<void> {
    const lease = this.gatekeeper.currentLease()!;
    await this.dataSource.transaction(async (manager) => {
      await fence(typeormExecutor(manager), 'invoices', lease);
      await manager.query("UPDATE invoices SET status = 'charged' WHERE status = 'due'");
    });
  }
}
