import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { ClusterSingleton, ScheduleService } from 'nestjs-gatekeeper';
import { typeormExecutor } from 'nestjs-gatekeeper/fencing';

@Injectable()
export class InvoiceRunJobs {
  constructor(
    private readonly schedules: ScheduleService,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * Issues the month's invoices once across the cluster. The invoices and the run's history record commit together,
   * fenced by the run's permit (PostgreSQL backend, same database): a run frozen past its permit commits nothing, and
   * the history says `completed` exactly when the invoices are there, even if the node dies right after its COMMIT.
   */
  @Cron('0 0 6 1 * *')
  @ClusterSingleton('monthly-invoices', '5m')
  async issueMonthlyInvoices(): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query("INSERT INTO invoices (customer, status) SELECT id, 'due' FROM customers WHERE active");
      await this.schedules.completeRunIn(typeormExecutor(manager));
    });
  }
}
