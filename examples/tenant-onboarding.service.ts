import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ScheduleService } from 'nestjs-gatekeeper';
import { typeormExecutor } from 'nestjs-gatekeeper/fencing';

@Injectable()
export class TenantOnboarding {
  constructor(
    private readonly dataSource: DataSource,
    private readonly schedules: ScheduleService,
  ) {}

  /** The tenant and its nightly report commit together, or neither does (PostgreSQL backend, same database). */
  async onboard(tenant: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query('INSERT INTO tenants (id) VALUES ($1)', [tenant]);
      await this.schedules.upsert(
        { id: `report-${tenant}`, cron: '0 0 2 * * *', handler: 'tenant-report', data: { tenant }, duration: '10m' },
        { transaction: typeormExecutor(manager) },
      );
    });
  }
}
