/*
 * A node of the allocation bench rows, run as a real process (ts-node) by bench/allocation.ts: a Nest application
 * context with the module on the bench member, taking part in allocation 'queues' (module option `allocations`,
 * presence off) with `AllocationService.participate`, as an application would. It prints:
 *   READY                          once booted (connected, taking part)
 *   OPS <unix ms> <permit ops>     on SIGUSR2: its permit store's operation counter
 * SIGTERM closes the app (shutdown hooks: a graceful stop); SIGKILL is a crash.
 */
import 'reflect-metadata';
import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AllocationService, GatekeeperModule, type DurationInput } from '../lib';
import type { PermitStore } from '../lib/permits/permit-store';
import { GATEKEEPER_STORE } from '../lib/nest/gatekeeper.constants';
import { env, gatekeeperOptionsFromEnv } from '../test/fixtures/fixture-process';

const say = (line: string) => process.stdout.write(`${line}\n`);
const resources = Array.from({ length: Number(env('RESOURCES')) }, (_, i) => `queue-${String(i).padStart(4, '0')}`);

@Injectable()
class Consumers implements OnModuleInit {
  constructor(@Inject(AllocationService) private readonly allocations: AllocationService) {}

  onModuleInit(): void {
    this.allocations.participate('queues', { resources: () => resources });
  }
}

const duration = (v: string): DurationInput => (/^\d+$/.test(v) ? Number(v) : v);

@Module({
  imports: [
    GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
      allocations: [{ name: 'queues', lease: duration(env('LEASE')), rebalanceDelay: duration(env('REBALANCE_DELAY')) }],
      membership: false,
      maxClockSkew: duration(env('MAX_CLOCK_SKEW')),
    })),
  ],
  providers: [Consumers],
})
class AllocationBenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AllocationBenchModule, { logger: ['error', 'warn'] });
  // SIGTERM and SIGINT only: Nest's default list includes SIGUSR2, which this node answers with its counters.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  const permits = app.get<PermitStore>(GATEKEEPER_STORE, { strict: false });
  process.on('SIGUSR2', () => say(`OPS ${Date.now()} ${permits.operationCount()}`));
  say('READY');
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
