import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { GatekeeperService, ScheduleHandler, ScheduleService } from 'nestjs-gatekeeper';

/** Tenants whose reports run on a schedule defined at runtime (in a real app: loaded from a database). */
const TENANTS = [{ tenant: 'acme', cron: '*/5 * * * * *' }, { tenant: 'globex', cron: '*/7 * * * * *' }];

/**
 * Schedules defined at runtime: every instance upserts the same per-tenant schedules at start-up (idempotent by id,
 * so three instances deploying at once never duplicate or drop one), and every instance has the handler, so each
 * tick runs once in the cluster, under the schedule's permit.
 */
@Injectable()
export class TenantReports implements OnApplicationBootstrap {
  private readonly logger = new Logger('Jobs');

  constructor(
    private readonly schedules: ScheduleService,
    private readonly gatekeeper: GatekeeperService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const { tenant, cron } of TENANTS) {
      const { outcome, revision } = await this.schedules.upsert({ id: `report-${tenant}`, cron, handler: 'tenant-report', data: { tenant }, duration: '15s' });
      this.logger.log(`schedule report-${tenant}: ${outcome} (revision ${revision})`);
    }
  }

  /** A tenant whose data says `fail: true` fails its report: a failed run, with its stack, for the console to show. */
  @ScheduleHandler('tenant-report')
  report(data: { tenant: string; fail?: boolean }): void {
    const run = this.schedules.currentRun();
    const tick = Math.floor(Date.now() / 1000);
    this.logger.log(`ran report-${data.tenant} on ${this.gatekeeper.identity.acquirer} (group ${this.gatekeeper.identity.group}, fencing token ${run?.token}, tick ${tick})`);
    if (data.fail) throw new Error(`the report of ${data.tenant} failed: its ledger is locked`);
  }
}
