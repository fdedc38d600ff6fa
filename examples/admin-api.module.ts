import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { GatekeeperModule } from 'nestjs-gatekeeper';

@Module({
  imports: [
    ConfigModule.forRoot(),
    GatekeeperModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        backend: 'memory',
        // A missing GATEKEEPER_ADMIN_TOKEN stops start-up naming it; one shorter than 16 characters stops it naming admin.token.
        admin: { path: 'ops/gatekeeper', token: config.getOrThrow<string>('GATEKEEPER_ADMIN_TOKEN'), console: true },
      }),
    }),
  ],
})
export class AdminApiModule {}
