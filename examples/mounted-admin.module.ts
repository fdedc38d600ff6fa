import { Module } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { GatekeeperModule } from 'nestjs-gatekeeper';

// The admin API and the console are GatekeeperModule's routes: RouterModule mounts them under your tree, here at
// /ops/gatekeeper/... (and /api/ops/gatekeeper/... after app.setGlobalPrefix('api')). Each node advertises that
// path with its address, so the CLI finds the API there with no extra setting.
@Module({
  imports: [
    GatekeeperModule.forRoot({ backend: 'memory', admin: { console: true } }),
    RouterModule.register([{ path: 'ops', module: GatekeeperModule }]),
  ],
})
export class MountedAdminModule {}
