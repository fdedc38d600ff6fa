import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { ReconTasks } from './recon.tasks';
import { ScheduledTasks } from './scheduled.tasks';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      // The tasks in PostgreSQL (GATEKEEPER_PG_URL), beside the permits; 'redis' and 'hazelcast' take the same options.
      backend: 'postgres',
      identity: { acquirer: process.env.POD_NAME! },
      // Four tasks at once per node; a dead worker's task runs again within its lease + 5 s.
      tasks: { concurrency: 4, scanInterval: '5s', retention: '24h' },
    }),
  ],
  providers: [ReconTasks, ScheduledTasks],
})
export class ReconTasksModule {}
