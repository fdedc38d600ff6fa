import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  ClusterSingleton, DenyReason, GatekeeperModule, GatekeeperService, InvalidInputError, StoreUnavailableError, TaskHandler, TaskService,
} from '../../lib';

import { TcpProxy } from '../harness/tcp-proxy';
import { CapturingLogger } from '../support/capturing-logger';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { testCluster, uniquePrefix } from '../support/test-cluster';

@Injectable()
class ProductionJob {
  @ClusterSingleton('prod-only', '5s')
  async run(): Promise<string | undefined> {
    return 'ran';
  }

  @ClusterSingleton('prod-only', '5s')
  async again(): Promise<void> {}
}

@Injectable()
class ReportJobs {
  @TaskHandler('report')
  report(): void {}
}

/** Start-up as a new user meets it: where the cluster comes from, what the node says while it waits, bad options. */
describe('GatekeeperModule start-up', () => {
  const quiet = { 'hazelcast.logging.level': 'OFF' };

  it('reaches the cluster named by GATEKEEPER_HZ_MEMBERS and GATEKEEPER_HZ_CLUSTER_NAME when no client config is given', async () => {
    // The global setup exported both for the test member, which listens on a free port, not 127.0.0.1:5701.
    const { addresses } = testCluster();
    expect(addresses).not.toContain('127.0.0.1:5701');
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ hazelcast: { mapPrefix: uniquePrefix('env') }, definitions: [{ name: 'env', duration: '5s' }] })],
    }).setLogger(logger).compile();
    await app.init();
    try {
      expect((await app.get(GatekeeperService).tryAcquire('env')).granted).toBe(true);
      expect(logger.find('log', `Connecting to Hazelcast cluster "${testCluster().clusterName}" at ${addresses.join(', ')}`)).toHaveLength(1);
      // The client's own lines are below its default level (WARN) through the library's bridge: a healthy boot shows none.
      expect(logger.entries.filter((e) => /HazelcastClient|ConnectionManager|ClusterService/.test(e.message))).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('fails start-up after connectTimeout with an error naming the cluster and its members, saying what it waits for meanwhile', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        connectTimeout: '1500ms',
        hazelcast: { clientConfig: { clusterName: 'nowhere', network: { clusterMembers: [nowhere] }, properties: quiet } },
      })],
    }).setLogger(logger).compile();
    const started = Date.now();
    const failure = await app.init().then(() => undefined, (error: unknown) => error);
    const elapsed = Date.now() - started;
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as Error).message).toContain(`Cannot reach Hazelcast cluster "nowhere" at ${nowhere} within 1500ms`);
    expect((failure as Error).message).toContain('GATEKEEPER_HZ_MEMBERS');
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(logger.find('log', `Connecting to Hazelcast cluster "nowhere" at ${nowhere}`)).toHaveLength(1);
    process.stdout.write(`start-up with no cluster: failed after ${elapsed} ms (connectTimeout 1500ms)\n`);
  });

  it('names a cluster-name mismatch as such when a member answered but refused the client, not a missing member', async () => {
    const { addresses } = testCluster();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        connectTimeout: '2s',
        membership: false,
        hazelcast: { clientConfig: { clusterName: 'not-the-test-cluster', network: { clusterMembers: addresses }, properties: quiet } },
      })],
    }).setLogger(new CapturingLogger()).compile();
    const failure = await app.init().then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    const message = (failure as Error).message;
    expect(message).toMatch(/^The Hazelcast member at \S+ answered but refused this client: it is not in a cluster named "not-the-test-cluster"/);
    expect(message).toContain('Set GATEKEEPER_HZ_CLUSTER_NAME, or hazelcast.clientConfig.clusterName, to the name the members were started with');
    expect(message).not.toContain('Start a member');
  });

  it('with connectInBackground, boots at once, denies NOT_READY until the cluster is reachable, then grants', async () => {
    // A port that refuses connections until the proxy is pointed at the member.
    const proxy = await TcpProxy.listen();
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        connectInBackground: true,
        definitions: [{ name: 'late', duration: '5s' }],
        hazelcast: {
          mapPrefix: uniquePrefix('background'),
          clientConfig: { clusterName: testCluster().clusterName, network: { clusterMembers: [proxy.address] }, properties: quiet },
        },
      })],
    }).setLogger(logger).compile();
    const booted = Date.now();
    await app.init();
    expect(Date.now() - booted).toBeLessThan(1000);
    const gatekeeper = app.get(GatekeeperService);
    try {
      expect(logger.find('log', 'Starting without waiting for the cluster (connectInBackground)')).toHaveLength(1);
      const early = await gatekeeper.tryAcquire('late');
      expect(early.granted ? 'granted' : early.reason).toBe(DenyReason.NOT_READY);
      proxy.setTarget(testCluster().addresses[0]);
      await eventually('the background start to connect and grant', async () => (await gatekeeper.tryAcquire('late')).granted, { timeoutMs: 15_000, intervalMs: 100 });
    } finally {
      await app.close();
      await proxy.close();
    }
  });

  it('with connectInBackground, shuts down promptly while still waiting for the cluster', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        connectInBackground: true,
        hazelcast: { clientConfig: { clusterName: 'nowhere', network: { clusterMembers: [nowhere] }, properties: quiet } },
      })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    const closing = Date.now();
    await app.close();
    expect(Date.now() - closing).toBeLessThan(2000);
    const denied = await app.get(GatekeeperService).tryAcquire('anything');
    expect(denied.granted).toBe(false);
  });

  it('with connectInBackground and only some capabilities on the cluster, shuts down promptly while still waiting for it', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        connectInBackground: true,
        backend: 'memory',
        backends: { presence: 'hazelcast', schedules: 'hazelcast' },
        hazelcast: { clientConfig: { clusterName: 'nowhere', network: { clusterMembers: [nowhere] }, properties: quiet } },
      })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    // Permits are in memory: the start got past them and waits on presence's backend.
    const closing = Date.now();
    await app.close();
    expect(Date.now() - closing).toBeLessThan(3000);
  });

  it('with connectInBackground and task handlers, shuts down promptly while still waiting for the cluster', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        connectInBackground: true,
        shutdownTimeout: '1s',
        hazelcast: { clientConfig: { clusterName: 'nowhere', network: { clusterMembers: [nowhere] }, properties: quiet } },
      })],
      providers: [ReportJobs],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    const early = app.get(TaskService).submit({ type: 'report', name: 'daily' }).then(() => 'submitted', (error: Error) => error.message); // waits for the cluster
    const closing = Date.now();
    await app.close();
    expect(Date.now() - closing).toBeLessThan(3000);
    expect(await early).not.toBe('submitted');
  });

  it('rejects an unknown key returned by a forRootAsync factory, naming it', async () => {
    const compile = (options: object) =>
      Test.createTestingModule({ imports: [GatekeeperModule.forRootAsync({ useFactory: () => options as never })] })
        .setLogger(new CapturingLogger()).compile().then(() => undefined, (error: unknown) => error);
    const unknown = await compile({ backend: 'memory', identity: { group: 'a' }, defintions: [] });
    expect(unknown).toBeInstanceOf(InvalidInputError);
    expect((unknown as Error).message).toBe(
      'GatekeeperModule options: invalid defintions: is not an option (expected one of identity, definitions, definitionsPolicy, ' +
        'autoDefine, backend, backends, hazelcast, postgres, redis, connectTimeout, connectInBackground, shutdownTimeout, maxClockSkew, quorum, stateDumpInterval, storeTimeout, clock, membership, elections, allocations, tasks, schedules, metrics, tracing, admin)',
    );
    expect(((await compile({ backend: 'memory', identity: { grup: 'a' } })) as Error).message).toContain('invalid identity.grup');
    expect(((await compile({ backend: 'memory', hazelcast: { members: 'x' } })) as Error).message).toContain('invalid hazelcast.members');
    expect(((await compile({ backend: 'memory', isGlobal: true })) as Error).message).toContain('pass it next to useFactory');
    // admin is an option like any other: from the factory, and checked with the others.
    expect(((await compile({ backend: 'memory', admin: { token: 't' } })) as Error).message).toContain('invalid admin.token');
    expect(((await compile({ backend: 'memory', identity: { group: undefined, acquirer: '' } })) as Error).message)
      .toContain('invalid identity.acquirer: must be a non-empty string');
  });

  it('accepts forRoot with the admin extra (the module strips it from its options)', async () => {
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', admin: { token: 'secret-token-1234567890' } })],
    }).setLogger(new CapturingLogger()).compile();
    await app.init();
    await app.close();
  });

  it('warns once, at start-up, for each decorated semaphore this node can never run', async () => {
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        backend: 'memory',
        identity: { group: 'default', acquirer: 'node-1' },
        definitions: [{ name: 'prod-only', duration: '5s', groupPattern: 'production' }],
      })],
      providers: [ProductionJob],
    }).setLogger(logger).compile();
    await app.init();
    try {
      const warnings = logger.find('warn', 'can never run on this node');
      expect(warnings).toEqual([
        'ProductionJob.run can never run on this node (group "default", acquirer "node-1"): semaphore "prod-only": ' +
          'its groupPattern "production" does not admit group "default". Set this node\'s identity, or edit the definition, if it should',
      ]);
    } finally {
      await app.close();
    }
  });

  it('warns at start-up of a semaphore that no live instance can run, naming the live instances presence knows', async () => {
    const logger = new CapturingLogger();
    const app = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        backend: 'memory',
        identity: { group: 'dr-site', acquirer: 'dr-1' },
        membership: { interval: '1s' },
        definitions: [{ name: 'prod-only', duration: '5s', groupPattern: 'production' }, { name: 'anywhere', duration: '5s' }],
      })],
    }).setLogger(logger).compile();
    await app.init();
    try {
      expect(logger.find('warn', 'runs nowhere')).toEqual([
        '"prod-only" runs nowhere: its groupPattern "production" and acquirerPattern ".*" admit none of the 1 live instance(s) ' +
          '(dr-1 (group dr-site)). Edit the definition or start a node it admits',
      ]);
    } finally {
      await app.close();
    }
  });
});
