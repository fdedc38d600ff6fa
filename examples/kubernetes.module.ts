import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { TerminusModule } from '@nestjs/terminus';
import { GatekeeperModule } from 'nestjs-gatekeeper';
import { HealthController } from './health.controller';

/** A whole number from the environment (`undefined` when unset), or a start-up error that names the variable (not a NaN quorum). */
function positiveInt(config: ConfigService, name: string): number | undefined {
  const raw = config.get<string>(name);
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1, got "${raw}"`);
  return value;
}

/** The store, from GATEKEEPER_BACKEND: the variable the CLI reads too, so the app and a CLI in its pod agree. */
function backendOf(config: ConfigService): 'postgres' | 'redis' | 'hazelcast' {
  const backend = config.get<string>('GATEKEEPER_BACKEND') || 'hazelcast';
  if (backend !== 'postgres' && backend !== 'redis' && backend !== 'hazelcast') {
    throw new Error(`GATEKEEPER_BACKEND must be postgres, redis or hazelcast, got "${backend}"`);
  }
  return backend;
}

/**
 * The app on Kubernetes (docs/kubernetes.md). The Deployment gives each replica its pod name as POD_NAME (downward
 * API), which becomes its acquirer: unique per replica, stable for its life, and what logs, `permits` and the console
 * show. The store comes from the environment, as the Secret of docs/kubernetes.md gives it: GATEKEEPER_BACKEND, and
 * GATEKEEPER_PG_URL, GATEKEEPER_REDIS_URL or GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME, which the module
 * reads itself.
 */
@Module({
  imports: [
    ConfigModule.forRoot(),
    TerminusModule,
    GatekeeperModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        backend: backendOf(config),
        identity: {
          acquirer: config.getOrThrow<string>('POD_NAME'),
          group: config.get<string>('APP_GROUP') || 'production',
        },
        // Hazelcast only: the same majority as the members' split-brain protection (2 of 3): below it this node denies
        // on its own, and fires running jobs' signals, even before the members notice the split. Unset: no check.
        quorum: positiveInt(config, 'APP_QUORUM'),
        // Running jobs get this long to finish on SIGTERM before permits are released; the pod's
        // terminationGracePeriodSeconds leaves room for it, the preStop pause and Nest's own shutdown.
        shutdownTimeout: '20s',
      }),
    }),
  ],
  controllers: [HealthController],
})
export class AppModule {}
