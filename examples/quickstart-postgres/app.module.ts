import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { BillingJobs } from './billing.jobs';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      identity: { group: 'production' },
      // The state in PostgreSQL (npm install pg). The connection string comes from GATEKEEPER_PG_URL here; or give
      // postgres: { connectionString }, { poolConfig }, or { pool }: your application's own pg.Pool. The library's
      // tables go in the schema `gatekeeper`, created at the first start.
      backend: 'postgres',
      definitions: [
        { name: 'billing', permits: 1, duration: '1m', groupPattern: 'production' },
        { name: 'export', permits: 1, duration: '10m' },
      ],
      // The admin API under /gatekeeper, behind the token in GATEKEEPER_ADMIN_TOKEN (the app refuses to start
      // without one); the CLI sends the same variable, so `npx nestjs-gatekeeper jobs describe|run` finds this node.
      admin: {},
    }),
  ],
  providers: [BillingJobs],
})
export class AppModule {}
