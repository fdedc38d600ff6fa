import { Module } from '@nestjs/common';
import { GatekeeperModule } from 'nestjs-gatekeeper';

@Module({
  imports: [
    GatekeeperModule.forRoot({
      store: 'memory',
      admin: { path: 'ops/gatekeeper', token: process.env.GATEKEEPER_ADMIN_TOKEN ?? 'at-least-16-characters' },
    }),
  ],
})
export class AdminApiModule {}
