import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { GatekeeperHealthIndicator } from 'nestjs-gatekeeper';

/** Probes for Kubernetes (import TerminusModule next to GatekeeperModule). */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly gatekeeper: GatekeeperHealthIndicator,
  ) {}

  /** readinessProbe: not ready while starting, cut off from the cluster, below quorum, or shutting down. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.gatekeeper.readiness()]);
  }

  /** livenessProbe: down only if the module cannot recover without a restart. A cluster outage keeps it up. */
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

  /** For alerts on one job: down when the nightly report has not completed within 26 hours anywhere (a paused job stays up). */
  @Get('nightly-report')
  @HealthCheck()
  nightlyReport() {
    return this.health.check([() => this.gatekeeper.job('ReportJobs.nightly', { within: '26h' })]);
  }
}
