import { Module } from '@nestjs/common';
import { GatekeeperModule } from 'nestjs-gatekeeper';

@Module({
  imports: [
    GatekeeperModule.forRoot({
      backend: 'redis',
      // Or { client } (the application's own ioredis client or Cluster, duplicated: the module never uses it nor
      // closes it), or { connection } (ioredis's RedisOptions: Sentinel, TLS). Without any, GATEKEEPER_REDIS_URL.
      redis: { url: 'redis://redis.internal:6379/0', mapPrefix: 'billing-app' },
    }),
  ],
})
export class AppModule {}
