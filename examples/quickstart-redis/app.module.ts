import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { BillingJobs } from './billing.jobs';

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot({
      identity: { group: 'production' },
      // The state in Redis (npm install ioredis). The URL comes from GATEKEEPER_REDIS_URL here; or give
      // redis: { url }, { connection } (ioredis's options), or { client }: your application's own ioredis client.
      // The library's keys are under the prefix `{gatekeeper}:` (redis: { mapPrefix } names another).
      backend: 'redis',
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
