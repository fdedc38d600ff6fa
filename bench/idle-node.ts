/*
 * A node of the idle-cluster rows (bench/idle-cluster.ts), run as a real process: a Nest application with every
 * capability on, at the module's defaults, and nothing to do but what a quiet cluster does: one `@ClusterSingleton`
 * job ticking every second (hold mode), one election, one allocation of 12 resources, a task handler with no tasks,
 * one runtime schedule (once a day), run history, presence and run-now requests, on the backend the environment
 * names (GATEKEEPER_BACKEND, as the test fixtures read it). It prints:
 *   READY                           once booted
 *   CALLS <unix ms> <json> <json>   on SIGUSR2: its store calls so far, by capability (the `store` label), and what its
 *                                   clients sent, by command (Redis: each command, a script one; PostgreSQL: each query)
 * SIGTERM closes it.
 */
import 'reflect-metadata';
import { Inject, Injectable, Module, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Redis from 'ioredis';
import pg from 'pg';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { AllocationService, ClusterSingleton, GatekeeperModule, ScheduleHandler, ScheduleService, TaskHandler } from '../lib';
import { GATEKEEPER_BACKENDS } from '../lib/nest/gatekeeper.constants';
import type { ModuleBackends } from '../lib/nest/gatekeeper-stores.factory';
import { storeCallsOf } from '../lib/store/store-call-observers';
import { env, gatekeeperOptionsFromEnv, stopWhenOrphaned } from '../test/fixtures/fixture-process';

const say = (line: string) => process.stdout.write(`${line}\n`);

/**
 * What this process's Redis and PostgreSQL clients send, by command: every round trip, the backend's own (its feed's
 * checks, sweeps, clock readings) as well as the capabilities' map calls, which the store-call hook alone reports.
 */
const sent: Record<string, number> = {};
const count = (what: string) => (sent[what] = (sent[what] ?? 0) + 1);
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, ...args: Parameters<typeof sendCommand>) {
  const command = args[0] as unknown as { name: string; args: unknown[] };
  count(command.name === 'evalsha' || command.name === 'eval' ? `evalsha ${String(command.args[0]).slice(0, 8)}` : command.name);
  return sendCommand.apply(this, args);
};
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const config = args[0] as string | { text?: string };
  count(`sql ${(typeof config === 'string' ? config : config?.text ?? '?').replace(/\s+/g, ' ').slice(0, 60)}`);
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

@Injectable()
class QuietWork implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    @Inject(AllocationService) private readonly allocations: AllocationService,
    @Inject(ScheduleService) private readonly schedules: ScheduleService,
  ) {}

  onModuleInit(): void {
    this.allocations.participate('idle-resources', {
      resources: async () => Array.from({ length: 12 }, (_, i) => `resource-${i}`),
      onAssigned: () => undefined,
      onRevoked: async () => undefined,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.schedules.upsert({ id: 'idle-daily', cron: '0 0 3 * * *', handler: 'idle-daily', duration: '15s' });
  }

  @Cron('* * * * * *')
  @ClusterSingleton('idle-job', '10s')
  tick(): void {}

  @ScheduleHandler('idle-daily')
  daily(): void {}

  @TaskHandler('idle-task', { lease: '30s' })
  task(): void {}
}

@Module({
  imports: [
    ScheduleModule.forRoot(),
    GatekeeperModule.forRoot(gatekeeperOptionsFromEnv({
      elections: ['idle-leader'],
      allocations: [{ name: 'idle-resources' }],
    })),
  ],
  providers: [QuietWork],
})
class IdleBenchModule {}

async function main(): Promise<void> {
  stopWhenOrphaned(env('NODE_NAME'));
  const app = await NestFactory.createApplicationContext(IdleBenchModule, { logger: ['error', 'warn'] });
  // SIGTERM and SIGINT only: Nest's default list includes SIGUSR2, which this node answers with its counters.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  const calls: Record<string, number> = {};
  const backends = app.get<ModuleBackends>(GATEKEEPER_BACKENDS, { strict: false });
  for (const backend of new Set(Object.values(backends.of))) {
    storeCallsOf(backend).listen((call) => {
      calls[call.store] = (calls[call.store] ?? 0) + 1;
    });
  }
  process.on('SIGUSR2', () => say(`CALLS ${Date.now()} ${JSON.stringify(calls)} ${JSON.stringify(sent)}`));
  say(`READY ${env('NODE_NAME')}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});
