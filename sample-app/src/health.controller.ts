import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { GatekeeperHealthIndicator } from 'nestjs-gatekeeper';

/** The probes of the README's "Health checks" section: what a Kubernetes Deployment of this app would point at. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly gatekeeper: GatekeeperHealthIndicator,
  ) {}

  /** Ready: connected, quorum met, not shutting down. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.gatekeeper.readiness()]);
  }

  /** Live: down only when the module cannot recover without a restart. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.gatekeeper.liveness()]);
  }

  /** For monitoring, not probes: down while a job of this node can run on no live instance. */
  @Get('jobs')
  @HealthCheck()
  jobs() {
    return this.health.check([() => this.gatekeeper.jobs()]);
  }
}
