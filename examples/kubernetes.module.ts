import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { HealthController } from './health.controller';

/** A whole number from the environment, or a start-up error that names the variable (not a NaN quorum). */
function positiveInt(config: ConfigService, name: string, fallback: number): number {
  const raw = config.get<string>(name);
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1, got "${raw}"`);
  return value;
}

/**
 * The app on Kubernetes (docs/kubernetes.md). The Deployment gives each replica its pod name as POD_NAME (downward
 * API), which becomes its acquirer: unique per replica, stable for its life, and what logs, `permits` and the console
 * show. The module itself reads GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME for the cluster.
 */
@Module({
  imports: [
    ConfigModule.forRoot(),
    TerminusModule,
    GatekeeperModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        identity: {
          acquirer: config.getOrThrow<string>('POD_NAME'),
          group: config.get<string>('GATEKEEPER_GROUP') || 'production',
        },
        // The same majority as the members' split-brain protection (2 of 3): below it this node denies on its own,
        // and fires running jobs' signals, even before the members notice the split.
        quorum: positiveInt(config, 'GATEKEEPER_QUORUM', 2),
        // Running jobs get this long to finish on SIGTERM before permits are released; the pod's
        // terminationGracePeriodSeconds leaves room for it, the preStop pause and Nest's own shutdown.
        shutdownTimeout: '20s',
      }),
    }),
  ],
  controllers: [HealthController],
})
export class AppModule {}
