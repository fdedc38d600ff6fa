import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Client } from 'hazelcast-client';
import {
  ClusterSingleton, GatekeeperModule, GatekeeperService, InvalidInputError, NotFoundError,
} from '../../lib';
import { startNode } from '../fixtures/gatekeeper-node.fixture';
import { CapturingLogger } from '../support/capturing-logger';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

@Injectable()
class UndefinedJob {
  @ClusterSingleton('nowhere')
  run() {}
}

@Injectable()
class AppConfig {
  readonly acquirer = 'from-config';
  readonly mapPrefix = uniquePrefix('async');
}
@Module({ providers: [AppConfig], exports: [AppConfig] })
class ConfigModule {}

async function boot(options: Parameters<typeof GatekeeperModule.forRoot>[0], providers: Array<new (...a: never[]) => unknown> = []) {
  const app = await Test.createTestingModule({ imports: [GatekeeperModule.forRoot(options)], providers })
    .setLogger(new CapturingLogger())
    .compile();
  await app.init();
  return app;
}

describe('GatekeeperModule', () => {
  it('forRootAsync builds options from injected providers', async () => {
    const app = await Test.createTestingModule({
      imports: [
        GatekeeperModule.forRootAsync({
          imports: [ConfigModule],
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            identity: { acquirer: config.acquirer, group: 'dr-site' },
            hazelcast: { clientConfig: testClientConfig(), mapPrefix: config.mapPrefix },
            definitions: [{ name: 'async-job', duration: '1m' }],
          }),
        }),
      ],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    const gatekeeper = app.get(GatekeeperService);
    expect(gatekeeper.identity).toEqual({ acquirer: 'from-config', group: 'dr-site' });
    expect(await gatekeeper.tryAcquire('async-job')).toMatchObject({ granted: true });
    await app.close();
  });

  it('fails at startup naming Class.method when a decorated semaphore has no definition and autoDefine is off', async () => {
    const promise = boot({ backend: 'memory', autoDefine: false }, [UndefinedJob]);
    await expect(promise).rejects.toThrow(NotFoundError);
    await expect(boot({ backend: 'memory', autoDefine: false }, [UndefinedJob])).rejects.toThrow(/UndefinedJob\.run uses semaphore "nowhere"/);
  });

  it('asks for a duration when it must auto-define a semaphore whose decorator has none', async () => {
    await expect(boot({ backend: 'memory' }, [UndefinedJob])).rejects.toThrow(/Semaphore "nowhere": invalid duration: needs a duration.*UndefinedJob\.run/);
  });

  it('auto-defines a decorated semaphore with 1 permit and the decorator\'s duration', async () => {
    const node = await startNode({ mapPrefix: uniquePrefix('auto') });
    expect(node.semaphores.getDefinition('billing')).toEqual({
      name: 'billing', permits: 1, durationMs: 3000, groupPattern: '.*', acquirerPattern: '.*',
    });
    await node.close();
  });

  it.each([
    ['an invalid regex', { definitions: [{ name: 'billing', duration: '1m', groupPattern: '(' }] }, /^GatekeeperModule options: invalid definitions\[0\]\.groupPattern: \(semaphore "billing"\) '\(' is not a valid regex/],
    ['negative permits', { definitions: [{ name: 'a', duration: '1m' }, { name: 'billing', duration: '1m', permits: -1 }] }, /invalid definitions\[1\]\.permits: \(semaphore "billing"\) must be/],
    ['a bad duration', { definitions: [{ name: 'billing', duration: 'soon' }] }, /invalid definitions\[0\]\.duration: \(semaphore "billing"\) cannot parse 'soon'/],
    ['a nameless definition', { definitions: [{ duration: '1m' } as never] }, /^GatekeeperModule options: invalid definitions\[0\]\.name: must be a non-empty string/],
    ['a duplicate name', { definitions: [{ name: 'x', duration: 1 }, { name: 'x', duration: 2 }] }, /invalid definitions\[1\]\.name: "x" is defined twice/],
    ['an empty acquirer', { identity: { acquirer: '' } }, /invalid identity.acquirer/],
    ['an unknown store', { store: 'redis' as never }, /invalid store/],
    ['an unknown policy', { definitionsPolicy: 'merge' as never }, /invalid definitionsPolicy/],
    ['a bad connect timeout', { connectTimeout: 'soon' }, /^GatekeeperModule options: invalid connectTimeout: cannot parse 'soon'/],
    ['a bad membership interval', { membership: { interval: -1 } }, /^GatekeeperModule options: invalid membership\.interval: must be more than zero/],
    ['a bad task retention', { tasks: { retention: 'a while' } }, /^GatekeeperModule options: invalid tasks\.retention: /],
  ])('refuses to start with %s, naming the option\'s path and no made-up semaphore', async (_, options, message) => {
    const error = await boot({ backend: 'memory', ...options }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toMatch(/<module options>|Semaphore "</);
  });

  it('keeps definitions edited in the cluster by default, and overwrites them when told to', async () => {
    const mapPrefix = uniquePrefix('policy');
    const first = await startNode({ mapPrefix, definitions: [{ name: 'billing', duration: '1m' }] });
    await first.semaphores.updateDefinition('billing', { permits: 0 });
    const keep = await startNode({ mapPrefix, definitions: [{ name: 'billing', duration: '1m' }] });
    expect(keep.semaphores.getDefinition('billing')?.permits).toBe(0);
    const overwrite = await startNode({ mapPrefix, definitionsPolicy: 'overwrite', definitions: [{ name: 'billing', duration: '1m' }] });
    expect(overwrite.semaphores.getDefinition('billing')?.permits).toBe(1);
    await Promise.all([first.close(), keep.close(), overwrite.close()]);
  });

  it('uses an existing Hazelcast client and leaves it running on shutdown', async () => {
    const client = await Client.newHazelcastClient(testClientConfig());
    const node = await startNode({ hazelcast: { client, mapPrefix: uniquePrefix('client') } });
    expect(await node.gatekeeper.tryAcquire('billing')).toMatchObject({ granted: true });
    await node.close();
    expect(client.getLifecycleService().isRunning()).toBe(true);
    await client.shutdown();
  });

  it('shuts down the client it created', async () => {
    const node = await startNode({ mapPrefix: uniquePrefix('owned') });
    await node.close();
    expect(await node.gatekeeper.tryAcquire('billing')).toMatchObject({ granted: false, reason: 'NOT_READY' });
  });
});
