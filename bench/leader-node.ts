/*
 * A node of the leader-election bench rows, run as a real process (ts-node) by bench/leader.ts: a Nest
 * application context with the module on the bench member, standing in one election (module option `elections`)
 * with presence on, and leader work through `ClusterService.whileLeader`, as an application would. It prints:
 *   READY                                      once booted (connected, standing)
 *   ELECTED <epoch> <unix ms>                  when its leader work starts (real time, read right there)
 *   OPS <unix ms> <permit ops> <presence ops>  on SIGUSR2: its stores' operation counters
 * SIGTERM closes the app (shutdown hooks: a graceful handover); SIGKILL is a crash.
 */
import 'reflect-metadata';
import { Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClusterService, GatekeeperModule, type DurationInput, type LeaderLease } from '../lib';
import type { PermitStore } from '../lib/permits/permit-store';
import { GATEKEEPER_PRESENCE_STORE, GATEKEEPER_STORE } from '../lib/nest/gatekeeper.constants';
import type { PresenceStore } from '../lib/presence/presence-store';
import { env, gatekeeperOptionsFromEnv } from '../test/fixtures/fixture-process';

const say = (line: string) => process.stdout.write(`${line}\n`);

@Injectable()
class LeaderWork {
  constructor(@Inject(ClusterService) cluster: ClusterService) {
    // Registered before the module starts its elections, so the first term already runs it.
    cluster.whileLeader(env('ELECTION'), async (lease: LeaderLease) => {
      say(`ELECTED ${lease.epoch} ${Date.now()}`);
      await new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve(), { once: true }));
    });
  }
}

const duration = (v: string): DurationInput => (/^\d+$/.test(v) ? Number(v) : v);

@Module({
  imports: [
    GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
      elections: [{ name: env('ELECTION'), lease: duration(env('LEASE')) }],
      membership: { interval: duration(env('PRESENCE_INTERVAL')) },
      maxClockSkew: duration(env('MAX_CLOCK_SKEW')),
    })),
  ],
  providers: [LeaderWork],
})
class LeaderBenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(LeaderBenchModule, { logger: ['error', 'warn'] });
  // SIGTERM and SIGINT only: Nest's default list includes SIGUSR2, which this node answers with its counters.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  const permits = app.get<PermitStore>(GATEKEEPER_STORE, { strict: false });
  const presence = app.get<PresenceStore | undefined>(GATEKEEPER_PRESENCE_STORE, { strict: false });
  process.on('SIGUSR2', () => say(`OPS ${Date.now()} ${permits.operationCount()} ${presence?.operationCount() ?? 0}`));
  say('READY');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
