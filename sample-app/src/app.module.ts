import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { BillingJob } from './jobs/billing.job';
import { DigestJob } from './jobs/digest.job';
import { DrCheckJob } from './jobs/dr-check.job';
import { ExportJob } from './jobs/export.job';
import { ReportsJob } from './jobs/reports.job';
import { QueueConsumers } from './jobs/queue-consumers';
import { ReconTasks } from './jobs/recon.tasks';
import { ReindexController } from './reindex.controller';
import { gatekeeperOptions, sampleConfig } from './sample.config';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      ...gatekeeperOptions(),
      // The admin API under /gatekeeper, protected by a bearer token, and the web console at /gatekeeper/console.
      admin: { path: 'gatekeeper', token: sampleConfig.adminToken, console: true },
    }),
  ],
  controllers: [ReindexController],
  providers: [BillingJob, ReportsJob, DrCheckJob, ExportJob, DigestJob, QueueConsumers, ReconTasks],
})
export class AppModule {}
