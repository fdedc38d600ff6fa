import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TerminusModule } from '@nestjs/terminus';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { BillingJob } from './jobs/billing.job';
import { DigestJob } from './jobs/digest.job';
import { DrCheckJob } from './jobs/dr-check.job';
import { ExportJob } from './jobs/export.job';
import { ReportsJob } from './jobs/reports.job';
import { QueueConsumers } from './jobs/queue-consumers';
import { ReconTasks } from './jobs/recon.tasks';
import { TenantReports } from './jobs/tenant-reports';
// The guide's own health controller (docs/observability.md; examples/ are compiled by the tests), not a copy that could drift.
import { HealthController } from '../../examples/health.controller';
import { MetricsController } from './metrics.controller';
import { ReindexController } from './reindex.controller';
import { gatekeeperOptions, sampleConfig } from './sample.config';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    // GET /health/ready, /health/live and /health/jobs (the library's health indicator, as the guide shows it).
    TerminusModule,
    GatekeeperModule.forRoot({
      ...gatekeeperOptions(),
      // The admin API under /gatekeeper, protected by a bearer token, and the web console at /gatekeeper/console.
      admin: { path: 'gatekeeper', token: sampleConfig.adminToken, console: true },
    }),
  ],
  controllers: [ReindexController, HealthController, MetricsController],
  providers: [BillingJob, ReportsJob, DrCheckJob, ExportJob, DigestJob, QueueConsumers, ReconTasks, TenantReports],
})
export class AppModule {}
