import { Module } from '@nestjs/common';
import { GatekeeperModule } from 'nestjs-gatekeeper';

const token = process.env.GATEKEEPER_ADMIN_TOKEN;
if (!token) throw new Error('GATEKEEPER_ADMIN_TOKEN is not set: the admin API needs a secret of 16 characters or more');

@Module({
  imports: [
    GatekeeperModule.forRoot({
      store: 'memory',
      admin: { path: 'ops/gatekeeper', token },
    }),
  ],
})
export class AdminApiModule {}
